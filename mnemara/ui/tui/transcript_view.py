"""Turn events and stored rows into chat-log entries (presentation only).

``TurnView`` follows one turn's events (``mnemara.core.events``) and writes them
into a log: streamed text grows one assistant entry, tool calls and results
become collapsed entries, halts and errors are shown as such. ``entries_for``
renders a stored row the same way, so the history shown at start-up looks
like the live turns did.
"""
from __future__ import annotations

import json
from typing import Any, Protocol

from mnemara.core import events as ev
from mnemara.store.rows import Turn
from mnemara.core.display import terminal_safe
from mnemara.ui.text.readable import preview_lines, readable_result
from mnemara.ui.tui.widgets.chat_log import LogEntry

SUMMARY_CHARS = 100
RESULT_PREVIEW_LINES = 3  # lines of a tool result shown before a click expands it
INTERRUPTED = "this answer was interrupted; what arrived before the stop is kept"


class LogSink(Protocol):
    def append(self, entry: LogEntry) -> int: ...

    def update_entry(self, index: int, text: str | None = None, detail: str | None = None) -> None: ...


def one_line(text: str, limit: int = SUMMARY_CHARS) -> str:
    flat = " ".join(terminal_safe(str(text)).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def short_tool_name(name: str) -> str:
    """``mcp__mnemara__write_memory`` -> ``mnemara.write_memory``; built-ins unchanged."""
    if name.startswith("mcp__"):
        parts = name.split("__", 2)
        if len(parts) == 3:
            return f"{parts[1]}.{parts[2]}"
    return name


def tool_entry(name: str, tool_input: object) -> LogEntry:
    args = tool_input if isinstance(tool_input, dict) else {"input": tool_input}
    summary = " ".join(f"{k}={one_line(str(v), 40)}" for k, v in args.items() if isinstance(v, (str, int, float, bool)))
    detail = json.dumps(tool_input, ensure_ascii=False, indent=2, sort_keys=True, default=str)
    return LogEntry("tool", "tool", one_line(f"{short_tool_name(name)} {summary}".strip()), detail or "{}")


def result_entry(content: object, is_error: bool = False) -> LogEntry:
    """A tool result: pretty JSON / plain text, its first lines shown, the rest on click."""
    text = readable_result(content)
    who = "result (error)" if is_error else "result"
    lines = text.split("\n")
    if len(lines) <= RESULT_PREVIEW_LINES and all(len(line) <= SUMMARY_CHARS for line in lines):
        return LogEntry("result", who, text or "(empty)", text, expand_replaces=True)  # all of it shows already
    preview = preview_lines(text, RESULT_PREVIEW_LINES, SUMMARY_CHARS)
    if len(lines) > RESULT_PREVIEW_LINES:
        preview += ", click to expand"
    return LogEntry("result", who, preview, text, expand_replaces=True)


def error_entry(message: str) -> LogEntry:
    """An error as ONE line at once; anything after the first line is a click away."""
    first, _, rest = str(message).strip().partition("\n")
    return LogEntry("error", "error", first, rest.strip())


def thinking_entry(text: str) -> LogEntry:
    return LogEntry("thinking", "thinking", one_line(text, 60), text)


def entries_for(turn: Turn, assistant_name: str) -> list[LogEntry]:
    """A stored row as log entries (text, thinking, tool calls and results)."""
    out: list[LogEntry] = []
    who = assistant_name if turn.role == "assistant" else ("you" if turn.role == "user" else turn.role)
    if turn.pinned:
        who = f"📌 {turn.slot_pos:02d} slot: {turn.pin_label} ({who})"
    kind = "assistant" if turn.role == "assistant" else ("user" if turn.role == "user" else "info")
    for block in turn.blocks:
        btype = block.get("type")
        if btype == "text" and block.get("text"):
            out.append(LogEntry(kind, who, block["text"]))
        elif btype == "thinking":
            out.append(thinking_entry(block.get("thinking", "")))
        elif btype == "tool_use":
            out.append(tool_entry(block.get("name", "?"), block.get("input", {})))
        elif btype == "tool_result":
            out.append(result_entry(block.get("content"), bool(block.get("is_error"))))
    if turn.role == "assistant" and turn.meta.get("interrupted"):
        out.append(LogEntry("info", "stopped", INTERRUPTED))
    return out


class TurnView:
    """Writes the events of one turn into a log as they arrive."""

    def __init__(self, log: LogSink, assistant_name: str) -> None:
        self.log = log
        self.assistant_name = assistant_name
        self._streaming: int | None = None  # index of the assistant entry receiving deltas
        self._streamed = ""
        self.done: Any = None
        self.errors = 0

    @property
    def completed(self) -> bool:
        """The turn ended normally: a TurnDone, not interrupted, no error."""
        done = self.done
        return (done is not None and not getattr(done, "interrupted", False)
                and not getattr(done, "error", None) and not self.errors)

    def _end_stream(self) -> None:
        self._streaming = None
        self._streamed = ""

    def feed(self, event: ev.Event) -> None:
        """Render one event of the turn (matched by its type)."""
        if isinstance(event, ev.TextDelta):
            self._on_TextDelta(event)
        elif isinstance(event, ev.AssistantText):
            self._on_AssistantText(event)
        elif isinstance(event, ev.ThinkingBlock):
            self._on_ThinkingBlock(event)
        elif isinstance(event, ev.ToolUse):
            self._on_ToolUse(event)
        elif isinstance(event, ev.ToolResult):
            self._on_ToolResult(event)
        elif isinstance(event, ev.Halt):
            self._on_Halt(event)
        elif isinstance(event, ev.ErrorEvent):
            self._on_ErrorEvent(event)
        elif isinstance(event, ev.Notice):
            self._on_Notice(event)
        elif isinstance(event, ev.TurnDone):
            self._on_TurnDone(event)

    def _on_TextDelta(self, event: ev.TextDelta) -> None:
        self._streamed += event.text
        if self._streaming is None:
            self._streaming = self.log.append(LogEntry("assistant", self.assistant_name, self._streamed))
        else:
            self.log.update_entry(self._streaming, text=self._streamed)

    def _on_AssistantText(self, event: ev.AssistantText) -> None:
        if self._streaming is not None:
            if event.text and event.text != self._streamed:
                self.log.update_entry(self._streaming, text=event.text)
        elif event.text:
            self.log.append(LogEntry("assistant", self.assistant_name, event.text))
        self._end_stream()

    def _on_ThinkingBlock(self, event: ev.ThinkingBlock) -> None:
        self._end_stream()
        self.log.append(thinking_entry(event.thinking))

    def _on_ToolUse(self, event: ev.ToolUse) -> None:
        self._end_stream()
        self.log.append(tool_entry(event.name, event.input))

    def _on_ToolResult(self, event: ev.ToolResult) -> None:
        self._end_stream()
        self.log.append(result_entry(event.content, event.is_error))

    def _on_Halt(self, event: ev.Halt) -> None:
        self._end_stream()
        self.log.append(LogEntry("halt", "halt", f"{event.reason} ({event.source})"))

    def _on_ErrorEvent(self, event: ev.ErrorEvent) -> None:
        self._end_stream()
        self.errors += 1
        self.log.append(error_entry(event.message))

    def _on_Notice(self, event: ev.Notice) -> None:
        self.log.append(LogEntry("info", getattr(event, "level", "notice"), event.message))

    def _on_TurnDone(self, event: ev.TurnDone) -> None:
        self._end_stream()
        self.done = event
        if getattr(event, "interrupted", False):
            self.log.append(LogEntry("info", "stopped", "the turn was cancelled; what arrived so far is kept"))
