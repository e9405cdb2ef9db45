"""Streaming Markdown for the terminal REPL: each block is printed once, when it is complete.

Deltas are buffered; a paragraph is drawn (through Rich, code highlighted) when
the blank line after it arrives, a fenced code block when its closing fence
does. Nothing printed is ever redrawn, so there is no flicker and the cost per
delta is a scan of the new text. A long line of prose is drawn in pieces (cut
at a space where no ``**`` or backtick is left open) so the answer keeps moving
as it streams.

Code blocks are numbered across the session, not per answer: a caption scrolled up still
names the block ``/copy N`` copies (``code_blocks``, shared by every answer's stream, holds
them in that order; :mod:`mnemara.commands.copy` reads it).
"""
from __future__ import annotations

import re
from typing import Any, TextIO

from mnemara.ui.text.rich_markdown import blocks_for

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_TRAILING = re.compile(r"[ \t]+((?:\x1b\[[0-9;]*m)*)$")  # padding before the line's closing style codes
LONG_PARAGRAPH = 600  # characters after which an unfinished paragraph is drawn anyway


class MarkdownStream:
    def __init__(self, out: TextIO, width: int | None = None, code_blocks: list[str] | None = None) -> None:
        from rich.console import Console

        self.out = out
        # one column narrower than the terminal and no trailing padding: a full-width line would leave the
        # terminal in its pending-wrap state and the next prompt would be drawn a line off
        self.console: Any = Console(width=max(20, (width or 80) - 1), force_terminal=True, highlight=False)
        self._pending = ""  # complete lines not drawn yet
        self._partial = ""  # the line being typed out
        self._fence = ""
        self.blocks = 0  # how many blocks were drawn (tests read it)
        self.code_blocks = code_blocks if code_blocks is not None else []  # every code block numbered so far

    def feed(self, text: str) -> None:
        lines = (self._partial + text).split("\n")
        self._partial = lines.pop()
        for line in lines:
            self._line(line)
        while not self._fence and len(self._partial) > self.console.width and not _FENCE.match(self._partial):
            if not self._draw_piece():
                break

    def _draw_piece(self) -> bool:
        """Draw one screen line of a long streaming line, cut at a safe space; the rest waits for more text."""
        cut = self.console.width + 1
        while True:
            cut = self._partial.rfind(" ", 0, cut)
            if cut <= 0:
                return False
            head = self._partial[:cut]
            if head.count("**") % 2 == 0 and head.count("`") % 2 == 0:
                break
        self._pending += head
        self._partial = self._partial[cut + 1:]
        self._draw()
        return True

    def _line(self, line: str) -> None:
        match = _FENCE.match(line)
        self._pending += line + "\n"
        if self._fence:
            if match and match.group(1)[0] == self._fence[0] and not line.strip()[len(match.group(1)):].strip():
                self._fence = ""
                self._draw()
            return
        if match:
            before = self._pending[: -len(line) - 1]
            if before.strip():
                self._pending = before
                self._draw()
                self._pending = line + "\n"
            self._fence = match.group(1)
        elif not line.strip() or len(self._pending) > LONG_PARAGRAPH:
            self._draw()

    def _draw(self) -> None:
        text, self._pending = self._pending.strip("\n"), ""
        if not text.strip():
            return
        with self.console.capture() as capture:
            for block in blocks_for(text, first_number=len(self.code_blocks) + 1, clickable=False):
                self.console.print(block.renderable)
                if block.code is not None and not block.caption:
                    self.code_blocks.append(block.code)
        drawn = capture.get()
        self.out.write("\n".join(_TRAILING.sub(r"\1", line) for line in drawn.split("\n")))
        self.blocks += 1

    def flush(self) -> None:
        """The answer ended: draw whatever is left (an unclosed code block too)."""
        if self._partial:
            self._pending += self._partial
            self._partial = ""
        self._fence = ""
        self._draw()
