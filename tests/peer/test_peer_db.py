"""The poll query and the silent-ack write against real SQLite files."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from mnemara.peer import db
from mnemara.peer.db import Filter, PeerDbError, ack_rows, read_pending, statuses

ME = Filter(role="eng", senders=("lead", "qa"))


def make_db(path: Path, rows: list[tuple[str, str | None, object]]) -> list[int]:
    conn = sqlite3.connect(path, isolation_level=None)
    db.create_table(conn)
    ids = [db.insert_row(conn, sender, to, json.dumps(payload)) for sender, to, payload in rows]
    conn.close()
    return ids


def test_filter_addressed_and_broadcast_from_listed_senders(tmp_path: Path) -> None:
    path = tmp_path / "peer.db"
    ids = make_db(path, [
        ("lead", "eng", {"n": 1}),        # addressed to us
        ("lead", None, {"n": 2}),         # broadcast from a listed sender
        ("stranger", None, {"n": 3}),     # broadcast from someone we do not watch
        ("lead", "writer", {"n": 4}),     # addressed to another panel
        ("stranger", "eng", {"n": 5}),    # addressed to us by anyone
        ("eng", None, {"n": 6}),          # our own broadcast
        ("qa", "", {"n": 7}),             # empty recipient counts as broadcast
    ])
    got = read_pending(path, ME, 0, 100)
    assert [r.id for r in got.rows] == [ids[0], ids[1], ids[4], ids[6]]
    assert got.rows[1].is_broadcast and not got.rows[0].is_broadcast
    assert got.rows[0].payload == {"n": 1}
    assert got.has_completed_at and not got.full_page


def test_done_rows_and_watermark_and_limit(tmp_path: Path) -> None:
    path = tmp_path / "peer.db"
    ids = make_db(path, [("lead", "eng", {"n": i}) for i in range(5)])
    ack_rows(path, [ids[1]])
    assert [r.id for r in read_pending(path, ME, 0, 100).rows] == [ids[0], ids[2], ids[3], ids[4]]
    assert [r.id for r in read_pending(path, ME, ids[2], 100).rows] == [ids[3], ids[4]]
    page = read_pending(path, ME, 0, 2)
    assert [r.id for r in page.rows] == [ids[0], ids[2]] and page.full_page


def test_poll_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "peer.db"
    make_db(path, [("lead", "eng", {"n": 1})])
    before = path.read_bytes()
    for _ in range(3):
        read_pending(path, ME, 0, 100)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["peer.db"]


def test_ack_sets_done_and_completed_at_only_for_pending(tmp_path: Path) -> None:
    path = tmp_path / "peer.db"
    ids = make_db(path, [("lead", "eng", {"n": i}) for i in range(3)])
    assert ack_rows(path, [ids[0], ids[1]]) == 2
    assert ack_rows(path, [ids[0]]) == 0  # already done: untouched
    st = statuses(path)
    assert st[ids[0]][0] == "done" and st[ids[0]][1]
    assert st[ids[2]] == ("pending", None)


def test_missing_file_is_reported_and_not_created(tmp_path: Path) -> None:
    path = tmp_path / "nope.db"
    with pytest.raises(PeerDbError) as err:
        read_pending(path, ME, 0, 10)
    assert err.value.key == "missing" and str(path) in err.value.message
    with pytest.raises(PeerDbError):
        ack_rows(path, [1])
    assert not path.exists()


def test_not_a_database_and_no_table(tmp_path: Path) -> None:
    junk = tmp_path / "junk.db"
    junk.write_text("this is not sqlite" * 100)
    with pytest.raises(PeerDbError) as err:
        read_pending(junk, ME, 0, 10)
    assert err.value.key == "not_a_database"
    empty = tmp_path / "empty.db"
    sqlite3.connect(empty).execute("CREATE TABLE other (x)").connection.close()
    with pytest.raises(PeerDbError) as err:
        read_pending(empty, ME, 0, 10)
    assert err.value.key == "no_table" and "returns" in err.value.message


def test_missing_required_column_names_it(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE returns (id INTEGER PRIMARY KEY, agent_role TEXT, payload_json TEXT, status TEXT)")
    conn.execute("INSERT INTO returns (agent_role, payload_json, status) VALUES ('lead', '{}', 'pending')")
    conn.commit()
    conn.close()
    with pytest.raises(PeerDbError) as err:
        read_pending(path, ME, 0, 10)
    assert err.value.key == "missing_column" and "recipient_role" in err.value.message


def test_optional_columns_absent_and_type_column(tmp_path: Path) -> None:
    path = tmp_path / "lean.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE returns (id INTEGER PRIMARY KEY AUTOINCREMENT, agent_role TEXT, recipient_role TEXT,"
                 " payload_json TEXT, status TEXT, message_type TEXT)")
    conn.execute("INSERT INTO returns (agent_role, recipient_role, payload_json, status, message_type)"
                 " VALUES ('lead', 'eng', '{\"type\": \"ignored\"}', 'pending', 'heartbeat')")
    conn.commit()
    conn.close()
    got = read_pending(path, ME, 0, 10)
    assert not got.has_completed_at
    row = got.rows[0]
    assert row.message_type == "heartbeat" and row.task_id is None and row.submitted_at is None
    assert ack_rows(path, [row.id], with_completed_at=False) == 1
    assert read_pending(path, ME, 0, 10).rows == []


def test_locked_by_writer_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "peer.db"
    make_db(path, [("lead", "eng", {"n": 1})])
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(PeerDbError) as err:
            read_pending(path, ME, 0, 10)
        assert err.value.key == "locked"
    finally:
        holder.execute("COMMIT")
        holder.close()
    assert len(read_pending(path, ME, 0, 10).rows) == 1


def test_malformed_payload_is_kept_raw(tmp_path: Path) -> None:
    path = tmp_path / "peer.db"
    conn = sqlite3.connect(path, isolation_level=None)
    db.create_table(conn)
    rid = db.insert_row(conn, "lead", "eng", "{not json")
    conn.close()
    row = read_pending(path, ME, 0, 10).rows[0]
    assert row.id == rid and row.payload is None and row.payload_json == "{not json"
    assert "not valid JSON" in (row.payload_error or "") and row.message_type is None


def test_scanned_to_lets_the_watermark_pass_rows_for_others(tmp_path: Path) -> None:
    path = tmp_path / "peer.db"
    ids = make_db(path, [("lead", "writer", {"n": i}) for i in range(4)] + [("lead", "eng", {"n": 9})])
    extra = make_db(path, [("lead", "writer", {"n": 10}), ("qa", "eng", {"n": 11}), ("lead", "writer", {"n": 12})])
    page = read_pending(path, ME, 0, 100)
    assert [r.id for r in page.rows] == [ids[4], extra[1]] and page.scanned_to == extra[2]
    full = read_pending(path, ME, 0, 1)  # a full page accounts only up to its last row
    assert full.full_page and full.scanned_to == ids[4]
    ack_rows(path, [ids[4], extra[1]])
    empty = read_pending(path, ME, 0, 100)
    assert empty.rows == [] and empty.scanned_to == extra[2]
    assert read_pending(path, ME, extra[2] + 5, 100).scanned_to == extra[2] + 5


def test_blob_and_null_fields_are_read_as_text(tmp_path: Path) -> None:
    path = tmp_path / "peer.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE returns (id INTEGER PRIMARY KEY AUTOINCREMENT, agent_role, recipient_role,"
                 " task_id, payload_json, status, submitted_at, completed_at)")
    conn.execute("INSERT INTO returns (agent_role, recipient_role, payload_json, status, submitted_at) "
                 "VALUES (?, 'eng', ?, 'pending', 'now')", (b"lead", b'{"type": "x", "k": 1}'))
    conn.execute("INSERT INTO returns (agent_role, recipient_role, payload_json, status, submitted_at) "
                 "VALUES (NULL, 'eng', 'null', 'pending', 'now')")
    conn.commit()
    conn.close()
    a, b = read_pending(path, ME, 0, 10).rows
    assert a.agent_role == "lead" and a.payload == {"type": "x", "k": 1} and a.message_type == "x"
    assert b.agent_role == "" and b.payload is None and b.payload_error is None


def test_paths_with_spaces_hash_and_question_mark(tmp_path: Path) -> None:
    folder = tmp_path / "my peers #1"
    folder.mkdir()
    path = folder / "bus?v=2 %20.db"
    ids = make_db(path, [("lead", "eng", {"n": 1})])
    assert [r.id for r in read_pending(path, ME, 0, 10).rows] == ids
    assert ack_rows(path, ids) == 1
    assert sorted(p.name for p in folder.iterdir()) == ["bus?v=2 %20.db"]
