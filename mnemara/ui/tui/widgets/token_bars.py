"""Horizontal bars: each part of the context against the window's token cap."""
from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.widget import Widget

from mnemara.context.breakdown import Breakdown
from mnemara.ui.tui.widgets.status_line import human_tokens

NAME_WIDTH = 16
FIGURE_WIDTH = 20


def bar(tokens: int, cap: int, width: int) -> tuple[str, str]:
    """(filled, empty) bar strings; anything above zero shows at least one cell."""
    if width <= 0:
        return "", ""
    filled = 0 if cap <= 0 else min(width, round(width * tokens / cap))
    if tokens > 0 and filled == 0:
        filled = 1
    return "█" * filled, "░" * (width - filled)


class TokenBars(Widget):
    """Renders a :class:`Breakdown`: per part a bar line and a dim note line, then the total."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"token-bars--fill", "token-bars--empty", "token-bars--over", "token-bars--note"}

    def __init__(self, breakdown: Breakdown, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.breakdown = breakdown

    def show(self, breakdown: Breakdown) -> None:
        self.breakdown = breakdown
        self.refresh(layout=True)

    def get_content_height(self, container, viewport, width: int) -> int:
        return len(self.breakdown.parts) + sum(1 for p in self.breakdown.parts if p.note) + 2

    def render(self) -> Text:
        b = self.breakdown
        width = max(4, self.content_region.width - NAME_WIDTH - FIGURE_WIDTH - 2)
        fill = self.get_component_rich_style("token-bars--fill", partial=True)
        empty = self.get_component_rich_style("token-bars--empty", partial=True)
        over = self.get_component_rich_style("token-bars--over", partial=True)
        muted = self.get_component_rich_style("token-bars--note", partial=True)
        out = Text(no_wrap=True, overflow="ellipsis", end="")
        rows = [(p.name, p.tokens, p.note) for p in b.parts] + [("", 0, ""), ("total", b.total, "")]
        for name, tokens, note in rows:
            if not name:
                out.append("\n")
                continue
            full, rest = bar(tokens, b.cap, width)
            pct = 100 * tokens / b.cap if b.cap else 0
            out.append(f"{name:<{NAME_WIDTH}}")
            out.append(full, style=over if tokens > b.cap else fill)
            out.append(rest, style=empty)
            figure = f" {human_tokens(tokens):>5}/{human_tokens(b.cap)} {pct:5.1f}%"
            out.append(figure + "\n")
            if note:
                out.append(" " * NAME_WIDTH + note + "\n", style=muted)
        out.rstrip()
        return out
