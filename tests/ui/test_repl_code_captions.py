"""REPL code-block captions (issue 27): numbered across the session, not from 1 in every block or
answer, and without "click" (a terminal REPL has nothing to click); /copy N copies the block its
caption numbers."""
from __future__ import annotations

import io

from mnemara.commands import dispatch
from mnemara.core import events as ev
from mnemara.ui.repl.app import Renderer

ANSWER_ONE = "First:\n\n```python\nprint(1)\n```\n\nand\n\n```sh\necho two\n```\n"
ANSWER_TWO = "Then:\n\n```python\nprint(3)\n```\n\nlast\n\n```\nfour\n```\n"


def _answer(render: Renderer, text: str) -> None:
    for piece in text.split(" "):
        render(ev.TextDelta(piece + " "))
    render(ev.AssistantText(text))
    render(ev.TurnDone())


def test_captions_number_every_block_of_the_session_and_never_say_click() -> None:
    out = io.StringIO()
    render = Renderer(out, io.StringIO(), markdown=True)
    _answer(render, ANSWER_ONE)
    _answer(render, ANSWER_TWO)
    shown = out.getvalue()
    for number, lang in ((1, "python"), (2, "sh"), (3, "python"), (4, "code")):
        assert f"{lang} · block {number} · /copy {number} copies it" in shown, shown
    assert "click" not in shown and "block 1" in shown and shown.count("block 1 ") == 1
    assert [code.strip() for code in render.code_blocks] == ["print(1)", "echo two", "print(3)", "four"]


def test_copy_n_takes_the_block_its_caption_numbers(session_factory) -> None:
    session = session_factory("captions")
    session.store.append("user", "hi")
    session.store.append("assistant", ANSWER_TWO)  # the last answer holds only 2 blocks
    render = Renderer(io.StringIO(), io.StringIO(), markdown=True)
    session.shown_code_blocks = render.code_blocks  # what the terminal REPL does
    _answer(render, ANSWER_ONE)
    _answer(render, ANSWER_TWO)
    third = dispatch(session, "/copy 3")
    assert third.ok and third.action == "copy" and third.payload.text.strip() == "print(3)"
    assert dispatch(session, "/copy").payload.text.strip() == "four"  # no N: the last block shown
    assert dispatch(session, "/copy all").payload.text == ANSWER_TWO
    missing = dispatch(session, "/copy 5")
    assert not missing.ok and "this session has shown 4" in missing.text


def test_without_numbered_captions_copy_counts_the_last_answer(session_factory) -> None:
    session = session_factory("captions2")
    session.store.append("assistant", ANSWER_ONE)
    assert dispatch(session, "/copy 2").payload.text.strip() == "echo two"
    assert "has 2 code block(s), not 3" in dispatch(session, "/copy 3").text
