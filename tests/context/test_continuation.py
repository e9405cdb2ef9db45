"""The one rule of a continued CLI conversation: it continues only while the window only grew."""
from __future__ import annotations

from mnemara.context.continuation import Conversation, continues, row_prints
from mnemara.store.rows import Turn, Window


def row(i: int, text: str, role: str = "user", **meta) -> Turn:
    return Turn(id=i, role=role, blocks=[{"type": "text", "text": text}], tokens=len(text) // 4 + 1,
                created_at="2026-12-01T00:00:00", meta=meta)


def conv(rows: list[Turn], layout: str = "cache", carried: int = 0) -> Conversation:
    return Conversation("uuid-1", row_prints(rows), layout, carried_tokens=carried)


def ask(c: Conversation | None, window: Window, exclude=(99,), layout="cache", cap=200_000) -> str | None:
    return continues(c, window, exclude, layout=layout, max_tokens=cap)


def test_a_window_that_only_grew_continues():
    first, answer = [row(1, "hi"), row(2, "hello", "assistant")], [row(3, "next"), row(4, "ok", "assistant")]
    grown = conv(first).grown(answer, part_tokens=10, continued=False)
    assert grown.rows == row_prints(first + answer) and grown.carried_tokens == 10 and grown.turns == 1
    assert ask(grown, Window(pinned=[], rows=[*first, *answer, row(99, "new message")])) is None
    again = grown.grown([row(5, "q"), row(6, "a", "assistant")], part_tokens=5, continued=True)
    assert again.turns == 2 and again.carried_tokens == 15


def test_every_change_but_growth_rebuilds():
    rows = [row(1, "hi"), row(2, "hello", "assistant"), row(3, "more")]
    c = conv(rows)
    new = row(99, "new message")
    assert ask(None, Window(pinned=[], rows=[*rows, new])) == "no conversation to continue"
    assert "window changed" in ask(c, Window(pinned=[], rows=[*rows[1:], new]))  # a trim
    assert "window changed" in ask(c, Window(pinned=[], rows=[rows[0], rows[2], new]))  # an eviction, a pin
    assert "window changed" in ask(c, Window(pinned=[], rows=[row(1, "hi (edited)"), *rows[1:], new]))  # an edit
    assert "window changed" in ask(c, Window(pinned=[], rows=[row(1, "hi", interrupted=True), *rows[1:], new]))
    assert "window changed" in ask(c, Window(pinned=[], rows=[*rows, row(50, "imported"), new]))  # a row added
    assert "window changed" in ask(c, Window(pinned=[], rows=[*rows[::-1], new]))  # same rows, other order
    assert ask(c, Window(pinned=[], rows=[*rows, new]), layout="spec") == "request_layout changed"
    damaged = Window(pinned=[], rows=[*rows, new], damaged=[row(7, "?")])
    assert ask(c, damaged) == "a damaged row is left out"


def test_carried_slots_and_blocks_count_against_the_token_cap():
    rows = [row(1, "x" * 400)]
    window = Window(pinned=[], rows=[*rows, row(99, "y")])
    assert ask(conv(rows, carried=0), window, cap=window.tokens) is None
    assert ask(conv(rows, carried=1), window, cap=window.tokens) == "the conversation would pass max_window_tokens"


def test_a_conversation_the_api_counted_near_full_rebuilds():
    """Near a full context the CLI would compact a conversation of its own; a rebuilt one starts fresh."""
    from mnemara.context.continuation import COMPACT_GUARD_TOKENS

    rows, answer = [row(1, "hi")], [row(2, "q"), row(3, "a", "assistant")]
    window = Window(pinned=[], rows=[*rows, *answer, row(99, "new")])
    under = conv(rows).grown(answer, part_tokens=0, continued=False, prompt_tokens=COMPACT_GUARD_TOKENS)
    assert under.prompt_tokens == COMPACT_GUARD_TOKENS and ask(under, window) is None
    over = conv(rows).grown(answer, part_tokens=0, continued=False, prompt_tokens=COMPACT_GUARD_TOKENS + 1)
    assert ask(over, window) == (f"the conversation's last prompt ({COMPACT_GUARD_TOKENS + 1} tokens) "
                                 "nears the CLI's own compaction")
