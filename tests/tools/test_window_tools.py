"""The agent's window tools and the spec's names, in-process on a real store (variants and refusals)."""
from __future__ import annotations

import json

import pytest

from mnemara.core.live_config import LiveConfig
from mnemara.core.config import Config, ToolPolicy, update_config
from mnemara.context.row_ops import parse_duration
from mnemara.core.errors import UsageError
from mnemara.store.instance import Instance
from mnemara.guard.gate import PermissionGate
from mnemara.store.turns import TurnStore
from mnemara.tools import (
    ToolContext,
    all_specs,
    context_tools,
    memory_notes,
    memory_tools,
)
from mnemara.tools import window_tools as wt
from mnemara.tools.declare import parse_args

H = {spec.name: spec.handler for spec in wt.specs()}


@pytest.fixture
def ctx(mnemara_home):
    inst = Instance.create("w")
    store = TurnStore(inst.turns_path)
    yield ToolContext(instance=inst, live=LiveConfig(inst.config_path), store=store)
    store.close()


def _rows(ctx, n=6):
    return [ctx.store.append("user", f"row {i} " + "x " * 30) for i in range(n)]


def test_selectors_keep_recent_older_than_segment_and_pins(ctx):
    ids = _rows(ctx)
    with ctx.store.transaction() as conn:  # make the first three rows two days old
        conn.execute("UPDATE turns SET created_at='2020-01-01T00:00:00+00:00' WHERE id IN (?,?,?)", ids[:3])
    ctx.store.pin(ids[0], "keep")
    out = H["evict_older_than"](ctx, {"older_than": "1d", "keep_recent": 1})
    assert out["ok"] and out["row_ids"] == ids[1:3]  # the pinned row is never selected
    assert H["mark_segment"](ctx, {"name": "tail", "from_row": ids[4]})["row_ids"] == ids[4:]
    out = context_tools.specs()[1].handler(ctx, {"segment": "tail", "keep_recent": 1})  # evict_thinking_blocks
    assert out["ok"] and out["rows"] == 0  # no thinking to strip, but the selector is accepted
    assert H["evict_ids"](ctx, {"segment": "tail", "keep_recent": 1})["row_ids"] == [ids[4]]
    assert H["evict_ids"](ctx, {"row_ids": [ids[0], 999]})["skipped"] == [ids[0], 999]


@pytest.mark.parametrize("args, message", [
    ({"row_ids": "1,2"}, "argument 'row_ids' must be of type array"),
    ({"row_ids": [1], "keep_recent": -1}, "keep_recent"),
    ({"row_ids": [1], "skip_pinned": False}, "never evicted"),
    ({}, "give row_ids"),
    ({"segment": " "}, "segment must be"),
])
def test_evict_ids_refusals(ctx, args, message):
    _rows(ctx, 2)
    out = H["evict_ids"](ctx, args)
    assert not out["ok"] and message in out["error"]
    assert len(ctx.store.live_rows()) == 2


@pytest.mark.parametrize("value", ["soon", "-5m", 0, True, "5 parsecs"])
def test_durations_refused(value):
    with pytest.raises(UsageError):
        parse_duration(value)


def test_durations_read():
    assert [parse_duration(v) for v in ("90s", "30m", "2h", "1d", 45, "1.5h")] == [90, 1800, 7200, 86400, 45, 5400]


def test_evict_last_since_and_their_refusals(ctx):
    ids = _rows(ctx, 4)
    assert not H["evict_last"](ctx, {"n": 0})["ok"]
    assert not H["evict_since"](ctx, {"segment": "nope"})["ok"]
    assert H["evict_last"](ctx, {"n": 1})["row_ids"] == [ids[-1]]
    H["mark_segment"](ctx, {"name": "b", "from_row": ids[1], "to_row": ids[1]})
    assert H["evict_since"](ctx, {"segment": "b"})["row_ids"] == ids[1:3]


def test_mark_segment_refusals(ctx):
    ids = _rows(ctx, 2)
    for args in ({"name": ""}, {"name": "x" * 80}, {"name": "ok", "from_row": ids[1], "to_row": ids[0]},
                 {"name": "ok", "from_row": 500}):
        assert not H["mark_segment"](ctx, args)["ok"], args


def test_tune_window_stays_within_the_users_limits(ctx):
    out = H["tune_window"](ctx, {"max_window_turns": 50})
    assert not out["ok"] and "between 2 and 20" in out["error"]  # no agent_max: only lower than the current 20
    assert H["tune_window"](ctx, {"max_window_turns": 10})["after"] == {"max_window_turns": 10}
    update_config(ctx.instance.config_path, agent_max_window_turns=60, agent_max_window_tokens=300_000)
    ctx.live.reload()  # a hand edit: read at the next turn
    assert H["tune_window"](ctx, {"max_window_turns": 60, "max_window_tokens": 250_000})["ok"]
    assert not H["tune_window"](ctx, {"max_window_tokens": 400_000})["ok"]
    assert not H["tune_window"](ctx, {"max_window_turns": 1})["ok"]
    assert not H["tune_window"](ctx, {})["ok"]
    cfg = Config.load(ctx.instance.config_path)
    assert (cfg.max_window_turns, cfg.max_window_tokens) == (60, 250_000)
    assert ctx.config == cfg  # the tool context reads the live config the change was saved through


def test_pins_lists_inspect_and_log_choice(ctx):
    ids = _rows(ctx, 3)
    H["mark_segment"](ctx, {"name": "s", "from_row": ids[1]})
    out = H["pin_row"](ctx, {"segment": "s"})
    assert out["pinned"] == ids[1:] and out["labels"] == [f"s-{ids[1]}", f"s-{ids[2]}"]
    assert [r["id"] for r in H["list_pinned"](ctx, {})["rows"]] == ids[1:]
    assert H["unpin_row"](ctx, {"row_id": ids[0]})["unpinned"] == []
    assert not H["unpin_row"](ctx, {"row_id": 999})["ok"]
    assert not H["list_window"](ctx, {"limit": 0})["ok"]
    info = H["inspect_context"](ctx, {})
    assert info["rows"]["pinned"] == 2 and info["segments"] == {} and info["max_window_turns"] == 20
    assert not H["log_choice"](ctx, {"decision": " ", "rationale": "r"})["ok"]
    assert not H["log_choice"](ctx, {"decision": "d", "rationale": 5})["ok"]
    assert not (ctx.instance.root / "choices.jsonl").exists()
    assert H["log_choice"](ctx, {"decision": "d", "rationale": "r"})["logged"]["last_row_id"] == ids[0]


def test_every_tool_refuses_a_parameter_it_does_not_take(ctx):
    assert all(s.input_schema.get("additionalProperties") is False for s in all_specs())
    assert H["list_pinned"](ctx, {"limit": 3}) == {"ok": False, "error": "unknown argument 'limit'"}
    assert H["evict_last"](ctx, {"n": 1, "everything": True}) == {"ok": False, "error": "unknown argument 'everything'"}


def test_write_memory_payload_refusals_write_nothing(ctx):
    for args in ({"text": "t", "payload": "evidence"}, {"text": "t", "payload": {"evidence": {"nested": 1}}},
                 {"payload": {}}, {"text": "t", "payload": {"applies_to": [1]}}):
        out = memory_notes.specs()[0].handler(ctx, args)
        assert not out["ok"], args
    assert not list(ctx.instance.memory_dir.glob("*.md"))


def test_graph_properties_json_refusals():
    for args, message in (({"properties_json": "{bad"}, "not valid JSON"), ({"properties_json": "[1]"}, "JSON object"),
                          ({"properties_json": "{}", "properties": {}}, "not both")):
        with pytest.raises(UsageError, match=message):
            parse_args(memory_tools.GraphAddNodeArgs, {"label": "x", **args})
    assert parse_args(memory_tools.GraphAddNodeArgs, {"label": "x", "properties_json": '{"a": 1}'}).merged() == {"a": 1}


def test_018_policy_names_are_known_and_most_specific(mnemara_home):
    inst = Instance.create("p")
    cfg = Config(allowed_tools=[ToolPolicy(tool="GraphAddNode", mode="deny"), ToolPolicy(tool="GraphWrite", mode="allow"),
                                ToolPolicy(tool="EvictThinking", mode="deny")])
    gate = PermissionGate(cfg, inst)
    assert gate.decide("mcp__mnemara__graph_add_node", {}).verdict == "deny"
    assert gate.decide("mcp__mnemara__graph_add_edge", {}).verdict == "allow"
    assert gate.decide("mcp__mnemara__evict_thinking_blocks", {}).verdict == "deny"
    problems = gate.startup_problems
    assert len(problems) == 2 and all("Mnemara 0.18 name" in p for p in problems), problems
    assert not any("no such tool" in p for p in problems)
    json.dumps(problems)
