"""Eviction strategies on a real TurnStore: what they strip, what they keep, what they report."""
from __future__ import annotations

import json

import pytest

from mnemara.context import eviction
from mnemara.context.blocks import is_stub_result, is_stub_use
from tests.sample_session import fill_store
from mnemara.store.turns import TurnStore
from mnemara.core.tokens import estimate_blocks


@pytest.fixture
def store(tmp_path):
    s = TurnStore(tmp_path / "turns.sqlite")
    yield s
    s.close()


def _assistant(tid: str, *extra):
    return [
        {"type": "thinking", "thinking": "long reasoning " * 50},
        {"type": "text", "text": "answer"},
        *extra,
    ]


def test_thinking_blocks_are_dropped_text_and_tools_kept(store):
    a = store.append("assistant", _assistant("1", {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}))
    u = store.append("user", "hi")
    before = store.get(a).tokens
    res = eviction.evict_thinking_blocks(store)
    turn = store.get(a)
    assert [b["type"] for b in turn.blocks] == ["text", "tool_use"]
    assert res.rows == 1 and res.row_ids == [a]
    assert res.tokens_freed == before - turn.tokens > 0
    assert store.get(u).blocks == [{"type": "text", "text": "hi"}]
    again = eviction.evict_thinking_blocks(store)
    assert again.rows == 0 and again.tokens_freed == 0


def test_selection_limits_rows_and_reports_skipped_ids(store):
    a = store.append("assistant", _assistant("a"))
    b = store.append("assistant", _assistant("b"))
    res = eviction.evict_thinking_blocks(store, ids=[b, 999])
    assert res.row_ids == [b] and res.skipped == [999]
    assert any(x["type"] == "thinking" for x in store.get(a).blocks)


def test_pinned_rows_are_never_touched(store):
    sid = store.upsert_slot("notes", "assistant", _assistant("p"))
    before = store.get(sid).blocks
    for fn in (eviction.evict_thinking_blocks, eviction.evict_tool_use_blocks, eviction.evict_write_pairs):
        assert fn(store).rows == 0
        assert fn(store, ids=[sid]).skipped == [sid]
    assert store.get(sid).blocks == before
    assert eviction.clear_window(store).rows == 0
    assert eviction.evict_oldest(store, 5).rows == 0


def test_tool_use_keeps_audit_shell_and_stubs_result(store):
    cmd = "cd /srv && " + "x" * 500
    tid = store.append("assistant", [
        {"type": "text", "text": "running"},
        {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": cmd, "timeout": 5}},
        {"type": "tool_result", "tool_use_id": "t1", "content": "out\n" * 400, "is_error": False},
    ])
    before = store.get(tid).tokens
    res = eviction.evict_tool_use_blocks(store)
    blocks = store.get(tid).blocks
    use, result = blocks[1], blocks[2]
    assert use["name"] == "Bash" and use["id"] == "t1"
    assert use["input"]["evicted"] is True and use["input"]["target"].startswith("cd /srv && xxx")
    assert len(use["input"]["target"]) <= 80
    assert result["tool_use_id"] == "t1" and result["is_error"] is False and is_stub_result(result)
    assert res.tokens_freed == before - store.get(tid).tokens > 100
    assert eviction.evict_tool_use_blocks(store).rows == 0


def test_tool_result_in_a_later_row_is_found(store):
    a = store.append("assistant", [{"type": "tool_use", "id": "q", "name": "Read", "input": {"file_path": "/a.py"}}])
    u = store.append("user", [{"type": "tool_result", "tool_use_id": "q", "content": [{"type": "text", "text": "y" * 900}]}])
    res = eviction.evict_tool_use_blocks(store, ids=[a])
    assert res.row_ids == [a, u]
    assert is_stub_result(store.get(u).blocks[0])


def test_write_pairs_stub_write_and_earlier_reads_of_same_path(store):
    r1 = store.append("assistant", [
        {"type": "tool_use", "id": "r1", "name": "Read", "input": {"file_path": "/p/a.py"}},
        {"type": "tool_result", "tool_use_id": "r1", "content": "A" * 2000},
        {"type": "tool_use", "id": "r2", "name": "Read", "input": {"file_path": "/p/other.py"}},
        {"type": "tool_result", "tool_use_id": "r2", "content": "B" * 2000},
    ])
    w = store.append("assistant", [
        {"type": "text", "text": "editing"},
        {"type": "tool_use", "id": "e1", "name": "Edit",
         "input": {"file_path": "/p/./a.py", "old_string": "A" * 800, "new_string": "C" * 800}},
        {"type": "tool_result", "tool_use_id": "e1", "content": "updated " + "A" * 500},
    ])
    later = store.append("assistant", [
        {"type": "tool_use", "id": "r3", "name": "Read", "input": {"file_path": "/p/a.py"}},
        {"type": "tool_result", "tool_use_id": "r3", "content": "C" * 2000},
    ])
    res = eviction.evict_write_pairs(store, ids=[w])
    assert res.row_ids == [r1, w]
    read_row, write_row = store.get(r1).blocks, store.get(w).blocks
    assert read_row[0]["input"] == {"file_path": "/p/a.py", "evicted": True}
    assert json.loads(read_row[1]["content"]) == {"file_path": "/p/a.py", "evicted": True}
    assert read_row[3]["content"] == "B" * 2000  # other path untouched
    assert write_row[1]["name"] == "Edit" and write_row[1]["input"] == {"file_path": "/p/a.py", "evicted": True}
    assert write_row[0]["text"] == "editing"
    assert store.get(later).blocks[1]["content"] == "C" * 2000  # a Read after the write stays whole
    assert res.tokens_freed > 1000


@pytest.mark.parametrize("tool,key", [("Write", "content"), ("MultiEdit", "edits"), ("NotebookEdit", "new_source")])
def test_every_write_tool_is_stubbed(store, tool, key):
    path_key = "notebook_path" if tool == "NotebookEdit" else "file_path"
    tid = store.append("assistant", [{"type": "tool_use", "id": "w", "name": tool, "input": {path_key: "/n.ipynb", key: "z" * 999}}])
    assert eviction.evict_write_pairs(store).rows == 1
    assert is_stub_use(store.get(tid).blocks[0])
    assert store.get(tid).blocks[0]["input"]["file_path"] == "/n.ipynb"


def test_strategies_on_a_tool_heavy_session_report_the_real_difference(store):
    fill_store(store, turns=30)
    for fn in (eviction.evict_thinking_blocks, eviction.evict_write_pairs, eviction.evict_tool_use_blocks):
        before = store.counts()["live_tokens"]
        res = fn(store)
        assert res.tokens_freed == before - store.counts()["live_tokens"] > 0
        for tid in res.row_ids:
            t = store.get(tid)
            assert t.tokens == estimate_blocks(t.blocks)


def test_row_strategies_soft_evict(store):
    ids = [store.append(r, f"m{i}") for i, r in enumerate(["user", "assistant"] * 4)]
    res = eviction.evict_role(store, "user")
    assert res.row_ids == ids[0::2]
    assert [t.id for t in store.live_rows()] == ids[1::2]
    assert all(store.get(i).evicted for i in ids[0::2])  # still on disk
    assert eviction.evict_oldest(store, 1).row_ids == [ids[1]]
    assert eviction.evict_newest(store, 2).row_ids == ids[5::2]
    assert [t.id for t in store.live_rows()] == [ids[3]]


def test_stats_count_tokens_by_block_kind(store):
    fill_store(store, turns=6)
    stats = eviction.eviction_stats(store)
    assert stats["live_rows"] == 12 and stats["rows_by_role"] == {"assistant": 6, "user": 6}
    assert sum(stats["tokens_by_block"].values()) == stats["live_tokens"]
    assert "thinking" in eviction.format_stats(stats)
