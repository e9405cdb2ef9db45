"""Per-session stats in stats/ and /stats."""
from __future__ import annotations

import json

import pytest

from mnemara.core import events as ev
from mnemara.commands import dispatch
from mnemara.store.instance import Instance
from mnemara.testing.scripted_api import reply, tool_use
from mnemara.session.usage import StatsFile
from tests.conftest import run_cli


def test_turns_tokens_cache_cost_and_tools_are_counted_and_saved(tmp_path):
    stats = StatsFile(tmp_path / "stats")
    stats.observe(ev.ToolUse("t1", "Bash", {}))
    stats.observe(ev.TurnDone(usage={"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 30,
                                     "cache_creation_input_tokens": 0}, cost_usd=0.01))
    stats.observe(ev.TurnDone(error="boom"))
    saved = json.loads(stats.path.read_text())
    assert (saved["turns"], saved["failed_turns"], saved["tokens_in"], saved["cache_read_tokens"]) == (2, 1, 10, 30)
    assert saved["tools_called"] == {"Bash": 1} and stats.current.cache_hit_ratio == 0.75
    (tmp_path / "stats" / "broken.json").write_text("{not json")
    total, count, bad = stats.totals()
    assert (total.turns, count, bad) == (2, 1, ["broken.json"])


def test_stats_command_refuses_arguments_and_shows_both_scopes(session_factory):
    session = session_factory("st")
    assert not dispatch(session, "/stats now").ok
    text = dispatch(session, "/stats").text
    assert text.startswith("this session: 0 turns") and "all 0 session(s) in stats/" in text
    assert "$0.0000 (list prices of " in text  # the price table's date beside every estimate


@pytest.mark.e2e
def test_a_session_writes_its_stats_and_the_next_one_sees_the_total(scripted_api, mnemara_home):
    inst = Instance.create("stats")
    scripted_api.push(reply(tool_use("mcp__mnemara__list_pinned", {})), reply("one"), reply("two"))
    proc = run_cli("run", "--instance", "stats", "--no-tui", input="hi\nagain\n/stats\n")
    assert proc.returncode == 0, proc.stderr
    assert "this session: 2 turns (0 failed)" in proc.stdout and "mcp__mnemara__list_pinned 1" in proc.stdout
    files = list((inst.root / "stats").glob("*.json"))
    assert len(files) == 1 and json.loads(files[0].read_text())["turns"] == 2
    proc = run_cli("run", "--instance", "stats", "--no-tui", input="/stats\n")
    assert "this session: 0 turns" in proc.stdout and "all 1 session(s) in stats/: 2 turns" in proc.stdout
