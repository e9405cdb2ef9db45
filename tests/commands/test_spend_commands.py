"""/cost and /budget: one implementation for the panel, the REPL and tests."""
from __future__ import annotations

import json

import pytest

from mnemara.commands import dispatch
from mnemara.store.spend_ledger import CallSpend


def _spent(session, usd_tokens: int, turn: str = "t-old") -> None:
    session.spend.ledger.add(CallSpend.from_usage("claude-sonnet-4-6", {"input_tokens": usd_tokens}),
                             session=session.spend.gate.session, turn=turn)


def test_cost_shows_the_session_today_and_the_price_date(session_factory):
    session = session_factory("cost")
    _spent(session, 1_000_000)  # $3.00
    text = dispatch(session, "/cost").text
    assert "this session: $3.00 · 1 call(s); tokens: 1000000 plain in, 0 cache read, 0 cache written" in text
    assert "today (" in text and "list prices of 2026-" in text and "caps: none" in text
    assert not dispatch(session, "/cost now").ok


def test_budget_shows_sets_saves_and_sets_for_this_session_only(session_factory):
    session = session_factory("budget")
    _spent(session, 500_000)  # $1.50
    shown = dispatch(session, "/budget").text
    assert "budget_usd_per_turn: off" in shown and "budget_usd_per_day: off · spent $1.50 today" in shown
    done = dispatch(session, "/budget day 2")
    assert done.ok and "budget_usd_per_day: $2.00 (saved to config.json)" in done.text and "75%" in done.text
    assert json.loads(session.instance.config_path.read_text())["budget_usd_per_day"] == 2.0
    temp = dispatch(session, "/budget turn $0.25 --temp")
    assert temp.ok and "this session only" in temp.text and session.config.budget_usd_per_turn == 0.25
    assert json.loads(session.instance.config_path.read_text()).get("budget_usd_per_turn") is None
    assert dispatch(session, "/budget day off").ok and session.config.budget_usd_per_day is None
    assert "caps: turn $0.2500 (/budget)" in dispatch(session, "/cost").text


@pytest.mark.parametrize("line, words", [
    ("/budget week 5", "give a cap (turn, session or day)"), ("/budget turn", "give a cap (turn, session or day)"), ("/budget turn 5 6", "give a cap (turn, session or day)"),
    ("/budget turn lots", "takes dollars"), ("/budget day -2", "more than 0"), ("/budget --temp", "--temp goes with"),
    ("/budget turn 2 --forever", "unknown option --forever")])
def test_budget_refuses_what_is_not_a_cap_and_changes_nothing(session_factory, line, words):
    session = session_factory("budget-bad")
    before = session.instance.config_path.read_text()
    result = dispatch(session, line)
    first, *rest = result.text.splitlines()
    assert not result.ok and words in first and rest == ["usage: /budget [turn|session|day <usd>|off] [--temp]"]
    assert session.instance.config_path.read_text() == before
    assert (session.config.budget_usd_per_turn, session.config.budget_usd_per_day) == (None, None)
