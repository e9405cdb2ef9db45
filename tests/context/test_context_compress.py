"""/compress strategies on a real TurnStore."""
from __future__ import annotations

import pytest

from mnemara.context import compress
from mnemara.context.blocks import is_stub_result
from tests.sample_session import fill_store
from mnemara.store.turns import TurnStore


@pytest.fixture
def store(tmp_path):
    s = TurnStore(tmp_path / "turns.sqlite")
    yield s
    s.close()


def test_compress_default_reaches_a_quarter_cheapest_first_and_keeps_pins(store):
    slot = store.upsert_slot("state", "system", "HP 73/100")
    fill_store(store, turns=40)
    before = compress.window_tokens(store)
    target = compress.default_target(store)
    assert target == before // 4
    report = compress.compress_to(store, target)
    assert report.reached and report.after == compress.window_tokens(store) <= target
    names = [s.strategy for s in report.stages]
    assert names[0] == "evict_thinking_blocks"
    assert names == ["evict_thinking_blocks", "evict_write_pairs", "evict_tool_use_blocks", "fifo"][: len(names)]
    assert store.get(slot).text == "HP 73/100" and not store.get(slot).evicted


def test_compress_stops_when_target_met_and_falls_back_to_fifo(store):
    fill_store(store, turns=20)
    before = compress.window_tokens(store)
    light = compress.compress_to(store, before - 10)
    assert [s.strategy for s in light.stages] == ["evict_thinking_blocks"]
    hard = compress.compress_to(store, 200)
    assert hard.stages[-1].strategy == "fifo" and hard.after <= 200
    live = store.live_rows()
    evicted = hard.stages[-1].row_ids
    assert evicted and max(evicted) < min(t.id for t in live)  # oldest went first


def test_fifo_spares_protected_rows_when_preserving(store):
    keep = store.append("assistant", "a stub " * 100, protected=True)
    for i in range(10):
        store.append("user", f"row {i} " * 50)
    report = compress.compress_to(store, 1, preserve_protected=True)
    assert not report.reached
    newest = store.live_rows()[-1].id  # the last exchange stays whatever the target
    assert [t.id for t in store.live_rows()] == [keep, newest] and report.kept_last == [newest]


def test_compress_rejects_non_positive_target(store):
    store.append("user", "x")
    with pytest.raises(ValueError):
        compress.compress_to(store, 0)


def _read(uid, path, content):
    return [
        {"type": "tool_use", "id": uid, "name": "Read", "input": {"file_path": path}},
        {"type": "tool_result", "tool_use_id": uid, "content": content},
    ]


def test_repeated_reads_become_diff_or_unchanged_latest_kept_whole(store):
    v1 = "".join(f"line {i}\n" for i in range(200))
    v2 = v1.replace("line 50\n", "line fifty\n")
    a = store.append("assistant", _read("r1", "/x.py", v1))
    b = store.append("assistant", _read("r2", "/x.py", v1))
    c = store.append("assistant", _read("r3", "/x.py", v2))
    res = compress.compress_repeated_reads(store, protect=True)
    assert res.row_ids == [a, b]
    first = store.get(a).blocks[1]["content"]
    assert is_stub_result(store.get(a).blocks[1])
    assert f"row {c}" in first and "-line fifty" in first and "+line 50" in first
    assert store.get(c).blocks[1]["content"] == v2
    assert store.get(a).protected and store.get(b).protected and not store.get(c).protected
    assert compress.compress_repeated_reads(store).rows == 0  # idempotent


def test_identical_repeated_read_is_marked_unchanged(store):
    body = "same\n" * 300
    a = store.append("assistant", _read("r1", "/y.py", body))
    store.append("assistant", _read("r2", "/y.py", body))
    compress.compress_repeated_reads(store)
    assert "unchanged" in store.get(a).blocks[1]["content"]
    assert not store.get(a).protected


def test_audit_prompt_lists_rows_and_tools(store):
    store.upsert_slot("goal", "user", "ship it")
    fill_store(store, turns=3)
    text = compress.build_audit_prompt(store, 200_000)
    assert "[MNEMARA CONTEXT AUDIT]" in text and "mcp__mnemara__evict_write_pairs" in text
    assert "| 2 | user |" in text and "| 3 | assistant |" in text and "1 pinned slot" in text


def test_protected_read_stubs_survive_the_row_cap_like_pins(store):
    body = "same\n" * 300
    stub_row = store.append("assistant", _read("r1", "/z.py", body))
    store.append("assistant", _read("r2", "/z.py", body))
    for i in range(6):
        store.append("user", f"later {i}")
    compress.compress_repeated_reads(store, protect=True)
    kept = store.window(max_turns=3, max_tokens=100_000, preserve_protected=True)
    assert stub_row in [t.id for t in kept.rows]
    store.trim(kept)
    assert not store.get(stub_row).evicted
    plain = store.window(max_turns=3, max_tokens=100_000)
    assert stub_row not in [t.id for t in plain.rows]
