"""Spend caps: which cap is reached, the lines that say so, and what /budget accepts."""
from __future__ import annotations

import pytest

from mnemara.core.config import Config, ConfigError
from mnemara.guard.budget import cap_states, first_reached, parse_limit, question, refusal_line, warning_line


def test_the_narrowest_reached_cap_is_named_with_what_was_spent_and_how_to_raise_it():
    states = cap_states({"turn": 0.5, "session": None, "day": 2.0}, {"turn": 0.6, "session": 9.0, "day": 2.5})
    assert [s.scope for s in states] == ["turn", "day"]  # session is off: never checked
    cap = first_reached(states)
    assert cap is not None and cap.scope == "turn"
    line = refusal_line(cap)
    assert "$0.6000 spent this turn" in line and "budget_usd_per_turn $0.5000" in line
    assert "/budget turn <usd>" in line and "--temp" in line and "list prices of" in line
    assert "Continue this turn past the cap? (y once / n)" in question(cap)
    assert first_reached(cap_states({"turn": 1.0}, {"turn": 0.99})) is None
    under = cap_states({"day": 1.0}, {"day": 0.85})[0]
    assert "85% of budget_usd_per_day" in warning_line(under) and "today" in warning_line(under)


@pytest.mark.parametrize("text, value", [("2", 2.0), ("$0.50", 0.5), (" 1.25 ", 1.25), ("off", None), ("0", None)])
def test_limits_as_typed(text, value):
    assert parse_limit("turn", text) == value


@pytest.mark.parametrize("text, words", [("two", "takes dollars"), ("-1", "more than 0"), ("nan", "more than 0"),
                                         ("inf", "more than 0"), ("", "takes dollars")])
def test_limits_that_are_not_dollars_are_refused_with_one_clear_line(text, words):
    with pytest.raises(ValueError) as err:
        parse_limit("session", text)
    assert words in str(err.value) and "budget_usd_per_session" in str(err.value)


@pytest.mark.parametrize("raw, words", [('{"budget_usd_per_turn": 0}', "greater than 0"),
                                        ('{"budget_usd_per_day": -3}', "greater than 0"),
                                        ('{"budget_usd_per_session": "lots"}', "valid number"),
                                        ('{"budget_usd_per_turn": true}', "not true/false")])
def test_hand_edited_caps_that_are_not_dollars_are_refused_naming_the_field(tmp_path, raw, words):
    path = tmp_path / "config.json"
    path.write_text(raw)
    with pytest.raises(ConfigError) as err:
        Config.load(path)
    assert words in str(err.value) and "budget_usd_per_" in str(err.value)
    assert path.read_text() == raw  # never rewritten


def test_caps_are_off_by_default():
    cfg = Config()
    assert (cfg.budget_usd_per_turn, cfg.budget_usd_per_session, cfg.budget_usd_per_day) == (None, None, None)
