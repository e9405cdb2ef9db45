"""What the UIs (the panel, the REPL) see of a session: one Protocol, so a UI depends on this
surface and not on :class:`mnemara.session.agent.AgentSession` itself (which provides all of it)."""
from __future__ import annotations

import concurrent.futures
from collections.abc import AsyncGenerator, Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any, Protocol

from mnemara.commands import CommandContext
from mnemara.core.turn_parts import PartHost

if TYPE_CHECKING:
    from mnemara.core import events as ev
    from mnemara.guard.gate import PermissionGate
    from mnemara.guard.request import PermissionRequest

#: How a UI answers a permission question: ``y``/``n``/``a`` (or None for no), possibly awaited.
PermissionPrompt = Callable[["PermissionRequest"], "Awaitable[str | None] | str | None"]


class SessionAPI(CommandContext, PartHost, Protocol):
    """A session as a UI drives it: turns, stopping, permission questions, the warm spare."""

    warm_spare: bool
    warn_to_stderr: bool
    #: The folder the session's tools run in (what a relative ``@path`` or a ``!command`` starts from).
    cwd: str
    #: The permission gate of every tool call (an ``@path`` mention is checked as a Read of it).
    gate: PermissionGate
    #: The code blocks a UI has drawn this session, numbered in their captions (``/copy N``).
    shown_code_blocks: list[str] | None

    def turn(self, text: str, on_event: Callable[[ev.Event], None] | None = None) -> ev.TurnResult: ...

    def aturn(self, text: str) -> AsyncGenerator[ev.Event, None]: ...

    def request_stop(self) -> bool: ...

    def run_coroutine(self, coro: Coroutine[Any, Any, Any]) -> concurrent.futures.Future[Any]: ...

    def set_permission_prompt(self, prompt: PermissionPrompt | None) -> None: ...

    def spooled_rows(self) -> int: ...

    def prewarm(self) -> None: ...

    def close(self) -> None: ...
