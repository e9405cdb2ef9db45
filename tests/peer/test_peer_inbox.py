"""PeerInbox logic against a real SQLite file, with a recording deliver callable."""
from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from mnemara.core.config import Config
from mnemara.core.debuglog import read_events
from mnemara.peer import PeerInbox, db
from mnemara.peer.db import statuses
from tests.peer_support import Recorder, add, more_polls, new_db, problems


def make_inbox(path: Path, rec: Recorder, log: Path, **kw) -> PeerInbox:
    opts = dict(db_path=path, role="eng", senders=("lead",), deliver=rec, debug_log=log,
                silent_types=("heartbeat",), interval=0.05, is_idle=lambda: not rec.busy)
    opts.update(kw)
    return PeerInbox(**opts)


@pytest.fixture
def log(tmp_path: Path) -> Path:
    return tmp_path / "debug.log"


async def test_batched_delivery_once_and_silent_ack(tmp_path: Path, log: Path) -> None:
    path = new_db(tmp_path / "peer.db")
    to_us = add(path, "lead", "eng", {"ask": "a"})
    bcast = add(path, "lead", None, {"ask": "b"})
    other = add(path, "lead", "writer", {"ask": "c"})
    hb = add(path, "lead", "eng", {"type": "heartbeat"})
    rec = Recorder()
    inbox = make_inbox(path, rec, log)
    await inbox.step()
    await inbox.step()
    assert rec.ids_per_turn() == [[to_us, bcast]]
    st = statuses(path)
    assert st[hb][0] == "done" and st[hb][1]
    assert st[to_us] == ("pending", None) and st[bcast] == ("pending", None)  # the agent acks these
    assert st[other] == ("pending", None)
    assert inbox.stats.silent_acked == 1 and inbox.stats.delivered_turns == 1
    assert inbox.watermark == hb and inbox.waiting == []
    later = add(path, "lead", "eng", {"ask": "d"})
    await inbox.step()
    assert rec.ids_per_turn() == [[to_us, bcast], [later]]
    assert problems(log) == []


async def test_one_turn_per_row_when_batch_is_off(tmp_path: Path, log: Path) -> None:
    path = new_db(tmp_path / "peer.db")
    ids = [add(path, "lead", "eng", {"n": i}) for i in range(3)]
    rec = Recorder()
    await make_inbox(path, rec, log, batch=False).step()
    assert rec.ids_per_turn() == [[i] for i in ids]


async def test_failed_turn_is_delivered_again_and_nothing_acked(tmp_path: Path, log: Path) -> None:
    path = new_db(tmp_path / "peer.db")
    a = add(path, "lead", "eng", {"n": 1})
    b = add(path, "lead", "eng", {"n": 2})
    rec = Recorder(fail=2)
    inbox = make_inbox(path, rec, log, interval=0.01)
    for _ in range(3):
        await inbox.step()
        await asyncio.sleep(0.02)  # past the hold after a failure
    assert rec.ids_per_turn() == [[a, b]]
    assert inbox.stats.failed_turns == 2
    kinds = [p["problem"] for p in problems(log)]
    assert kinds == ["delivery_failed"]  # logged once for two failures
    assert any(e["event"] == "peer_poll_recovered" for e in read_events(log))
    assert statuses(path)[a] == ("pending", None)


async def test_per_row_failure_keeps_later_rows_and_delivers_each_once(tmp_path: Path, log: Path) -> None:
    path = new_db(tmp_path / "peer.db")
    ids = [add(path, "lead", "eng", {"n": i}) for i in range(3)]
    rec = Recorder()
    calls = {"n": 0}

    async def flaky(text: str) -> None:
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("second turn fails")
        await rec(text)

    inbox = make_inbox(path, rec, log, batch=False, deliver=flaky, interval=0.01)
    await inbox.step()
    assert rec.ids() == [ids[0]] and inbox.watermark == ids[0]
    await asyncio.sleep(0.02)
    await inbox.step()
    assert rec.ids() == ids


async def test_off_means_no_delivery_and_no_ack_but_counts(tmp_path: Path, log: Path) -> None:
    path = new_db(tmp_path / "peer.db")
    a = add(path, "lead", "eng", {"n": 1})
    hb = add(path, "lead", "eng", {"type": "heartbeat"})
    rec = Recorder()
    seen: list[str] = []
    inbox = make_inbox(path, rec, log, enabled=False, on_change=lambda i: seen.append(i.state_text))
    await inbox.step()
    assert rec.turns == [] and statuses(path)[hb] == ("pending", None)
    assert inbox.state_text == "⚡ Inbox: OFF · 2 waiting"
    assert inbox.toggle() is True
    await inbox.step()
    assert rec.ids() == [a] and statuses(path)[hb][0] == "done"
    assert inbox.state_text == "⚡ Inbox: ON"
    assert "⚡ Inbox: ON · 2 waiting" in seen  # the status line was told about the toggle


async def test_busy_session_defers_delivery(tmp_path: Path, log: Path) -> None:
    path = new_db(tmp_path / "peer.db")
    a = add(path, "lead", "eng", {"n": 1})
    rec = Recorder()
    idle = {"v": False}
    inbox = make_inbox(path, rec, log, is_idle=lambda: idle["v"])
    await inbox.step()
    assert rec.turns == [] and [r.id for r in inbox.waiting] == [a]
    idle["v"] = True
    await inbox.step()
    assert rec.ids() == [a]


async def test_missing_file_logged_once_then_recovers(tmp_path: Path, log: Path) -> None:
    path = tmp_path / "later.db"
    rec = Recorder()
    inbox = make_inbox(path, rec, log)
    for _ in range(5):
        await inbox.step()
    assert [p["problem"] for p in problems(log)] == ["missing"]
    assert "does not exist" in problems(log)[0]["message"]
    assert "peer db missing" in inbox.state_text
    assert not path.exists()
    new_db(path)
    a = add(path, "lead", "eng", {"n": 1})
    await inbox.step()
    assert rec.ids() == [a] and inbox.problems == {}
    assert [e["problem"] for e in read_events(log) if e["event"] == "peer_poll_recovered"] == ["missing"]


async def test_lock_schema_and_malformed_each_logged_once(tmp_path: Path, log: Path) -> None:
    path = new_db(tmp_path / "peer.db")
    bad = add(path, "lead", "eng", "{oops", raw=True)
    rec = Recorder()
    inbox = make_inbox(path, rec, log)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    for _ in range(3):
        await inbox.step()
    holder.execute("COMMIT")
    holder.close()
    assert rec.turns == []
    await inbox.step()
    await inbox.step()
    assert rec.ids() == [bad] and "{oops" in rec.turns[0]
    kinds = [p["problem"] for p in problems(log)]
    assert kinds == ["locked", f"malformed_payload:{bad}"]


async def test_schema_missing_column_logged_once_nothing_touched(tmp_path: Path, log: Path) -> None:
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE returns (id INTEGER PRIMARY KEY, agent_role TEXT, payload_json TEXT, status TEXT)")
    conn.execute("INSERT INTO returns (agent_role, payload_json, status) VALUES ('lead', '{}', 'pending')")
    conn.commit()
    conn.close()
    before = path.read_bytes()
    rec = Recorder()
    inbox = make_inbox(path, rec, log)
    for _ in range(4):
        await inbox.step()
    assert rec.turns == [] and path.read_bytes() == before
    assert [p["problem"] for p in problems(log)] == ["missing_column"]
    assert "recipient_role" in problems(log)[0]["message"]


async def test_silent_ack_without_completed_at_column(tmp_path: Path, log: Path) -> None:
    path = tmp_path / "lean.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE returns (id INTEGER PRIMARY KEY AUTOINCREMENT, agent_role TEXT, "
                 "recipient_role TEXT, payload_json TEXT, status TEXT)")
    conn.execute("INSERT INTO returns (agent_role, recipient_role, payload_json, status) "
                 "VALUES ('lead', 'eng', '{\"type\": \"heartbeat\"}', 'pending')")
    conn.commit()
    conn.close()
    rec = Recorder()
    inbox = make_inbox(path, rec, log)
    await inbox.step()
    await inbox.step()
    row = sqlite3.connect(path).execute("SELECT status FROM returns").fetchone()
    assert row == ("done",) and rec.turns == []
    assert [p["problem"] for p in problems(log)] == ["missing_completed_at"]


async def test_failed_silent_ack_is_retried_without_redelivering_others(
        tmp_path: Path, log: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = new_db(tmp_path / "peer.db")
    hb = add(path, "lead", "eng", {"type": "heartbeat"})
    a = add(path, "lead", "eng", {"n": 1})
    rec = Recorder()
    real_ack = db.ack_rows
    calls = {"n": 0}

    def flaky_ack(*args, **kw):
        calls["n"] += 1
        if calls["n"] == 1:
            raise db.PeerDbError("locked", "peer db is locked by a writer; will retry")
        return real_ack(*args, **kw)

    inbox = make_inbox(path, rec, log)
    monkeypatch.setattr(db, "ack_rows", flaky_ack)
    await inbox.step()
    assert rec.ids() == [a] and statuses(path)[hb][0] == "pending"
    assert inbox.watermark == hb - 1
    await inbox.step()
    assert rec.ids() == [a]  # delivered once, not again
    assert statuses(path)[hb][0] == "done" and inbox.watermark == a
    assert [p["problem"] for p in problems(log)] == ["ack_failed"]


async def test_runner_loop_polls_delivers_and_toggles_live(tmp_path: Path, log: Path) -> None:
    path = new_db(tmp_path / "peer.db")
    rec = Recorder()
    inbox = make_inbox(path, rec, log, interval=0.05)
    inbox.start()
    try:
        a = add(path, "lead", "eng", {"n": 1})
        for _ in range(100):
            if rec.turns:
                break
            await asyncio.sleep(0.02)
        assert rec.ids() == [a]
        inbox.set_enabled(False)
        b = add(path, "lead", None, {"n": 2})
        await more_polls(inbox)
        assert rec.ids() == [a] and "1 waiting" in inbox.state_text
        inbox.set_enabled(True)
        for _ in range(100):
            if len(rec.turns) == 2:
                break
            await asyncio.sleep(0.02)
        assert rec.ids() == [a, b]
    finally:
        await inbox.aclose()
    assert not inbox.running


def test_from_config_uses_instance_name_and_relative_path(tmp_path: Path) -> None:
    cfg = Config.from_dict({"peer_poll_enabled": True, "peer_db_path": "bus/peer.db",
                            "peer_poll_roles": "lead, qa", "peer_poll_interval_seconds": 7,
                            "peer_poll_batch": False, "peer_poll_silent_types": "heartbeat,ack"})
    inbox = PeerInbox.from_config(cfg, "scratch", deliver=Recorder(), instance_root=tmp_path)
    assert inbox.role == "scratch" and inbox.db_path == tmp_path / "bus" / "peer.db"
    assert inbox.filter.senders == ("lead", "qa") and inbox.interval == 7 and not inbox.batch
    assert inbox.silent_types == {"heartbeat", "ack"}
    cfg2 = Config.from_dict({"peer_role": "reviewer", "peer_db_path": "~/p.db"})
    inbox2 = PeerInbox.from_config(cfg2, "scratch", deliver=Recorder())
    assert inbox2.role == "reviewer" and inbox2.db_path == Path.home() / "p.db"


async def test_watermark_passes_rows_meant_for_other_panels(tmp_path: Path, log: Path) -> None:
    path = new_db(tmp_path / "peer.db")
    ids = [add(path, "lead", "writer", {"n": i}) for i in range(5)]
    rec = Recorder()
    inbox = make_inbox(path, rec, log)
    await inbox.step()
    assert inbox.watermark == ids[-1] and rec.turns == []
    assert all(st == ("pending", None) for st in statuses(path).values())


def test_bad_peer_config_is_refused_naming_the_field(tmp_path: Path) -> None:
    from mnemara.core.errors import ConfigError

    for raw, field in [({"peer_poll_interval_seconds": 0}, "peer_poll_interval_seconds"),
                       ({"peer_poll_interval_seconds": "soon"}, "peer_poll_interval_seconds"),
                       ({"peer_poll_roles": 5}, "peer_poll_roles"),
                       ({"peer_poll_batch": "sometimes"}, "peer_poll_batch")]:
        with pytest.raises(ConfigError) as err:
            Config.from_dict(raw)
        assert f"'{field}" in err.value.message
    with pytest.raises(ValueError):
        PeerInbox(db_path=tmp_path / "p.db", role="eng", deliver=Recorder(), max_rows_per_turn=0)


async def test_db_path_that_is_a_folder_or_empty_is_logged_once(tmp_path: Path, log: Path) -> None:
    rec = Recorder()
    folder = make_inbox(tmp_path, rec, log)
    empty = PeerInbox.from_config(Config.from_dict({"peer_poll_enabled": True}), "eng", deliver=rec, debug_log=log)
    for _ in range(3):
        await folder.step()
        await empty.step()
    assert [p["problem"] for p in problems(log)] == ["not_a_file", "no_path"]
    assert "peer db not a file" in folder.state_text and "no peer_db_path" in empty.state_text
    assert rec.turns == []


async def test_a_silent_row_that_cannot_be_acked_does_not_starve_later_rows(
        tmp_path: Path, log: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = new_db(tmp_path / "peer.db")
    hb = add(path, "lead", "eng", {"type": "heartbeat"})
    loud = [add(path, "lead", "eng", {"n": i}) for i in range(5)]

    def read_only_db(*args, **kw):
        raise db.PeerDbError("cannot_open", "peer db is read-only for this panel")

    monkeypatch.setattr(db, "ack_rows", read_only_db)
    rec = Recorder()
    inbox = make_inbox(path, rec, log, max_rows_per_turn=2)
    await inbox.step()
    await inbox.step()
    assert sorted(rec.ids()) == loud and len(rec.ids()) == 5  # each once, none held back
    assert statuses(path)[hb] == ("pending", None) and inbox.watermark == hb - 1
    assert [p["problem"] for p in problems(log)] == ["ack_failed"]
