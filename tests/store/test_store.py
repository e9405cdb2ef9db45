"""turns.sqlite: rows and blocks, the rolling window, pins, and refusing foreign files."""
from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from mnemara.core.errors import StoreError, UsageError
from mnemara.store.schema import SCHEMA_VERSION
from mnemara.store.turns import TurnStore


@pytest.fixture
def store(tmp_path: Path):
    with TurnStore(tmp_path / "turns.sqlite") as s:
        yield s


def test_blocks_kept_distinct(store: TurnStore) -> None:
    blocks = [
        {"type": "thinking", "thinking": "hmm"},
        {"type": "text", "text": "Let me look."},
        {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/a"}},
        {"type": "tool_result", "tool_use_id": "t1", "content": "data"},
    ]
    rid = store.append("assistant", blocks, meta={"usage": {"input_tokens": 5}})
    t = store.get(rid)
    assert t.blocks == blocks and t.meta["usage"]["input_tokens"] == 5 and t.tokens > 0
    assert t.text == "Let me look."


def test_window_row_cap_fifo_and_pins(store: TurnStore) -> None:
    for i in range(30):
        store.append("user", f"m{i}")
    pinned_id = store.get(3).id
    store.pin(pinned_id, "keep")
    w = store.window(max_turns=5, max_tokens=10_000)
    assert [t.text for t in w.pinned] == ["m2"]
    assert [t.text for t in w.rows] == ["m25", "m26", "m27", "m28", "m29"]
    store.trim(w)
    assert store.counts()["live"] == 5
    assert store.window(5, 10_000).pinned[0].text == "m2"  # pinned rows are never evicted


def test_window_token_cap_counts_pins(store: TurnStore) -> None:
    store.upsert_slot("big", "system", "x" * 400)  # 100 tokens
    for i in range(10):
        store.append("user", "y" * 40)  # 10 tokens each
    w = store.window(max_turns=50, max_tokens=150)
    assert len(w.pinned) == 1 and len(w.rows) == 5 and w.tokens == 150


def test_row_cap_slack_only_with_token_headroom(store: TurnStore) -> None:
    for _ in range(10):
        store.append("user", "z" * 40)  # 10 tokens each
    assert len(store.window(4, 1000, slack=3).rows) == 7  # 70 tokens, far under half of 1000
    assert len(store.window(4, 120, slack=3).rows) == 5  # a 6th row would reach half the cap
    assert len(store.window(4, 1000, slack=0).rows) == 4


def test_upsert_slot_updates_in_place(store: TurnStore) -> None:
    a = store.upsert_slot("health", "system", "HP 73")
    b = store.upsert_slot("stamina", "system", "ST 41")
    again = store.upsert_slot("health", "system", "HP 50")
    assert again == a
    assert [(t.pin_label, t.slot_pos, t.text) for t in store.pinned()] == [("health", 0, "HP 50"), ("stamina", 1, "ST 41")]
    store.move_slot("stamina", 0)
    assert [t.pin_label for t in store.pinned()] == ["stamina", "health"]
    store.rename_slot("health", "hp")
    assert [t.pin_label for t in store.pinned()] == ["stamina", "hp"]
    assert store.get(b).slot_pos == 0
    for bad in ("", "a b", "../x", "x" * 65):
        with pytest.raises(UsageError):
            store.upsert_slot(bad, "system", "v")
    with pytest.raises(UsageError):
        store.rename_slot("hp", "stamina")
    with pytest.raises(UsageError):
        store.move_slot("hp", 5)


def test_clear_keeps_pins_and_history(store: TurnStore) -> None:
    store.upsert_slot("s", "system", "v")
    for i in range(4):
        store.append("user", f"m{i}")
    rows, tokens = store.clear()
    assert rows == 4 and tokens > 0
    w = store.window(20, 10_000)
    assert len(w.pinned) == 1 and w.rows == []
    assert len(store.history()) == 5


def test_set_text_keeps_other_blocks(store: TurnStore) -> None:
    rid = store.append("assistant", [{"type": "text", "text": "old"}, {"type": "tool_use", "id": "1", "name": "Bash", "input": {}}])
    store.set_text(rid, "new")
    assert [b["type"] for b in store.get(rid).blocks] == ["text", "tool_use"]
    assert store.get(rid).text == "new"


def test_corrupt_file_refused_and_untouched(tmp_path: Path) -> None:
    p = tmp_path / "turns.sqlite"
    p.write_bytes(b"this is not sqlite" * 100)
    before = p.read_bytes()
    with pytest.raises(StoreError, match="not a readable SQLite database"):
        TurnStore(p)
    assert p.read_bytes() == before


def test_foreign_sqlite_refused_and_untouched(tmp_path: Path) -> None:
    p = tmp_path / "turns.sqlite"
    conn = sqlite3.connect(p)
    conn.execute("CREATE TABLE notes (id INTEGER, body TEXT)")
    conn.execute("INSERT INTO notes VALUES (1, 'mine')")
    conn.commit()
    conn.close()
    before = p.read_bytes()
    with pytest.raises(StoreError, match="not a Mnemara turns store"):
        TurnStore(p)
    assert p.read_bytes() == before


def test_newer_schema_refused(tmp_path: Path) -> None:
    p = tmp_path / "turns.sqlite"
    TurnStore(p).close()
    conn = sqlite3.connect(p)
    conn.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(SCHEMA_VERSION + 1),))
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="newer"):
        TurnStore(p)


def test_corrupt_store_through_cli(cli, mnemara_home: Path) -> None:
    cli("init", "--instance", "w")
    p = mnemara_home / "w" / "turns.sqlite"
    p.write_bytes(b"garbage" * 1000)
    r = cli("show", "-i", "w")
    assert r.returncode == 2 and "not a readable SQLite database" in r.stderr
    assert p.read_bytes() == b"garbage" * 1000


def test_migrate_is_idempotent(tmp_path: Path) -> None:
    p = tmp_path / "turns.sqlite"
    with TurnStore(p) as s:
        assert s.migrate() == []
        assert s.schema_version() == SCHEMA_VERSION


def test_row_from_other_process_visible_to_next_window(store: TurnStore) -> None:
    store.append("user", "first")
    code = (
        "import sys; from mnemara.store.turns import TurnStore\n"
        "s = TurnStore(sys.argv[1]); s.append('assistant', 'written elsewhere'); s.close()"
    )
    from tests.conftest import cli_env

    subprocess.run([sys.executable, "-c", code, str(store.path)], check=True, env=cli_env())
    assert [t.text for t in store.window(20, 10_000).rows] == ["first", "written elsewhere"]
