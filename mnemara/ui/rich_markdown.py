"""Assistant Markdown as Rich renderables, shared by the panel's chat log and the terminal REPL.

Prose goes through ``rich.markdown.Markdown``; each fenced code block becomes a
``rich.syntax.Syntax`` (highlighted by Pygments) under a one-line caption that
numbers it for ``/copy N`` (the panel also copies it on click). Rich's Markdown
and Pygments are imported on the first Markdown answer, not at start-up.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mnemara.markdown_blocks import split_parts

CODE_THEME = "monokai"


@dataclass
class Block:
    """One renderable piece; ``code`` is set for a code block (what a copy takes)."""

    renderable: Any
    code: str | None = None
    caption: bool = False  # the caption line above a code block


def code_caption(number: int, lang: str, closed: bool) -> str:
    what = lang or "code"
    return f"── {what} · block {number} · click or /copy {number} to copy" + ("" if closed else " · streaming…")


def blocks_for(text: str) -> list[Block]:
    """Prose and code of ``text`` as renderables, in order."""
    from rich.markdown import Markdown
    from rich.syntax import Syntax
    from rich.text import Text

    out: list[Block] = []
    number = 0
    for part in split_parts(text):
        if part.is_code:
            number += 1
            out.append(Block(Text(code_caption(number, part.lang or "", part.closed), style="dim"), part.text, True))
            out.append(Block(Syntax(part.text, part.lang or "text", theme=CODE_THEME, word_wrap=True,
                                    background_color="default"), part.text))
        else:
            out.append(Block(Markdown(part.text, code_theme=CODE_THEME)))
    return out
