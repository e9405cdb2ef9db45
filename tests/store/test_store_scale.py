"""turns.sqlite at scale: counts kept by triggers, bounded trims, window and counts through indexes.

Timings live in bench/bench_store.py; these tests prove the mechanisms: the
counters always equal a full scan, a trim never evicts more than its batch,
and the queries of window/counts/trim use indexes instead of scanning history.
"""
from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from mnemara.store.turns import TRIM_BATCH, TurnStore

FULL_SCAN = (
    "SELECT COUNT(*), COALESCE(SUM(pin_label IS NULL AND evicted=0), 0), COALESCE(SUM(pin_label IS NOT NULL), 0),"
    " COALESCE(SUM(CASE WHEN evicted=0 OR pin_label IS NOT NULL THEN tokens ELSE 0 END), 0) FROM turns"
)


def scanned(store: TurnStore) -> dict[str, int]:
    total, live, pinned, tokens = store._conn.execute(FULL_SCAN).fetchone()
    return {"stored": total, "live": live, "pinned": pinned, "evicted": total - live - pinned, "live_tokens": tokens}


@pytest.fixture
def store(tmp_path: Path):
    with TurnStore(tmp_path / "turns.sqlite") as s:
        yield s


def test_counts_follow_every_kind_of_write(store: TurnStore) -> None:
    ids = [store.append("user" if i % 2 else "assistant", f"message {i} " * (i + 1)) for i in range(40)]
    store.append_many(("user", f"bulk {i}") for i in range(25))
    assert store.counts() == scanned(store)
    store.pin(ids[3], "keep")
    store.upsert_slot("plan", "system", "step one")
    store.upsert_slot("plan", "system", "step one, then a much longer step two " * 5)  # tokens change in place
    store.evict(ids[5:9])
    store.set_blocks(ids[10], [{"type": "text", "text": "rewritten " * 30}])
    store.set_text(ids[4], "short")
    store.unpin(ids[3])
    store.delete(ids[20:23])
    store.trim(store.window(10, 100_000))
    store.import_rows(store.history(5))
    store.clear()
    assert store.counts() == scanned(store)
    assert store.counts()["evicted"] > 0 and store.counts()["pinned"] == 1


def test_counts_survive_a_write_from_another_connection(store: TurnStore) -> None:
    store.append("user", "here")
    other = sqlite3.connect(store.path)
    other.execute("INSERT INTO turns(role, content, tokens, created_at) VALUES ('user', '[]', 7, 'now')")
    other.commit()
    other.close()
    assert store.counts() == scanned(store) and store.counts()["stored"] == 2


def test_version_1_store_gets_counters_from_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "turns.sqlite"
    with TurnStore(path) as s:
        for i in range(12):
            s.append("user", f"m{i}")
        s.evict([1, 2, 3])
        s.pin(5, "five")
    conn = sqlite3.connect(path)  # make it look like a store written before the counters existed
    for name in ("turn_counts_insert", "turn_counts_delete", "turn_counts_update"):
        conn.execute(f"DROP TRIGGER {name}")
    conn.execute("DROP TABLE turn_counts")
    conn.execute("DROP INDEX turns_protected_live")
    conn.execute("UPDATE meta SET value='1' WHERE key='schema_version'")
    conn.execute("INSERT INTO turns(role, content, tokens, created_at, evicted) VALUES ('user', '[]', 3, 'now', 1)")
    conn.commit()
    conn.close()
    with TurnStore(path) as s:
        assert s.schema_version() == 2
        assert s.counts() == scanned(s) == {"stored": 13, "live": 8, "pinned": 1, "evicted": 4,
                                            "live_tokens": scanned(s)["live_tokens"]}


def test_trim_after_a_bulk_load_goes_in_bounded_steps(store: TurnStore) -> None:
    store.append_many(("user", f"imported {i}") for i in range(TRIM_BATCH * 8 + 300))
    window = store.window(20, 1_000_000)
    steps = []
    while (n := store.trim(window)) > 0:
        steps.append(n)
    # everything older than the window goes, never more than a batch per call
    assert steps == [TRIM_BATCH] * 9 + [30] and sum(steps) == TRIM_BATCH * 8 + 300 - 20
    assert store.counts()["live"] == 20 and store.counts() == scanned(store)
    assert store.window(20, 1_000_000).rows == window.rows


def test_trim_keeps_protected_rows_of_the_window(store: TurnStore) -> None:
    ids = [store.append("user", f"m{i}") for i in range(30)]
    store.set_blocks(ids[2], [{"type": "text", "text": "stub"}], protected=True)
    window = store.window(5, 100_000, preserve_protected=True)
    assert ids[2] in [t.id for t in window.rows]
    assert store.trim(window, limit=3) == 3
    while store.trim(window, limit=3):
        pass
    live = [t.id for t in store.live_rows()]
    assert live == [ids[2], *ids[-5:]]


def _plan(store: TurnStore, sql: str, params: tuple = ()) -> str:
    return " | ".join(r[3] for r in store._conn.execute("EXPLAIN QUERY PLAN " + sql, params))


def test_hot_queries_use_indexes_not_history(store: TurnStore) -> None:
    store.append_many(("user", f"m{i}") for i in range(50))
    window_sql = ("SELECT id FROM turns WHERE pin_label IS NULL AND evicted=0 ORDER BY id DESC LIMIT 20")
    protected_sql = ("SELECT id FROM turns INDEXED BY turns_protected_live WHERE pin_label IS NULL AND evicted=0 AND protected=1 ORDER BY id")
    trim_sql = "SELECT id FROM turns WHERE pin_label IS NULL AND evicted=0 AND id < 40 ORDER BY id LIMIT 1000"
    pinned_sql = "SELECT id FROM turns WHERE pin_label IS NOT NULL ORDER BY slot_pos, id"
    assert "turns_live" in _plan(store, window_sql)
    assert "turns_protected_live" in _plan(store, protected_sql)
    assert "turns_live" in _plan(store, trim_sql)
    assert "turns_pin_label" in _plan(store, pinned_sql)
    assert "SCAN turns" not in _plan(store, "SELECT stored, live, pinned, live_tokens FROM turn_counts WHERE id = 0")


def test_the_rest_of_a_bulk_trim_finishes_in_the_background(store: TurnStore) -> None:
    store.append_many(("user", f"imported {i}") for i in range(TRIM_BATCH * 3))
    window = store.window(10, 1_000_000)
    assert store.trim(window) == TRIM_BATCH
    store.finish_trim_later(window, pause=0).join(timeout=30)
    assert store.counts()["live"] == 10 and [t.id for t in store.live_rows()] == [t.id for t in window.rows]


def test_background_trim_stops_when_the_store_closes(tmp_path: Path) -> None:
    store = TurnStore(tmp_path / "turns.sqlite")
    store.append_many(("user", f"imported {i}") for i in range(TRIM_BATCH * 20))
    window = store.window(10, 1_000_000)
    thread = store.finish_trim_later(window, pause=0.05)
    store.close()
    thread.join(timeout=30)
    assert not thread.is_alive()
    with TurnStore(tmp_path / "turns.sqlite") as again:  # what it evicted before closing is consistent
        assert again.counts() == scanned(again)
