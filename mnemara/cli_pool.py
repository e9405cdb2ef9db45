"""The Claude CLI processes of one session: the one serving the turn and a warm spare.

A fresh CLI costs about half a second to start. After each turn a spare is
started with the options the next turn will most likely need; the next turn
takes it only when its key (a hash of system prompt, model, tools, cwd and
environment) matches and it lives on the same event loop, and otherwise starts
a fresh one. Every process is ended on the loop it lives on.

The session decides *what* to launch (``launch`` callables from
:mod:`mnemara.sdk_options`); this module only keeps, hands out and ends
processes.
"""
from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from mnemara.cli_process import CliHandle, alive, hard_kill
from mnemara.debuglog import log_event

SPARE_WAIT_SECONDS = 60.0
Launch = Callable[[], CliHandle]


class CliPool:
    """Hands a session the CLI process for its next turn and ends the ones it is done with."""

    def __init__(self, debug_log: Path) -> None:
        self.debug_log = debug_log
        self.spare: CliHandle | None = None
        self.active: CliHandle | None = None  # the process serving the turn in flight
        self.stats = {"spare_used": 0, "fresh_started": 0}  # how each turn got its CLI process
        self._tasks: set[asyncio.Task[Any]] = set()

    async def take(self, key: str, launch: Launch) -> CliHandle:
        """The spare process if it fits ``key``, else a freshly launched one (connected either way)."""
        spare, self.spare = self.spare, None
        if spare is not None:
            if spare.key == key and spare.loop is asyncio.get_running_loop():
                try:
                    await asyncio.wait_for(asyncio.shield(spare.ready), SPARE_WAIT_SECONDS)
                    if alive(spare.client):
                        self.stats["spare_used"] += 1
                        return spare
                    log_event(self.debug_log, "spare_failed", level="warning", error="spare CLI exited")
                except Exception as exc:
                    log_event(self.debug_log, "spare_failed", level="warning", error=repr(exc))
            await self.discard(spare)
        fresh = launch()
        self.stats["fresh_started"] += 1
        try:
            await fresh.ready
        except BaseException:
            await self.discard(fresh)
            raise
        return fresh

    def keep_spare(self, launch: Launch) -> None:
        """Start the next turn's process now (call on the loop that will run that turn)."""
        try:
            self.spare = launch()
        except Exception as exc:
            log_event(self.debug_log, "spare_failed", level="warning", error=repr(exc))

    def release(self, handle: CliHandle) -> None:
        """A turn is done with ``handle``: end it in the background."""
        if self.active is handle:
            self.active = None
        self._background(self.discard(handle))

    def kill_active(self) -> CliHandle | None:
        """Kill the process serving the turn in flight (``/stop``); returns it for a clean disconnect."""
        handle = self.active
        if handle is not None:
            hard_kill(handle.client)
        return handle

    def _background(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def discard(self, handle: CliHandle | None) -> None:
        """End a CLI process (on the loop it lives on)."""
        if handle is None:
            return
        try:
            current: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            current = None
        if handle.loop is current:
            if not handle.ready.done():
                handle.ready.cancel()
            try:
                await asyncio.wait_for(handle.client.disconnect(), 10)
            except BaseException:
                hard_kill(handle.client)
        elif handle.loop.is_running() and not handle.loop.is_closed():
            fut = asyncio.run_coroutine_threadsafe(self.discard(handle), handle.loop)
            try:
                await asyncio.wrap_future(fut)
            except BaseException:
                hard_kill(handle.client)
        else:
            hard_kill(handle.client)

    async def aclose(self) -> None:
        """End every process and wait (a bounded time) for background endings on this loop."""
        for handle in (self.active, self.spare):
            await self.discard(handle)
        self.spare = self.active = None
        pending = [t for t in self._tasks if t.get_loop() is asyncio.get_running_loop()]
        if pending:
            await asyncio.wait(pending, timeout=15)

    def kill_all(self) -> None:
        """Synchronous last resort (no loop to wait on): kill every process."""
        for handle in (self.active, self.spare):
            if handle is not None:
                hard_kill(handle.client)
        self.spare = self.active = None
