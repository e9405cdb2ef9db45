"""The context tools' handlers (the same functions the SDK MCP server calls)."""
from __future__ import annotations

import pytest

from mnemara.core.live_config import LiveConfig
from tests.sample_session import fill_store
from mnemara.store.instance import Instance
from mnemara.store.turns import TurnStore
from mnemara.tools import ToolContext, enabled_specs
from mnemara.tools import context_tools as ct



def declared(name: str):
    """The tool as the model calls it: arguments validated by its declared model, then the handler."""
    return {s.name: s.handler for s in ct.specs()}[name]

@pytest.fixture
def tctx():
    inst = Instance.create("tools")
    store = TurnStore(inst.turns_path)
    yield ToolContext(instance=inst, live=LiveConfig(inst.config_path), store=store)
    store.close()


def test_upsert_slot_updates_in_place_then_appends_next_slot(tctx):
    first = declared("upsert_slot")(tctx, {"label": "health", "role": "system", "content": "HP: 73 / 100"})
    assert first["ok"] and not first["updated"]
    again = declared("upsert_slot")(tctx, {"label": "health", "role": "system", "content": "HP: 41 / 100"})
    assert again["row_id"] == first["row_id"] and again["updated"]
    other = declared("upsert_slot")(tctx, {"label": "stamina", "role": "system", "content": "41"})
    pins = tctx.store.pinned()
    assert [(t.pin_label, t.slot_pos, t.text) for t in pins] == [("health", 0, "HP: 41 / 100"), ("stamina", 1, "41")]
    assert other["row_id"] != first["row_id"]


@pytest.mark.parametrize("args", [
    {"label": "../x", "role": "system", "content": "c"},
    {"label": "ok", "role": "robot", "content": "c"},
    {"label": "ok", "role": "system"},
    {"label": 5, "role": "system", "content": "c"},
])
def test_upsert_slot_refuses_bad_arguments_without_writing(tctx, args):
    res = declared("upsert_slot")(tctx, args)
    assert res["ok"] is False and res["error"]
    assert tctx.store.history() == []


def test_eviction_tools_take_row_ids_and_report(tctx):
    fill_store(tctx.store, turns=4)
    by_name = {s.name: s for s in ct.specs()}
    res = by_name["evict_thinking_blocks"].handler(tctx, {"row_ids": [2, 4, 99]})
    assert res["ok"] and res["row_ids"] == [2, 4] and res["skipped"] == [99] and res["tokens_freed"] > 0
    res = by_name["evict_write_pairs"].handler(tctx, {})
    assert res["ok"] and res["rows"] > 0
    res = by_name["evict_tool_use_blocks"].handler(tctx, {"row_ids": "all"})
    assert res == {"ok": False, "error": "argument 'row_ids' must be of type array"}
    assert "eviction" in tctx.instance.debug_log_path.read_text()


def test_read_skeleton_registered_only_when_enabled(tctx, isolated_home, tmp_path):
    assert "read_skeleton" not in {s.name for s in enabled_specs(tctx.config)}
    tctx.config.read_skeleton_enabled = True
    assert "read_skeleton" in {s.name for s in enabled_specs(tctx.config)}
    src = isolated_home / "m.py"
    src.write_text("class A:\n    def f(self): return 1\n", encoding="utf-8")
    res = declared("read_skeleton")(tctx, {"path": str(src)})
    assert res["ok"] and "def f(self): ..." in res["skeleton"]
    outside = tmp_path / "o.py"
    outside.write_text("x = 1\n", encoding="utf-8")
    assert "outside $HOME" in declared("read_skeleton")(tctx, {"path": str(outside)})["error"]
    tctx.config.file_tool_home_only = False
    assert declared("read_skeleton")(tctx, {"path": str(outside)})["ok"]
    assert declared("read_skeleton")(tctx, {"path": str(isolated_home / "x.txt")})["ok"] is False
