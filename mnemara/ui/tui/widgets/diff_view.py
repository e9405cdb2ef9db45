"""A change preview's diff in the permission modal, drawn only where it is visible.

A 400-line diff in a ``Static`` is wrapped and drawn whole every time the modal is laid out
(about 200 ms on a loaded 2-core machine). :class:`DiffView` wraps the lines once per width
(cell-aware, so nothing runs past the edge: every character stays on screen, never cut) and
draws a row only when the compositor asks for it, so the cost is the rows on screen.
Lines are text with a style by their kind (removed red, added green); nothing is parsed as markup.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from rich.cells import chop_cells
from rich.segment import Segment
from rich.style import Style
from textual.geometry import Size
from textual.strip import Strip
from textual.widget import Widget

if TYPE_CHECKING:
    from mnemara.guard.change_preview import ChangePreview

#: Styles of a diff's lines by :attr:`mnemara.guard.change_preview.DiffLine.kind`.
DIFF_STYLES = {"-": Style(color="red"), "+": Style(color="green"), "hunk": Style(color="cyan"),
               "header": Style(bold=True), "note": Style(dim=True, italic=True)}


class DiffView(Widget):
    """The lines of a :class:`~mnemara.guard.change_preview.ChangePreview`, wrapped to the width."""

    DEFAULT_CSS = "DiffView { height: auto; }"

    def __init__(self, change: ChangePreview, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.lines: list[tuple[str, str]] = [(line.kind, line.text) for line in change.lines]
        self._rows: list[tuple[str, Style | None]] = []
        self._rows_width = -1
        self._strips: dict[int, Strip] = {}  # drawn rows at this width and style (a scroll redraws none)

    @property
    def plain_text(self) -> str:
        """The diff as shown, one line per diff line (tests and copies read it)."""
        return "\n".join(text for _, text in self.lines)

    def _wrap(self, width: int) -> list[tuple[str, Style | None]]:
        if width != self._rows_width:
            rows: list[tuple[str, Style | None]] = []
            for kind, text in self.lines:
                style = DIFF_STYLES.get(kind)
                rows += [(chunk, style) for chunk in (chop_cells(text, width) if text else [""])]
            self._rows, self._rows_width = rows, width
            self._strips = {}
        return self._rows

    def notify_style_update(self) -> None:
        self._strips = {}
        super().notify_style_update()

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self._wrap(max(1, width)))

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        rows = self._wrap(max(1, width))
        strip = self._strips.get(y)
        if strip is None:
            base = self.rich_style
            if y >= len(rows):
                return Strip.blank(width, base)
            text, style = rows[y]
            strip = self._strips[y] = Strip([Segment(text, base + style if style else base)]).adjust_cell_length(
                width, base)
        return strip
