"""What one turn in flight has gathered so far; the session's steps hand it along.

A turn owns its state: the role doc it was given, the watch that spots a mid-turn
edit of it, the damaged rows its window left out, the sentinel's halt. The session
keeps only what spans turns (the sentinel's memory of recent calls, the CLI pool).
"""
from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mnemara.core import events as ev
from mnemara.core.config import Config

if TYPE_CHECKING:
    from mnemara.claude.faults import StallWatch
    from mnemara.claude.role_refresh import RoleDocWatch
    from mnemara.core.roledoc import RoleDoc
    from mnemara.claude.process import CliHandle
    from mnemara.claude.bridge import TurnCollector
    from mnemara.context.continuation import Conversation
    from mnemara.store.rows import Turn
    from mnemara.claude.spend_gate import TurnGate
    from mnemara.guard.sentinel import SentinelWatch
    from mnemara.store.rows import Window


@dataclass
class TurnFlight:
    """A turn from the moment :meth:`~mnemara.session.agent.AgentSession.aturn` takes it until it ends
    (before and after its :class:`RunningTurn` exists): the loop it runs on, whether ``/stop`` was asked."""

    loop: asyncio.AbstractEventLoop
    stop_requested: bool = False


@dataclass
class RunningTurn:
    """One turn: its stored user row, the config and system prompt it runs with, what came back."""

    user_id: int
    cfg: Config
    role: RoleDoc  # the role doc as read from disk for this turn
    system_prompt: str
    watch: SentinelWatch | None = None  # the runtime sentinel, when runtime_sentinel is on
    role_watch: RoleDocWatch | None = None  # the role doc as this turn's CLI was given it (mid-turn edits)
    damaged: list[int] = field(default_factory=list)  # damaged rows its window left out
    left: list[int] = field(default_factory=list)  # rows its window trimmed before it was sent (announced after)
    left_window: Window | None = None  # the window that trimmed them (its caps passed)
    handle: CliHandle | None = None  # the CLI process serving it
    sent_rows: list[Turn] = field(default_factory=list)  # the window rows a rebuilt request of it sends
    continuing: Conversation | None = None  # the kept CLI conversation it continues (None: it rebuilds)
    rebuilt: list[dict[str, Any]] = field(default_factory=list)  # its whole message, when it cannot continue
    part_tokens: int = 0  # its slots and per-turn blocks: what its message adds besides the rows
    failure: ev.ErrorEvent | None = None
    interrupted: bool = False
    stall: StallWatch | None = None  # ends the turn when the API goes silent (api_stall_seconds)
    answer_meta: dict[str, Any] = field(default_factory=dict)  # the parts' fields for a completed answer row
    spend: TurnGate | None = None  # what the recorder's spend gate knows of it (a cap that ended it)
    spend_notices: list[str] = field(default_factory=list)  # 80% warnings from the gate, not shown yet
    _collector: TurnCollector | None = field(default=None, repr=False)

    @property
    def collector(self) -> TurnCollector:
        """Maps what the CLI streams back to events (built at first use: it imports the SDK, which the
        first message of ``mnemara run`` may reach the CLI before; :mod:`mnemara.claude.early`)."""
        if self._collector is None:
            from mnemara.claude.bridge import TurnCollector

            self._collector = TurnCollector(stream=self.cfg.stream)
        return self._collector

    @property
    def stderr(self) -> list[str]:
        return self.handle.stderr if self.handle is not None else []

    def judge(self, stopped: bool) -> None:
        """Once the CLI is done: interrupted (``/stop``, an aborted CLI) or failed (what the API reported)?"""
        from mnemara.claude.bridge import api_fault, classify_failure

        self.failure = api_fault(self.collector, self.stall) or self.failure
        self.interrupted = stopped or self._aborted()
        if self.failure is None and not self.interrupted:
            self.failure = classify_failure(self.collector)

    def ended_cleanly(self, stopped: bool) -> bool:
        """Whether its CLI may serve the next turn: a result, no error, not stopped, aborted or halted,
        no background task left running, the key not rejected."""
        result, collector = self.collector.result, self.collector
        return (result is not None and not result.is_error and self.failure is None and not stopped
                and not self._aborted() and not (self.watch is not None and self.watch.halt is not None)
                and not collector.tasks_started and not collector.auth_rejected)

    @property
    def capped(self) -> str | None:
        """The line saying which spend cap ended this turn, or None."""
        gate = self.spend
        return gate.halt if gate is not None and gate.cap is not None else None

    def take_spend_notices(self) -> list[ev.Event]:
        out: list[ev.Event] = []
        while self.spend_notices:  # appended from a recorder thread meanwhile: pop, never clear
            out.append(ev.Notice(self.spend_notices.pop(0)))
        return out

    def _aborted(self) -> bool:
        result = self.collector.result
        return result is not None and (result.terminal_reason or "").startswith("aborted")
