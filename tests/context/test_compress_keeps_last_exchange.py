"""/compress never empties the window: the last exchange stays, whatever the target."""
from __future__ import annotations

import pytest

from mnemara.commands import dispatch
from mnemara.context import compress

LONG = "a long answer with many words in it. " * 300  # about 2,900 tokens


@pytest.fixture
def ctx(session_factory):
    return session_factory("squeeze")


def _two_long_answers(ctx) -> list[int]:
    ids = []
    for question in ("tell me about A", "and about B"):
        ids.append(ctx.store.append("user", question))
        ids.append(ctx.store.append("assistant", LONG))
    return ids


def test_the_issue_sequence_keeps_the_last_exchange(ctx):
    assert dispatch(ctx, "/tokens 8000").ok
    ids = _two_long_answers(ctx)
    ask = dispatch(ctx, "/compress")
    assert ask.action == "confirm"
    done = dispatch(ctx, ask.payload.command)
    assert done.ok
    live = [t.id for t in ctx.store.live_rows()]
    assert live == ids[2:]  # the last question and its answer
    assert "~0 tokens" not in done.text and "last exchange" in done.text
    window = ctx.window()
    assert [t.id for t in window.rows] == ids[2:]
    assert dispatch(ctx, "/undo").ok and [t.id for t in ctx.store.live_rows()] == ids


def test_plan_never_takes_the_newest_user_row_or_what_follows(ctx):
    ids = _two_long_answers(ctx)
    plan = compress.plan_compress(ctx.store, 1)
    assert [t.id for t in plan.fifo] == ids[:2]
    assert plan.kept_last == ids[2:]


def test_only_the_last_exchange_left_is_nothing_to_compress(ctx):
    assert dispatch(ctx, "/tokens 8000").ok
    ctx.store.append("user", "one question")
    ctx.store.append("assistant", LONG)
    answer = dispatch(ctx, "/compress --yes")
    assert answer.ok and "nothing to compress" in answer.text and "last exchange" in answer.text
    assert len(ctx.store.live_rows()) == 2
