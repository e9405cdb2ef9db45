"""Context slash commands through the shared dispatcher, on a plain ctx object."""
from __future__ import annotations

import hashlib
import json
import pytest

from mnemara.commands import dispatch
from mnemara.core.config import Config
from tests.sample_session import fill_store


@pytest.fixture
def ctx(session_factory):
    return session_factory("cmd")


def _snapshot(c):
    files = [c.instance.turns_path, c.instance.turns_path.with_name("turns.sqlite-wal"), c.instance.config_path]
    digests = [hashlib.sha256(p.read_bytes()).hexdigest() if p.exists() else None for p in files]
    rows = [(t.id, t.blocks, t.evicted, t.pin_label, t.slot_pos, t.protected) for t in c.store.history()]
    return digests, rows


BAD = [
    "/evict foo", "/evict -3", "/evict 0", "/evict last", "/evict last x", "/evict tools now", "/evict 1 2 3",
    "/tokens -5", "/tokens 0", "/tokens lots", "/tokens 5 6",
    "/compress 0", "/compress -1k", "/compress banana", "/compress 5 6",
    "/export", "/export 0 out.md", "/export x y z", "/import", "/import a b",
    "/skeleton", "/clear now", "/name " + "x" * 65, "/pin", "/pin abc", "/unpin", '/export "unclosed',
]


@pytest.mark.parametrize("line", BAD)
def test_bad_arguments_answer_with_usage_and_change_nothing(ctx, line):
    ctx.store.upsert_slot("hp", "system", "HP 5")
    fill_store(ctx.store, turns=4)
    before = _snapshot(ctx)
    res = dispatch(ctx, line)
    assert not res.ok
    assert "usage: /" in res.text
    assert _snapshot(ctx) == before


def test_evict_stats_and_each_strategy(ctx):
    slot = ctx.store.upsert_slot("hp", "system", "HP 5")
    fill_store(ctx.store, turns=6)
    stats = dispatch(ctx, "/evict")
    assert stats.ok and "12 live rows" in stats.text and "thinking" in stats.text
    assert dispatch(ctx, "/evict stats").text == stats.text
    r = dispatch(ctx, "/evict thinking")
    assert r.ok and r.payload.rows == 6 and r.payload.tokens_freed > 0
    assert dispatch(ctx, "/evict tools").payload.rows == 6
    assert dispatch(ctx, "/evict user").payload.rows == 6
    assert all(t.role == "assistant" for t in ctx.store.live_rows())
    assert dispatch(ctx, "/evict 2").payload.row_ids == [3, 5]
    assert dispatch(ctx, "/evict last 1").payload.row_ids == [13]
    assert dispatch(ctx, "/evict assistant").payload.rows == 3
    assert ctx.store.live_rows() == [] and ctx.store.get(slot).text == "HP 5"
    log = [json.loads(line) for line in ctx.instance.debug_log_path.read_text().splitlines() if line.strip()]
    assert any(e.get("event") == "eviction" and e.get("by") == "user" for e in log)


def test_clear_reports_tokens_and_keeps_pins(ctx):
    ctx.store.upsert_slot("hp", "system", "HP 5")
    fill_store(ctx.store, turns=3)
    live = sum(t.tokens for t in ctx.store.live_rows())
    res = dispatch(ctx, "/clear")
    assert res.ok and f"~{live} tokens freed" in res.text and "1 pinned" in res.text
    assert ctx.store.live_rows() == [] and len(ctx.store.pinned()) == 1


def test_compress_variants(ctx):
    fill_store(ctx.store, turns=20)
    assert "already under the target ~20000" in dispatch(ctx, "/compress 20k").text
    res = dispatch(ctx, "/compress 8k --yes")
    assert res.ok and res.payload.target == 8_000 and res.payload.after <= 8_000
    smart = dispatch(ctx, "/compress smart")
    assert smart.action == "send" and "[MNEMARA CONTEXT AUDIT]" in smart.payload.text
    reads = dispatch(ctx, "/compress reads")
    assert reads.ok and "compress_repeated_reads" in reads.text


def test_compress_asks_first_and_measures_percent_against_the_budget(ctx):
    fill_store(ctx.store, turns=20)
    have = ctx.store.counts()["live_tokens"]
    ctx.update_config(max_window_tokens=have * 2)
    before = [(t.id, t.blocks) for t in ctx.store.live_rows()]
    ask = dispatch(ctx, "/compress")  # 25% of the budget (have * 2), i.e. about half of what is there now
    target = int(have * 2 * 0.25)
    assert ask.ok and ask.action == "confirm" and ask.payload.command == f"/compress {target} --yes"
    assert f"target ~{target}, 25% of the {have * 2}-token budget" in ask.text and "/undo" in ask.text
    assert ask.payload.plan and [(t.id, t.blocks) for t in ctx.store.live_rows()] == before  # nothing written yet
    assert dispatch(ctx, "/compress 40%").payload.command == f"/compress {int(have * 2 * 0.4)} --yes"
    done = dispatch(ctx, ask.payload.command)
    assert done.ok and done.payload.after <= target and "-" not in "".join(
        str(s.tokens_freed) for s in done.payload.stages)


def test_compress_refuses_below_the_floor_and_says_so(ctx):
    ctx.store.append("user", "hi")
    ctx.store.append("assistant", "hello")
    rows = ctx.store.live_rows()
    small = dispatch(ctx, "/compress")
    assert small.ok and small.action is None and "under the floor of 2000" in small.text
    low = dispatch(ctx, "/compress 100 --yes")
    assert not low.ok and "never empties the conversation" in low.text
    for bad in ("/compress 0%", "/compress 150%", "/compress x%", "/compress 5 6"):
        assert not dispatch(ctx, bad).ok, bad
    assert ctx.store.live_rows() == rows


def test_undo_puts_back_the_last_compress_batch_rows_and_blocks(ctx):
    fill_store(ctx.store, turns=20)
    before = [(t.id, t.blocks) for t in ctx.store.live_rows()]
    assert not dispatch(ctx, "/undo").ok  # nothing recorded yet: a clear refusal
    done = dispatch(ctx, "/compress 3000 --yes")
    assert done.ok and "/undo puts it back" in done.text
    assert [(t.id, t.blocks) for t in ctx.store.live_rows()] != before
    res = dispatch(ctx, "/undo")
    assert res.ok and "row(s) back in the window" in res.text
    assert [(t.id, t.blocks) for t in ctx.store.live_rows()] == before
    assert not dispatch(ctx, "/undo").ok  # one batch, undone once


def test_unevict_last_and_ids_bring_rows_back(ctx):
    fill_store(ctx.store, turns=6)
    ids = [t.id for t in ctx.store.live_rows()]
    assert dispatch(ctx, "/evict 3").ok
    assert dispatch(ctx, "/unevict last").ok and [t.id for t in ctx.store.live_rows()] == ids
    assert dispatch(ctx, "/clear").ok and ctx.store.live_rows() == []
    res = dispatch(ctx, f"/unevict {ids[0]} {ids[1]} 99999")
    assert res.ok and "2 row(s) back" in res.text and "1 were not evicted" in res.text
    assert not dispatch(ctx, "/unevict").ok and not dispatch(ctx, "/unevict x").ok


def test_tokens_sets_the_cap_live_and_on_disk(ctx):
    assert dispatch(ctx, "/tokens 500k").ok
    assert ctx.config.max_window_tokens == 500_000 and ctx.tool_context.config.max_window_tokens == 500_000
    assert Config.load(ctx.instance.config_path).max_window_tokens == 500_000
    assert dispatch(ctx, "/tokens 1m").ok and ctx.config.max_window_tokens == 1_000_000
    assert "max_window_tokens = 1000000" in dispatch(ctx, "/tokens").text


def test_export_import_commands_round_trip(ctx, session_factory, tmp_path):
    ctx.store.upsert_slot("hp", "system", "HP 5")
    fill_store(ctx.store, turns=3)
    out = tmp_path / "my session.md"
    assert dispatch(ctx, f'/export "{out}"').ok
    assert dispatch(ctx, f'/export 2 "{tmp_path / "last2.md"}"').text.startswith("exported 3 rows")
    other = session_factory("restored")
    res = dispatch(other, f'/import "{out}"')
    assert res.ok and "imported 7 rows" in res.text
    assert [t.blocks for t in other.store.history()] == [t.blocks for t in ctx.store.history()]
    imported = Config.load(other.instance.config_path)  # the imported config is live for every holder
    assert other.config == imported and other.gate.config is other.config and other.tool_context.config is other.config
    bad = tmp_path / "bad.md"
    bad.write_text("hello\n", encoding="utf-8")
    res = dispatch(other, f"/import {bad}")
    assert not res.ok and "line 1" in res.text


def test_skeleton_name_pin_unpin(ctx, tmp_path):
    src = tmp_path / "m.py"
    src.write_text('def f(a: int) -> int:\n    """Double."""\n    return a * 2\n', encoding="utf-8")
    res = dispatch(ctx, f"/skeleton {src}")
    assert res.ok and 'def f(a: int) -> int:\n    """Double."""' in res.text
    assert not dispatch(ctx, f"/skeleton {tmp_path}").ok
    assert dispatch(ctx, "/name Mimir").ok and Config.load(ctx.instance.config_path).display_name == "Mimir"
    assert dispatch(ctx, "/name").ok and ctx.config.display_name == ""
    row = ctx.store.append("user", "remember this")
    assert dispatch(ctx, f"/pin {row} goal").ok and ctx.store.get(row).pin_label == "goal"
    assert not dispatch(ctx, "/unpin nothing").ok
    assert dispatch(ctx, "/unpin goal").ok and not ctx.store.get(row).pinned
