"""Issue 28 item 6: the store's public transaction() and redact(), used by forget instead of its privates."""
from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from mnemara.core.errors import StoreUnavailable
from mnemara.store.health import BUSY_ENV
from mnemara.store.turns import TurnStore

SECRET = "hunter2-orange-kettle"


@pytest.fixture
def store(tmp_path: Path):
    with TurnStore(tmp_path / "turns.sqlite") as s:
        yield s


def test_writes_in_one_transaction_land_together(store: TurnStore) -> None:
    first = store.append("user", "one")
    with store.transaction() as conn:
        conn.execute("UPDATE turns SET evicted=1 WHERE id=?", (first,))
        conn.execute("INSERT INTO turns(role, content, tokens, created_at) VALUES ('user', '[]', 0, 'now')")
    assert store.counts()["stored"] == 2 and store.get(first).evicted


def test_an_error_inside_rolls_every_write_back(store: TurnStore) -> None:
    first = store.append("user", "one")
    with pytest.raises(RuntimeError, match="changed my mind"):
        with store.transaction() as conn:
            conn.execute("UPDATE turns SET evicted=1 WHERE id=?", (first,))
            conn.execute("INSERT INTO turns(role, content, tokens, created_at) VALUES ('user', '[]', 0, 'now')")
            raise RuntimeError("changed my mind")
    assert store.counts()["stored"] == 1 and not store.get(first).evicted
    store.append("user", "two")  # the store is usable afterwards (no transaction left open)


def test_a_lock_held_by_another_process_is_one_line_and_nothing_is_written(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv(BUSY_ENV, "0.2")
    db = tmp_path / "turns.sqlite"
    with TurnStore(db) as store:
        store.append("user", "before")
        holder = sqlite3.connect(db, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        try:
            with pytest.raises(StoreUnavailable, match="locked by another process") as refused:
                with store.transaction() as conn:
                    conn.execute("DELETE FROM turns")
            assert "\n" not in str(refused.value)
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        assert [t.text for t in store.history()] == ["before"]


def test_a_closed_store_says_so(tmp_path: Path) -> None:
    store = TurnStore(tmp_path / "turns.sqlite")
    assert not store.closed
    store.close()
    assert store.closed
    with pytest.raises(StoreUnavailable, match="this store is closed"):
        with store.transaction():
            pass


def _file_bytes(db: Path) -> bytes:
    return b"".join(p.read_bytes() for p in (db, db.with_name(db.name + "-wal")) if p.exists())


def test_redact_rewrites_rows_everywhere_and_the_old_text_leaves_the_file(store: TurnStore) -> None:
    live = store.append("user", f"my password is {SECRET} ok " * 20, meta={"note": SECRET})
    evicted = store.append("assistant", f"noted: {SECRET}")
    pinned = store.append("user", f"pinned {SECRET}")
    untouched = store.append("user", "nothing to see")
    store.evict([evicted])
    store.pin(pinned, "keep")
    tokens_before = store.get(live).tokens
    assert SECRET.encode() in _file_bytes(store.path)

    found = store.redact([live, evicted, pinned, 9999], lambda raw: raw.replace(SECRET, "[redacted]"))

    assert found == [live, evicted, pinned]  # 9999 does not exist
    assert store.get(live).text.startswith("my password is [redacted] ok")
    assert store.get(live).meta == {"note": "[redacted]"}
    assert store.get(live).tokens < tokens_before  # recounted from the new text
    assert store.get(evicted).evicted and store.get(pinned).pin_label == "keep"
    assert store.get(untouched).text == "nothing to see"
    assert SECRET.encode() not in _file_bytes(store.path)  # vacuumed: no old page image keeps it


def test_redact_that_fails_midway_changes_nothing(store: TurnStore) -> None:
    ids = [store.append("user", f"row {i} {SECRET}") for i in range(3)]
    seen = []

    def rewrite(raw: str) -> str:
        seen.append(raw)
        if len(seen) == 3:  # the second row's content
            raise ValueError("cannot rewrite this")
        return raw.replace(SECRET, "x")

    with pytest.raises(ValueError, match="cannot rewrite"):
        store.redact(ids, rewrite)
    assert all(SECRET in store.get(i).text for i in ids)
