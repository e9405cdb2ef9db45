"""The chat log: a line-API scroll view that renders each entry once.

Appending an entry renders only that entry; streaming into the last entry
re-renders only that entry; the screen asks for visible lines only
(``render_line``), which are looked up by bisecting the entries' start lines.
So a log of thousands of messages costs O(new entry) per append, not O(log).
A resize re-wraps every entry once (the width changed, so every line did),
newest first and a chunk per step, so the visible part is right at once and
the screen keeps responding while older entries catch up.

Entries with a ``detail`` (tool calls, tool results, thinking) are shown
collapsed to one line and toggle open with a click or with ``toggle(i)``.
"""
from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.timer import Timer

REWRAP_CHUNK = 300  # entries re-wrapped per step after a resize (newest first)
STREAM_FRAME = 1 / 30  # seconds between re-draws of an entry that is streaming in
KINDS = ("user", "assistant", "thinking", "tool", "result", "halt", "error", "info")


@dataclass
class LogEntry:
    """One thing shown in the log. ``detail`` makes it collapsible."""

    kind: str
    who: str
    text: str
    detail: str = ""
    expanded: bool = False

    @property
    def collapsible(self) -> bool:
        return bool(self.detail)

    def plain(self) -> str:
        """The entry as the user reads it (collapsed entries show their summary only)."""
        marker = ("▾ " if self.expanded else "▸ ") if self.collapsible else ""
        body = self.text + (f"\n{self.detail}" if self.collapsible and self.expanded else "")
        return f"{marker}{self.who}: {body}"


class ChatLog(ScrollView, can_focus=False):
    """Scrollable, append-only chat transcript (presentation only; the store is elsewhere)."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {f"chat-log--{kind}" for kind in KINDS}
    # The scrollbar is always there, so the text width does not change when the log outgrows the screen.
    DEFAULT_CSS = """
    ChatLog {
        overflow-y: scroll;
        overflow-x: hidden;
    }
    """

    class Toggled(Message):
        """An entry was expanded or collapsed."""

        def __init__(self, index: int, expanded: bool) -> None:
            super().__init__()
            self.index = index
            self.expanded = expanded

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.entries: list[LogEntry] = []
        self._strips: list[list[Strip]] = []
        self._starts: list[int] = []  # first line of each entry
        self._height = 0
        self._width = 0
        self.renders = 0  # how many entries were rendered (bench/tests read it)
        self._style_signature: tuple[str, ...] = ()
        self._stale: set[int] = set()
        self._flush_timer: Timer | None = None
        self._wrap_queue: list[int] = []

    # -- public API -------------------------------------------------------------
    def append(self, entry: LogEntry) -> int:
        """Add an entry at the bottom; returns its index."""
        follow = self._at_bottom()
        self.entries.append(entry)
        strips = self._render_entry(entry) if self._width else []
        self._starts.append(self._height)
        self._strips.append(strips)
        self._height += len(strips)
        self._resized(follow)
        return len(self.entries) - 1

    def update_entry(self, index: int, text: str | None = None, detail: str | None = None) -> None:
        """Change an entry's text/detail in place; it is re-drawn (alone) at most every STREAM_FRAME seconds.

        Streaming calls this once per delta; coalescing keeps a long answer from
        being re-wrapped hundreds of times a second.
        """
        entry = self.entries[index]
        if text is not None:
            entry.text = text
        if detail is not None:
            entry.detail = detail
        self._stale.add(index)
        if self._flush_timer is None and self._width:
            self._flush_timer = self.set_timer(STREAM_FRAME, self._flush)

    def _flush(self) -> None:
        self._flush_timer = None
        stale, self._stale = self._stale, set()
        for index in sorted(stale):
            if index < len(self.entries):
                self._rerender(index)

    def toggle(self, index: int) -> bool:
        """Expand or collapse a collapsible entry; returns its new state."""
        entry = self.entries[index]
        if not entry.collapsible:
            return False
        entry.expanded = not entry.expanded
        self._rerender(index)
        self.post_message(self.Toggled(index, entry.expanded))
        return entry.expanded

    def clear(self) -> None:
        """Forget everything on screen (the turn store is not involved)."""
        self._stale.clear()
        self._wrap_queue.clear()
        self.entries.clear()
        self._strips.clear()
        self._starts.clear()
        self._height = 0
        self.virtual_size = Size(self._width, 0)
        self.scroll_to(0, 0, animate=False)
        self.refresh()

    def plain_text(self) -> str:
        return "\n".join(entry.plain() for entry in self.entries)

    def entry_at_line(self, line: int) -> int | None:
        """Index of the entry drawn on virtual line ``line`` (None past the end)."""
        if line < 0 or line >= self._height or not self._starts:
            return None
        return bisect_right(self._starts, line) - 1

    # -- rendering --------------------------------------------------------------
    def _render_entry(self, entry: LogEntry) -> list[Strip]:
        self.renders += 1
        label_style = self._label_style(entry.kind)
        text = Text()
        if entry.collapsible:
            text.append("▾ " if entry.expanded else "▸ ", style=label_style)
        text.append(f"{entry.who}: ", style=label_style + Style(bold=True))
        text.append(entry.text)
        if entry.collapsible and entry.expanded:
            text.append("\n" + entry.detail, style=Style(dim=True))
        console = self.app.console
        options = console.options.update_width(self._width)
        lines = Segment.split_lines(console.render(text, options))
        strips = [Strip(line).adjust_cell_length(self._width) for line in lines]
        return strips or [Strip.blank(self._width)]

    def _label_style(self, kind: str) -> Style:
        """The label's colour and attributes from the .tcss; no background (that comes from the widget)."""
        st = self.get_component_rich_style(f"chat-log--{kind}", partial=True)
        return Style(color=st.color, bold=st.bold, italic=st.italic, dim=st.dim, reverse=st.reverse,
                     underline=st.underline)

    def _rerender(self, index: int) -> None:
        if not self._width:
            return
        follow = self._at_bottom()
        old = len(self._strips[index])
        self._strips[index] = self._render_entry(self.entries[index])
        delta = len(self._strips[index]) - old
        if delta:
            for i in range(index + 1, len(self._starts)):
                self._starts[i] += delta
            self._height += delta
        self._resized(follow)

    def _rewrap_all(self) -> None:
        """Re-wrap every entry for a new width: the newest first, in chunks, so the screen never stalls."""
        self._wrap_queue = list(range(len(self.entries)))
        self._rewrap_step()

    def _rewrap_step(self) -> None:
        follow = self._at_bottom()
        queue = self._wrap_queue
        for _ in range(min(REWRAP_CHUNK, len(queue))):
            index = queue.pop()
            if index < len(self.entries):
                self._strips[index] = self._render_entry(self.entries[index])
        total = 0
        for index, strips in enumerate(self._strips):
            self._starts[index] = total
            total += len(strips)
        self._height = total
        self._resized(follow)
        if queue:
            self.call_later(self._rewrap_step)

    def _at_bottom(self) -> bool:
        return self.scroll_y >= self.max_scroll_y - 1

    def _resized(self, follow: bool) -> None:
        self.virtual_size = Size(self._width, self._height)
        if follow:
            self.scroll_end(animate=False, immediate=False, x_axis=False)
        self.refresh()

    def on_resize(self, event: events.Resize | None = None) -> None:
        width = self.scrollable_content_region.width
        if width and width != self._width:
            self._width = width
            self._rewrap_all()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        try:
            signature = tuple(str(self._label_style(kind)) for kind in KINDS)
        except KeyError:  # component styles are not set up before the widget is mounted
            return
        if signature != self._style_signature:
            self._style_signature = signature
            if self._width and self.entries:
                self._rewrap_all()

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        if width != self._width and width:
            self.call_later(self.on_resize)  # the text width changed without a Resize (e.g. a scrollbar)
        line = scroll_y + y
        index = self.entry_at_line(line)
        if index is None:
            return Strip.blank(width, self.rich_style)
        strip = self._strips[index][line - self._starts[index]]
        return strip.crop_extend(scroll_x, scroll_x + width, self.rich_style).apply_style(self.rich_style)

    def on_click(self, event: events.Click) -> None:
        index = self.entry_at_line(self.scroll_offset.y + event.y)
        if index is not None:
            self.toggle(index)
