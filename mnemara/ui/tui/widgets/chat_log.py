"""The chat log: a line-API scroll view that renders each entry once.

Appending an entry renders only that entry; streaming into the last entry
re-renders only that entry; the screen asks for visible lines only
(``render_line``), which are looked up by bisecting the entries' start lines.
So a log of thousands of messages costs O(new entry) per append, not O(log).
A resize re-wraps every entry once (the width changed, so every line did),
newest first and a chunk per step, so the visible part is right at once and
the screen keeps responding while older entries catch up.

Entries with a ``detail`` (tool calls, tool results, thinking) are shown
collapsed and toggle open with a click or with ``toggle(i)``.

The log follows new output while it is scrolled to the bottom. Scrolled up, it
stays where the user put it and its last line says "new output below, End to
follow" once something new arrives; :meth:`follow` (End) jumps down and follows
again. With the keyboard focus (Shift+Tab from the input) Up/Down
select an entry, Enter expands or collapses it, ``c`` copies it (its code block
when it has one; ``1``-``9`` pick a block) and Esc goes back to the input.

Assistant text with Markdown in it is drawn as Markdown (prose) and highlighted
code blocks (:mod:`mnemara.ui.text.rich_markdown`); a click on a code block copies it.
Text without Markdown syntax takes the plain fast path. A command's output of
several lines starts on the line under its label; ``columns`` entries (``/help``)
wrap their second column under itself.
"""
from __future__ import annotations

import time
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Any, ClassVar

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.segment import Segment
from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.timer import Timer

from mnemara.core.display import terminal_safe

REWRAP_CHUNK = 300  # entries re-wrapped per step after a resize (newest first)
STREAM_FRAME = 1 / 30  # seconds between re-draws of an entry that is streaming in (at least)
FRAME_BUDGET = 0.25  # at most this share of the time goes to re-drawing a streaming entry
KINDS = ("user", "assistant", "thinking", "tool", "result", "halt", "error", "info", "queued")
MARKER = " new output below, End to follow ↓ "
INDENT = 2  # body under its label


@dataclass
class LogEntry:
    """One thing shown in the log. ``detail`` makes it collapsible."""

    kind: str
    who: str
    text: str
    detail: str = ""
    expanded: bool = False
    columns: list[tuple[str, str]] | None = None  # a two-column listing (e.g. /help), wrapped per column
    expand_replaces: bool = False  # expanded, the detail is shown instead of the text (a preview of it)
    code_spans: list[tuple[int, int, str]] = field(default_factory=list, repr=False)  # (first, end, code) lines

    @property
    def markdown(self) -> bool:
        from mnemara.core.markdown_blocks import looks_like_markdown

        return self.kind == "assistant" and looks_like_markdown(self.text)

    @property
    def collapsible(self) -> bool:
        return bool(self.detail)

    def plain(self) -> str:
        """The entry as the user reads it (collapsed entries show their summary only)."""
        marker = ("▾ " if self.expanded else "▸ ") if self.collapsible else ""
        if self.collapsible and self.expanded:
            body = self.detail if self.expand_replaces else f"{self.text}\n{self.detail}"
        else:
            body = self.text
        return f"{marker}{self.who}: {body}"


class ChatLog(ScrollView, can_focus=True):
    """Scrollable, append-only chat transcript (presentation only; the store is elsewhere)."""

    FOCUS_ON_CLICK = False  # a click expands or copies; the typing stays in the input (Shift+Tab focuses the log)
    COMPONENT_CLASSES: ClassVar[set[str]] = {f"chat-log--{kind}" for kind in KINDS} | {
        "chat-log--selected", "chat-log--marker"}
    BINDINGS = [
        Binding("up", "select(-1)", "previous entry", show=False),
        Binding("down", "select(1)", "next entry", show=False),
        Binding("enter,space", "toggle_selected", "expand/collapse", show=False),
        Binding("c", "copy_selected", "copy", show=False),
        *(Binding(str(n), f"copy_block({n})", f"copy block {n}", show=False) for n in range(1, 10)),
        Binding("home", "first", "first entry", show=False),
        Binding("end", "bottom", "follow", show=False),
        Binding("escape,i", "leave", "back to the input", show=False),
    ]
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
        self._cleared = 0  # entries dropped by clear(): handles given out before stay unique (see append)
        self._strips: list[list[Strip]] = []
        self._starts: list[int] = []  # first line of each entry
        self._height = 0
        self._width = 0
        self.renders = 0  # how many entries were rendered (bench/tests read it)
        self._style_signature: tuple[str, ...] = ()
        self._stale: set[int] = set()
        self._flush_timer: Timer | None = None
        self._wrap_queue: list[int] = []
        self._frame = STREAM_FRAME  # grows when a long Markdown answer costs more to re-draw
        self.following = True  # scrolled to the bottom: new output scrolls into view
        self.unseen = False  # something arrived below while the user was scrolled up
        self.selected: int | None = None  # the entry the keyboard is on (index into entries)
        # The newest assistant entry: the answer ``/copy N`` reads, so only its captions name that command.
        self._last_answer: LogEntry | None = None

    # -- public API -------------------------------------------------------------
    def append(self, entry: LogEntry) -> int:
        """Add an entry at the bottom; returns its handle for :meth:`update_entry` / :meth:`entry_at`.

        Handles outlive :meth:`clear` (Ctrl+L): one given out before names no entry afterwards, never
        another entry, so a streaming turn or a queued message keeps working after the screen is cleared.
        Before any clear a handle is the entry's index in :attr:`entries`."""
        follow = self.following
        earlier_answer = self._last_answer if entry.kind == "assistant" else None
        if entry.kind == "assistant":
            self._last_answer = entry
        if earlier_answer is not None and earlier_answer.code_spans:
            self._rerender_entry(earlier_answer)  # its captions stop offering /copy N, which now reads this one
        self.entries.append(entry)
        strips = self._render_entry(entry) if self._width else []
        self._starts.append(self._height)
        self._strips.append(strips)
        self._height += len(strips)
        self._resized(follow)
        return self._cleared + len(self.entries) - 1

    def entry_at(self, handle: int) -> LogEntry | None:
        """The entry :meth:`append` returned ``handle`` for, or None when the screen was cleared since."""
        index = handle - self._cleared
        return self.entries[index] if 0 <= index < len(self.entries) else None

    def update_entry(self, index: int, text: str | None = None, detail: str | None = None) -> None:
        """Change an entry's text/detail in place; it is re-drawn (alone) at most every STREAM_FRAME seconds.

        Streaming calls this once per delta; coalescing keeps a long answer from
        being re-wrapped hundreds of times a second.
        """
        found = self.entry_at(index)
        if found is None:  # cleared off the screen (Ctrl+L): nothing left to update
            return
        entry, index = found, index - self._cleared
        if text is not None:
            entry.text = text
        if detail is not None:
            entry.detail = detail
        self._stale.add(index)
        if self._flush_timer is None and self._width:
            self._flush_timer = self.set_timer(self._frame, self._flush)

    def _flush(self) -> None:
        self._flush_timer = None
        stale, self._stale = self._stale, set()
        started = time.perf_counter()
        for index in sorted(stale):
            if index < len(self.entries):
                self._rerender(index)
        self._frame = max(STREAM_FRAME, (time.perf_counter() - started) / FRAME_BUDGET)

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
        self._cleared += len(self.entries)
        self.entries.clear()
        self._last_answer = None
        self.selected = None
        self.following, self.unseen = True, False
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
        head = Text()
        if entry.collapsible:
            head.append("▾ " if entry.expanded else "▸ ", style=label_style)
        head.append(f"{entry.who}: ", style=label_style + Style(bold=True))
        entry.code_spans = []
        # Everything drawn here may come from the model, a tool or a file: its control characters are
        # shown (\x1b), never handed to the terminal, which would obey them (conceal, title, clipboard).
        if entry.columns:
            columns = [(terminal_safe(left), terminal_safe(right)) for left, right in entry.columns]
            return self._render_parts([head, Padding(_columns(columns), (0, 0, 0, INDENT))])
        if entry.markdown:
            return self._render_markdown(entry, head)
        replaced = entry.expand_replaces and entry.collapsible and entry.expanded
        body = terminal_safe(entry.detail if replaced else entry.text)
        text = head
        if (entry.kind in ("info", "result") or replaced) and "\n" in body:
            text.append("\n")
            text.append(_indent(body))
        else:
            text.append(body)
        if entry.collapsible and entry.expanded and not replaced:
            text.append("\n" + terminal_safe(entry.detail), style=Style(dim=True))
        return self._render_parts([text])

    def _render_markdown(self, entry: LogEntry, head: Text) -> list[Strip]:
        """Label, then prose and code blocks; records which lines hold which code block (click to copy)."""
        from mnemara.ui.text.rich_markdown import blocks_for

        strips = self._render_parts([head])
        for block in blocks_for(terminal_safe(entry.text), copy_command=entry is self._last_answer):
            lines = self._render_parts([Padding(block.renderable, (0, 0, 0, INDENT))])
            if block.code is not None:
                entry.code_spans.append((len(strips), len(strips) + len(lines), block.code))
            strips += lines
        return strips

    def _render_parts(self, parts: list[RenderableType]) -> list[Strip]:
        console = self.app.console
        options = console.options.update_width(self._width)
        lines = Segment.split_lines(console.render(Group(*parts) if len(parts) > 1 else parts[0], options))
        strips = [Strip(line).adjust_cell_length(self._width) for line in lines]
        return strips or [Strip.blank(self._width)]

    def code_at_line(self, line: int) -> str | None:
        """The code block drawn on virtual line ``line``, if any."""
        index = self.entry_at_line(line)
        if index is None:
            return None
        offset = line - self._starts[index]
        for first, end, code in self.entries[index].code_spans:
            if first <= offset < end:
                return code
        return None

    def _label_style(self, kind: str) -> Style:
        """The label's colour and attributes from the .tcss; no background (that comes from the widget)."""
        st = self.get_component_rich_style(f"chat-log--{kind}", partial=True)
        return Style(color=st.color, bold=st.bold, italic=st.italic, dim=st.dim, reverse=st.reverse,
                     underline=st.underline)

    def _rerender_entry(self, entry: LogEntry) -> None:
        """Re-draw ``entry`` if it is still on screen (found from the newest end, where it usually is)."""
        for index in range(len(self.entries) - 1, -1, -1):
            if self.entries[index] is entry:
                self._rerender(index)
                return

    def _rerender(self, index: int) -> None:
        if not self._width:
            return
        follow = self.following
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
        follow = self.following
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
        grew = self._height > self.virtual_size.height
        self.virtual_size = Size(self._width, self._height)
        if follow:
            self.call_after_refresh(self._follow_end)
        elif grew and not self._at_bottom():
            self.unseen = True
        self.refresh()

    def _follow_end(self) -> None:
        """The deferred scroll down after new output, unless the user scrolled up meanwhile: a scroll
        queued before a PageUp or a wheel turn must not take the view back down."""
        if self.following:
            self.scroll_end(animate=False, immediate=True, x_axis=False)

    def stop_following(self) -> None:
        """The user scrolls up (PageUp, the wheel): stop following now, before that scroll is applied."""
        if self.scroll_y > 0:
            self.following = False

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        self.stop_following()

    def watch_scroll_y(self, old: float, new: float) -> None:
        """Scrolling up stops following; reaching the bottom again follows (and drops the marker)."""
        super().watch_scroll_y(old, new)
        if new >= self.max_scroll_y - 1:
            self.following, self.unseen = True, False
        elif new < old:
            self.following = False

    @property
    def marker_shown(self) -> bool:
        """The "new output below" line is drawn (scrolled up, and something arrived since)."""
        return self.unseen and not self.following

    def follow(self) -> None:
        """Jump to the newest output and follow it again (End)."""
        self.following, self.unseen = True, False
        self.scroll_end(animate=False, immediate=True, x_axis=False)
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
        if self.marker_shown and y == self.scrollable_content_region.height - 1:
            style = self.get_component_rich_style("chat-log--marker", partial=True)
            return Strip([Segment(MARKER.rjust(width)[-width:], self.rich_style + style)], width)
        line = scroll_y + y
        index = self.entry_at_line(line)
        if index is None:
            return Strip.blank(width, self.rich_style)
        strip = self._strips[index][line - self._starts[index]]
        strip = strip.crop_extend(scroll_x, scroll_x + width, self.rich_style).apply_style(self.rich_style)
        if index == self.selected and self.has_focus:
            strip = strip.apply_style(self.get_component_rich_style("chat-log--selected", partial=True))
        return strip

    # -- keyboard -----------------------------------------------------------------
    def on_focus(self) -> None:
        if self.selected is None or self.selected >= len(self.entries):
            self.selected = self._last_visible()
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    def _last_visible(self) -> int | None:
        if not self.entries:
            return None
        index = self.entry_at_line(int(self.scroll_y) + max(self.scrollable_content_region.height - 1, 0))
        return len(self.entries) - 1 if index is None else index

    def action_select(self, step: int) -> None:
        if not self.entries:
            return
        current = self.selected if self.selected is not None else len(self.entries)
        self.selected = max(0, min(len(self.entries) - 1, current + step))
        self._show_selected()

    def action_first(self) -> None:
        if self.entries:
            self.selected = 0
            self._show_selected()

    def _show_selected(self) -> None:
        index = self.selected
        if index is None:
            return
        top, height = self._starts[index], len(self._strips[index])
        view = self.scrollable_content_region.height
        if top < self.scroll_y or height > view:
            self.scroll_to(y=top, animate=False, immediate=True)
        elif top + height > self.scroll_y + view:
            self.scroll_to(y=top + height - view, animate=False, immediate=True)
        self.refresh()

    def action_toggle_selected(self) -> None:
        if self.selected is not None:
            self.toggle(self.selected)
            self._show_selected()

    def action_bottom(self) -> None:
        self.follow()
        if self.entries:
            self.selected = len(self.entries) - 1

    def action_copy_selected(self) -> None:
        """``c``: the selected entry's code block (when it has exactly one), else the whole entry."""
        if self.selected is None:
            return
        entry = self.entries[self.selected]
        blocks = [code for _, _, code in entry.code_spans]
        if len(blocks) == 1:
            self.copy_code(blocks[0])
            return
        text = entry.detail if entry.collapsible and entry.expand_replaces else (
            f"{entry.text}\n{entry.detail}" if entry.detail else entry.text)
        self._copy(text, f"the {entry.who} entry")

    def action_copy_block(self, n: int) -> None:
        """A digit: code block ``n`` of the selected entry."""
        if self.selected is None:
            return
        blocks = [code for _, _, code in self.entries[self.selected].code_spans]
        if n > len(blocks):
            self.app.notify(f"this entry has {len(blocks)} code block(s), not {n}", severity="warning")
            return
        self.copy_code(blocks[n - 1], f"code block {n}")

    def action_leave(self) -> None:
        self.screen.focus_next()

    def on_click(self, event: events.Click) -> None:
        line = self.scroll_offset.y + event.y
        code = self.code_at_line(line)
        if code is not None:
            self.copy_code(code)
            return
        index = self.entry_at_line(line)
        if index is not None:
            self.toggle(index)

    def copy_code(self, code: str, what: str = "the code block") -> None:
        """Put a code block on the clipboard (the user asked: a click, ``c`` or a digit) and say so."""
        self._copy(code, what)

    def _copy(self, text: str, what: str) -> None:
        from mnemara.ui.tui.clipboard import copy_for_user

        lines = text.count("\n") + 1
        self.app.notify(f"copied {what} ({lines} line{'s' if lines != 1 else ''}){copy_for_user(self.app, text)}",
                        timeout=3)


def _indent(text: str) -> str:
    pad = " " * INDENT
    return "\n".join(pad + line if line else line for line in text.split("\n"))


def _columns(rows: list[tuple[str, str]]) -> Any:
    """Two columns: the first never wraps, the second wraps under itself (not under column 0).

    A first cell longer than ``COLUMN_CAP`` gets a line of its own, its second cell
    going on the next line, so one long usage does not squeeze every description.
    """
    from mnemara.commands.core import COLUMN_CAP

    width = min(COLUMN_CAP, max(len(left) for left, _ in rows))
    parts: list[Any] = []
    table: Table | None = None
    for left, right in rows:
        if table is None:
            table = Table.grid(padding=(0, 2))
            table.add_column(no_wrap=True, width=width)
            table.add_column(ratio=1)
        if len(left) > COLUMN_CAP:
            if table.row_count:
                parts.append(table)
            parts.append(Text(left))
            table = None
            short = Table.grid(padding=(0, 2))
            short.add_column(no_wrap=True, width=width)
            short.add_column(ratio=1)
            short.add_row(Text(""), Text(right))
            parts.append(short)
        else:
            table.add_row(Text(left), Text(right))
    if table is not None and table.row_count:
        parts.append(table)
    return Group(*parts)
