"""Typed events one turn emits, in order, to whatever UI drives the session.

A turn yields zero or more ``TextDelta`` (only when ``config.stream`` is on),
``ThinkingBlock``, ``ToolUse``, ``ToolResult``, ``AssistantText`` (the whole
text of one model message, always emitted), ``Notice`` (e.g. the role doc is
missing), maybe ``Halt`` or ``ErrorEvent``,
and always ends with exactly one ``TurnDone``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Union

from mnemara.core.blocks import result_text


@dataclass(frozen=True)
class TextDelta:
    """A piece of assistant text as it streams in."""

    text: str


@dataclass(frozen=True)
class AssistantText:
    """The complete text of one assistant message (after its deltas, if any)."""

    text: str


@dataclass(frozen=True)
class ThinkingBlock:
    thinking: str


@dataclass(frozen=True)
class ToolUse:
    """The model asked to run a tool (``name`` is model-facing, e.g. ``mcp__mnemara__write_memory``)."""

    id: str
    name: str
    input: dict[str, Any]


@dataclass(frozen=True)
class ToolResult:
    tool_use_id: str
    content: Any
    is_error: bool = False

    @property
    def text(self) -> str:
        """The result as plain text (:func:`mnemara.core.blocks.result_text`)."""
        return result_text(self.content)


@dataclass(frozen=True)
class Halt:
    """The turn was halted by a guard (e.g. the runtime sentinel) before it finished."""

    reason: str
    source: str = "sentinel"


#: Why a turn failed. From the API: ``auth``, ``rate_limit``, ``overloaded``, ``server``, ``connection``,
#: ``request``, ``stall`` (a silent stream); from the CLI: ``cli``; before anything was sent: ``config``,
#: ``no_api_key``, ``store`` (the window could not be read), ``overflow`` (too long even after eviction);
#: after the answer: ``unsaved_message`` / ``unsaved_answer`` (kept in the spool, not in turns.sqlite);
#: anything else: ``error``.
ErrorKind = Literal[
    "auth", "rate_limit", "overloaded", "server", "connection", "request", "stall", "cli",
    "config", "no_api_key", "store", "overflow", "unsaved_message", "unsaved_answer", "error",
]


@dataclass(frozen=True)
class ErrorEvent:
    """One clear, user-facing line about a failure; the session stays usable."""

    message: str
    kind: ErrorKind = "error"


@dataclass(frozen=True)
class Notice:
    """Something the user should see that is not a failure (e.g. a missing role doc)."""

    message: str
    level: str = "warning"


@dataclass(frozen=True)
class TurnDone:
    """The last event of every turn."""

    usage: dict[str, Any] = field(default_factory=dict)
    cost_usd: float | None = None
    interrupted: bool = False
    assistant_row_id: int | None = None
    user_row_id: int | None = None
    error: str | None = None


Event = Union[TextDelta, AssistantText, ThinkingBlock, ToolUse, ToolResult, Halt, ErrorEvent, Notice, TurnDone]


@dataclass
class TurnResult:
    """What the sync ``AgentSession.turn`` returns: the events plus conveniences."""

    events: list[Event]

    @property
    def done(self) -> TurnDone:
        for event in reversed(self.events):
            if isinstance(event, TurnDone):
                return event
        raise RuntimeError("turn produced no TurnDone event")

    @property
    def text(self) -> str:
        """The assistant's text of the turn (messages joined by blank lines)."""
        return "\n\n".join(e.text for e in self.events if isinstance(e, AssistantText) and e.text)

    @property
    def errors(self) -> list[ErrorEvent]:
        return [e for e in self.events if isinstance(e, ErrorEvent)]

    @property
    def tool_uses(self) -> list[ToolUse]:
        return [e for e in self.events if isinstance(e, ToolUse)]

    @property
    def ok(self) -> bool:
        return not self.errors and not self.done.interrupted
