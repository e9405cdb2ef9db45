"""Assistant Markdown as Rich renderables, shared by the panel's chat log and the terminal REPL.

Prose goes through ``rich.markdown.Markdown``; each fenced code block becomes a
``rich.syntax.Syntax`` (highlighted by Pygments) under a one-line caption that
numbers it for ``/copy N`` (the panel also copies it on click). Rich's Markdown
and Pygments are imported on the first Markdown answer, not at start-up.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mnemara.core.markdown_blocks import split_parts

CODE_THEME = "monokai"


@dataclass
class Block:
    """One renderable piece; ``code`` is set for a code block (what a copy takes)."""

    renderable: Any
    code: str | None = None
    caption: bool = False  # the caption line above a code block


def code_caption(number: int, lang: str, closed: bool, clickable: bool = True, copy_command: bool = True) -> str:
    """The line above a code block; ``clickable`` only where a click copies it (the panel).

    ``copy_command`` names ``/copy N`` only where that command would take this very block: the panel
    numbers blocks per answer and ``/copy N`` reads the last answer, so an older answer's caption
    offers the click alone."""
    what = lang or "code"
    if clickable:
        how = f"click or /copy {number} to copy" if copy_command else "click to copy"
    else:
        how = f"/copy {number} copies it"
    return f"── {what} · block {number} · {how}" + ("" if closed else " · streaming…")


_PARSER: Any = None


def _markdown(text: str) -> Any:
    """``rich.markdown.Markdown`` parsed with one shared markdown-it parser.

    Rich builds a new parser per ``Markdown`` (most of its cost for a short
    answer); the log renders thousands of entries, so the parser is built once
    and the object is filled the way ``Markdown.__init__`` does.
    """
    global _PARSER
    from rich.markdown import Markdown

    if _PARSER is None:
        from markdown_it import MarkdownIt

        _PARSER = MarkdownIt().enable("strikethrough").enable("table")
    md = Markdown.__new__(Markdown)
    md.markup, md.parsed = text, _PARSER.parse(text)
    md.code_theme, md.justify, md.style, md.hyperlinks = CODE_THEME, None, "none", True
    md.inline_code_lexer, md.inline_code_theme = None, CODE_THEME
    return md


def blocks_for(text: str, first_number: int = 1, clickable: bool = True, copy_command: bool = True) -> list[Block]:
    """Prose and code of ``text`` as renderables, in order; code blocks are numbered from ``first_number``
    (the REPL numbers them across the session) and captioned by :func:`code_caption`."""
    from rich.syntax import Syntax
    from rich.text import Text

    out: list[Block] = []
    number = first_number - 1
    for part in split_parts(text):
        if part.is_code:
            number += 1
            caption = code_caption(number, part.lang or "", part.closed, clickable, copy_command)
            out.append(Block(Text(caption, style="dim"), part.text, True))
            out.append(Block(Syntax(part.text, part.lang or "text", theme=CODE_THEME, word_wrap=True,
                                    background_color="default"), part.text))
        else:
            out.append(Block(_markdown(part.text)))
    return out
