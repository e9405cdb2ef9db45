"""Overflow recovery: "prompt is too long" evicts the oldest unpinned rows, says so, retries once."""
from __future__ import annotations

import pytest

from mnemara.core import events as ev
from mnemara.context import overflow
from mnemara.store.rows import Turn, Window
from mnemara.testing.scripted_api import http_error, reply

TOO_LONG = "prompt is too long: 215000 tokens > 200000 maximum"


def _turn(i: int, tokens: int, label: str | None = None) -> Turn:
    return Turn(id=i, role="user", blocks=[], tokens=tokens, created_at="", pin_label=label)


def test_plan_evicts_oldest_first_until_the_stated_ratio_fits():
    win = Window(pinned=[_turn(1, 100, "goal")], rows=[_turn(i, 1000) for i in range(2, 12)])
    found = overflow.plan(win, 400, TOO_LONG)
    assert found.fits and [t.id for t in found.evict] == [2, 3, 4]  # 10500 estimated, target 8302
    assert "evicted the 3 oldest unpinned row(s)" in found.notice() and "ids 2, 3, 4" in found.notice()


def test_plan_names_the_pins_when_they_alone_are_too_big():
    win = Window(pinned=[_turn(1, 130_000, "big-a"), _turn(2, 130_000, "big-b")], rows=[_turn(3, 10)])
    found = overflow.plan(win, 100, TOO_LONG)
    assert not found.evict
    message = found.too_big()
    assert "big-a (row 1, ~130000 tokens)" in message and "big-b" in message and "/unpin" in message


@pytest.mark.parametrize("text, ratio", [(TOO_LONG, 200000 / 215000), ("prompt is too long", None),
                                         ("1,500 tokens > 1,000 maximum", 1000 / 1500), ("3 tokens > 9", None),
                                         ("the request is ~215000 tokens (limit 200000) but", 200000 / 215000)])
def test_stated_ratio(text, ratio):
    assert overflow.stated_ratio(text) == ratio


def test_is_overflow_only_for_that_error():
    assert overflow.is_overflow("", "API Error: 400 prompt is too long: 5 tokens > 4 maximum")
    assert not overflow.is_overflow("rate limited", "overloaded")


@pytest.mark.e2e
def test_a_too_long_prompt_evicts_old_rows_and_retries_once_but_pins_alone_too_big_evict_nothing(scripted_api,
                                                                                                 session_factory):
    """Two overflows in one session: the first is cured by evicting old rows (the retry's CLI is
    kept), the second, with pins that alone are too big, names them and evicts nothing."""
    session = session_factory()
    ids = [session.store.append("user", f"OLD-{i} " + "filler " * 400) for i in range(6)]
    scripted_api.push(http_error(400, TOO_LONG, "invalid_request_error"), reply("fits now"))
    result = session.turn("NEW question")
    notices = [e.message for e in result.events if isinstance(e, ev.Notice)]
    assert any("prompt too long" in n and "retrying once" in n for n in notices), result.events
    assert not [e for e in result.events if isinstance(e, ev.ErrorEvent)]
    first, second = scripted_api.message_requests()
    assert "OLD-0 " in first.user_text() and "OLD-0 " not in second.user_text()
    assert "OLD-5 " in second.user_text() and "NEW question" in second.user_text()
    assert session.store.get(ids[0]).evicted and not session.store.get(ids[5]).evicted
    assert session.store.history()[-1].text == "fits now"

    # pins alone too big: the error names them, there is no retry and no row is evicted
    for label in ("huge-a", "huge-b"):
        session.store.upsert_slot(label, "user", "x " * 60_000)
    keep = session.store.append("user", "a normal row")
    scripted_api.push(http_error(400, TOO_LONG, "invalid_request_error"))
    result = session.turn("hello")
    errors = [e.message for e in result.events if isinstance(e, ev.ErrorEvent)]
    assert len(errors) == 1 and "huge-a" in errors[0] and "huge-b" in errors[0] and "unpin" in errors[0]
    assert len(scripted_api.message_requests()) == 3, "a retry was sent although only the pins were too big"
    assert not session.store.get(keep).evicted and not session.store.get(ids[5]).evicted
