"""Spend through the real CLI: every call counted from the recorder, caps held before a request leaves,
and a halt that stops spending at once (issues 35 and 36)."""
from __future__ import annotations

import asyncio
import time

import pytest

from mnemara.core import events as ev
from mnemara.core.config import update_config
from mnemara.core.pricing import cost_usd
from mnemara.store.spend_ledger import SpendLedger
from mnemara.testing.scripted_api import reply, tool_use
from tests.e2e.test_engine_e2e import _slow_turn_seen_streaming

pytestmark = pytest.mark.e2e
#: $0.30 + $0.00015 a call on Sonnet; the emulated prompt cache's counts are overridden to keep the sums exact
BIG = {"input_tokens": 100_000, "output_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
       "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0}}


def _allow_bash(session, **changes):
    update_config(session.instance.config_path, allowed_tools=[{"tool": "Bash", "mode": "allow"}], **changes)
    session.reload_config()


def test_a_cap_reached_mid_turn_stops_the_next_request_with_one_line_and_one_response_past_at_most(
        scripted_api, session_factory):
    session = session_factory("cap")
    _allow_bash(session, budget_usd_per_turn=0.7)
    scripted_api.push(*[reply(tool_use("Bash", {"command": f"echo {i}"}), usage=BIG) for i in range(6)])
    result = session.turn("loop for a while")
    halts = [e for e in result.events if isinstance(e, ev.Halt)]
    assert len(halts) == 1 and halts[0].source == "budget"
    assert "spent this turn reached budget_usd_per_turn $0.7000" in halts[0].reason
    assert "/budget turn" in halts[0].reason
    warnings = [e.message for e in result.events if isinstance(e, ev.Notice) and "86% of budget_usd_per_turn" in e.message]
    assert len(warnings) == 1  # the 80% line, once
    # $0.30 a call: the 3rd starts at $0.60 (under), ends at $0.90 (the one response past); the 4th never leaves
    assert len(scripted_api.message_requests()) == 3
    done = result.events[-1]
    assert isinstance(done, ev.TurnDone) and done.error is None and done.cost_usd == pytest.approx(0.90045)
    assert not [e for e in result.events if isinstance(e, ev.ErrorEvent)]
    row = session.store.get(done.assistant_row_id)
    assert row.meta["halted"] == "budget"
    time.sleep(1)
    assert len(scripted_api.message_requests()) == 3, "the capped CLI sent more requests after the halt"


def test_a_sentinel_halt_lets_no_further_request_reach_the_api(scripted_api, session_factory):
    from mnemara.testing.scripted_api import ScriptedAPI  # noqa: F401  (the fixture is one)

    session = session_factory("halt")
    _allow_bash(session, runtime_sentinel=True)
    for _ in range(12):
        scripted_api.push(reply(tool_use("Bash", {"command": "echo same"})))
    at_halt: list[int] = []

    def seen(event: ev.Event) -> None:
        if isinstance(event, ev.Halt):
            at_halt.append(len(scripted_api.message_requests()))

    session.turn("poll it", on_event=seen)
    assert at_halt, "the sentinel did not halt"
    time.sleep(2)  # what a CLI shutting down politely would send meanwhile
    assert len(scripted_api.message_requests()) - at_halt[0] == 0


def test_a_stopped_turn_counts_what_its_call_spent(scripted_api, session_factory):
    session = session_factory("stopped")

    async def go() -> list:
        answer = reply("slow " * 300, delay=0.05, usage={"input_tokens": 8758, "output_tokens": 400})
        task, seen = await _slow_turn_seen_streaming(session, scripted_api, "take your time", answer)
        assert await session.stop()
        await asyncio.wait_for(task, 30)
        return seen

    seen = asyncio.run(go())
    done = seen[-1]
    assert isinstance(done, ev.TurnDone) and done.interrupted
    assert done.usage["input_tokens"] == 8758 and done.cost_usd and done.cost_usd >= 8758 * 3 / 1e6
    assert session.usage_stats.current.tokens_in == 8758  # /stats no longer says "$0.0000, tokens: 0 in"
    assert SpendLedger(session.instance.root).totals().input_tokens == 8758


def test_spend_is_kept_in_the_instance_across_sessions(scripted_api, session_factory):
    first = session_factory("kept")
    scripted_api.push(reply("one", usage={"input_tokens": 1000, "output_tokens": 10}))
    first.turn("hello")
    first.close()
    second = session_factory("kept")
    priced = sum(cost_usd("claude-sonnet-4-6", r.usage) or 0 for r in scripted_api.message_requests())
    assert priced > (3000 + 150) / 1e6  # the emulated cache wrote the prompt: priced at 1.25x, not ignored
    assert second.spend.view().day_usd == pytest.approx(priced)
    assert second.spend.view().session_usd == 0


def test_a_turn_whose_last_response_passes_a_cap_says_so_before_it_ends(scripted_api, session_factory):
    """Nothing was left to refuse, so nothing said the cap was passed, and between turns the status line
    read "turn cap 0%" after a turn that spent 300% of it."""
    session = session_factory("passed")
    _allow_bash(session, budget_usd_per_turn=0.1, budget_usd_per_session=0.2)
    scripted_api.push(reply("one answer", usage=BIG))
    result = session.turn("a single call")
    lines = [e.message for e in result.events if isinstance(e, ev.Notice) and "past budget_usd" in e.message]
    assert len(lines) == 2 and "$0.3001 spent this turn, past budget_usd_per_turn $0.1000" in lines[0], lines
    assert "past budget_usd_per_session $0.2000" in lines[1] and "/budget session" in lines[1]
    assert isinstance(result.events[-1], ev.TurnDone) and not [e for e in result.events if isinstance(e, ev.Halt)]
    assert "turn cap 300%" in session.spend.view().status_forms()[1]
    # the session cap is said once; the next turn's first request stops at it, in the turn's own line
    result = session.turn("another")
    assert not [e for e in result.events if isinstance(e, ev.Notice) and "past budget_usd" in e.message]
    [halt] = [e for e in result.events if isinstance(e, ev.Halt)]
    assert "reached budget_usd_per_session" in halt.reason and len(scripted_api.message_requests()) == 1


def _capped_instance(name: str, scripted_api, calls: int = 6):
    from mnemara.store.instance import Instance

    inst = Instance.create(name)
    update_config(inst.config_path, allowed_tools=[{"tool": "Bash", "mode": "allow"}], budget_usd_per_turn=0.5)
    scripted_api.push(*[reply(tool_use("Bash", {"command": f"echo {i}"}), usage=BIG) for i in range(calls)])
    return inst


def test_the_repl_asks_at_the_cap_and_y_lets_exactly_one_more_request_go(scripted_api):
    from tests.conftest import run_cli

    _capped_instance("repl-cap", scripted_api)
    # $0.30 a call: the 3rd would start at $0.60, past $0.50: asked, y; the 4th: asked again, n
    proc = run_cli("run", "--instance", "repl-cap", "--no-tui", input="keep going\ny\nn\n/cost\n")
    assert proc.stderr.count("Continue this turn past the cap? (y once / n)") == 2, proc.stderr
    assert "SPEND CAP: $0.9004 spent this turn reached budget_usd_per_turn $0.5000" in proc.stdout + proc.stderr
    assert len(scripted_api.message_requests()) == 3
    assert "this session: $0.9004" in proc.stdout  # /cost, after the turn
    assert "· cost: turn $0.9004 · session $0.9004" in proc.stderr  # the REPL's status line after the turn


def test_the_repl_refuses_at_the_cap_on_n(scripted_api):
    from tests.conftest import run_cli

    _capped_instance("repl-cap-n", scripted_api)
    proc = run_cli("run", "--instance", "repl-cap-n", "--no-tui", input="keep going\nn\n")
    assert proc.stderr.count("Continue this turn past the cap?") == 1
    assert len(scripted_api.message_requests()) == 2 and "SPEND CAP: $0.6003 spent this turn" in proc.stdout + proc.stderr


def test_the_request_view_shows_a_calls_cached_written_and_plain_tokens_as_the_api_reported_them(
        scripted_api, session_factory):
    from tests.conftest import run_cli

    session = session_factory("view")
    scripted_api.push(reply("one"), reply("two"))
    session.turn("first")
    session.turn("second")
    usage = scripted_api.message_requests()[-1].usage
    assert usage["cache_read_input_tokens"] > 0  # the emulated cache hit the second call's prefix
    shown = run_cli("context", "--instance", "view", "--call", "last").stdout
    line = next(x for x in shown.splitlines() if x.startswith("tokens (from the API):"))
    assert f"{usage['cache_read_input_tokens']:,} cached (read, 0.1x)" in line
    assert f"{usage['cache_creation_input_tokens']:,} written to the cache" in line
    assert f"{usage['input_tokens']:,} plain input (1x)" in line
    assert "at list prices of 2026-" in shown


def test_a_failed_turn_counts_what_its_calls_spent(scripted_api, session_factory):
    from mnemara.testing.scripted_api import http_error

    session = session_factory("failed")
    _allow_bash(session)
    scripted_api.push(reply(tool_use("Bash", {"command": "echo 1"}), usage=BIG), http_error(500))
    done = session.turn("this fails halfway").events[-1]
    assert isinstance(done, ev.TurnDone) and done.error
    assert done.cost_usd == pytest.approx(0.30015) and done.usage["input_tokens"] == 100_000
    assert SpendLedger(session.instance.root).totals().calls == 2  # the failed call is kept too (no usage: $0)


def test_the_day_cap_counts_what_other_processes_of_the_instance_spent(scripted_api, session_factory):
    from mnemara.store.spend_ledger import CallSpend

    session = session_factory("day")
    update_config(session.instance.config_path, budget_usd_per_day=1.0)
    session.reload_config()
    other = SpendLedger(session.instance.root)  # another panel or an inbox turn elsewhere, same instance, today
    other.add(CallSpend.from_usage("claude-sonnet-4-6", {"input_tokens": 400_000}), session="elsewhere", turn="x")
    scripted_api.push(reply("never sent"))
    result = session.turn("one more")
    halts = [e for e in result.events if isinstance(e, ev.Halt)]
    assert halts and "$1.20 spent today reached budget_usd_per_day $1.00" in halts[0].reason
    assert scripted_api.message_requests() == []
