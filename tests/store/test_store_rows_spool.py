"""Issue 13 item 5, in process: row decoding never raises, the spool keeps and replays rows in order."""
from __future__ import annotations

import json
import sqlite3

import pytest

from mnemara.core.errors import StoreUnavailable
from mnemara.store.spool import Spool
from mnemara.store.turns import TurnStore
from mnemara.store.health import BUSY_ENV
from mnemara.store.rows import decode_blocks, decode_meta


@pytest.mark.parametrize("raw, why", [
    ("not json", "content is not JSON"),
    (None, "content is not JSON"),
    ('{"type": "text"}', "content is not a list of blocks"),
    ("[1]", "content block 0 has no type"),
    ('[{"text": "x"}]', "content block 0 has no type"),
    ('[{"type": "text", "text": 5}]', "content block 0 (text) has a 'text' of the wrong type"),
    ('[{"type": "text"}]', "content block 0 (text) has no 'text'"),
    ('[{"type": "tool_use", "name": "Bash", "input": "ls"}]', "content block 0 (tool_use) has a 'input' of the wrong type"),
])
def test_bad_content_is_named_not_raised(raw, why):
    assert decode_blocks(raw) == ([], why)


@pytest.mark.parametrize("raw, why", [
    ("{oops", "meta is not JSON"),
    ("[1]", "meta is not a JSON object"),
    ('{"interrupted": "yes"}', "meta field 'interrupted' has the wrong type"),
    ('{"cost_usd": "free"}', "meta field 'cost_usd' has the wrong type"),
    ('{"user_row_id": true}', "meta field 'user_row_id' has the wrong type"),
    ('{"usage": []}', "meta field 'usage' has the wrong type"),
])
def test_bad_meta_is_named_not_raised(raw, why):
    assert decode_meta(raw) == ({}, why)


def test_sound_rows_decode_unchanged():
    blocks = [{"type": "text", "text": "hi"}, {"type": "tool_result", "tool_use_id": "t1", "content": None},
              {"type": "custom", "anything": 1}]
    assert decode_blocks(json.dumps(blocks)) == (blocks, None)
    assert decode_meta('{"interrupted": false, "cost_usd": 0.1, "own_key": [1]}') == (
        {"interrupted": False, "cost_usd": 0.1, "own_key": [1]}, None)
    assert decode_meta(None) == ({}, None)


def test_a_damaged_row_is_marked_in_history_and_left_out_of_the_window(tmp_path):
    with TurnStore(tmp_path / "turns.sqlite") as store:
        good = store.append("user", "fine")
        raw = sqlite3.connect(tmp_path / "turns.sqlite")
        raw.execute("INSERT INTO turns(role, content, tokens, created_at, meta) VALUES ('user', 'x{', 1, 't', '{}')")
        raw.commit()
        raw.close()
        rows = store.history()
        assert [r.damaged for r in rows] == [None, "content is not JSON"]
        window = store.window(20, 10_000)
        assert [t.id for t in window.rows] == [good] and [t.damaged for t in window.damaged] == ["content is not JSON"]
        store.update_meta(rows[1].id, note="kept")  # a damaged row can still be annotated, not a crash


def test_spool_keeps_rows_while_locked_and_replays_them_once_in_order(tmp_path, monkeypatch):
    monkeypatch.setenv(BUSY_ENV, "0.2")
    db = tmp_path / "turns.sqlite"
    with TurnStore(db) as store:
        store.append("user", "before")
        spool = Spool(tmp_path)
        holder = sqlite3.connect(db, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        with pytest.raises(StoreUnavailable, match="locked by another process"):
            store.append("user", "while locked")
        spool.add("user", [{"type": "text", "text": "while locked"}])
        spool.add("assistant", [{"type": "text", "text": "its answer"}], {"model": "m"})
        (tmp_path / "spool.jsonl").open("a").write("not a row\n")
        assert spool.replay(store).error is not None  # still locked: the spool stays as it is
        assert spool.count() == 3 and (tmp_path / "spool.jsonl").stat().st_mode & 0o777 == 0o600
        holder.execute("ROLLBACK")
        holder.close()
        done = spool.replay(store)
        assert (done.rows, done.unreadable, done.error) == (2, 1, None)
        assert [t.text for t in store.history()] == ["before", "while locked", "its answer"]
        meta = store.history()[2].meta
        assert len(meta.pop("spool_id")) == 32 and meta == {"model": "m", "spooled": True}
        assert (tmp_path / "spool.jsonl").read_text() == "not a row\n"  # never dropped
        assert spool.replay(store).rows == 0  # nothing twice
