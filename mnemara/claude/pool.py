"""The Claude CLI processes of one session: the one serving the turn and the one kept for the next.

A fresh CLI costs about half a second of wall time and of CPU to start, most
of a back-to-back turn. So a process that finished a turn cleanly is kept for
the next turn. Either its conversation is rewound to empty
(:func:`~mnemara.claude.process.rewind_conversation`, in the background while the
user reads), and the next turn's requests are byte for byte what a fresh process
would send; or, when the session asks (``keep_conversation``: the window only grew,
:mod:`mnemara.context.continuation`), it keeps its conversation, and the next turn
either continues it (``take(..., continuing=...)``) or has it rewound first. A process is
kept only while its key (a hash of system prompt, model, tools, MCP servers,
cwd and environment) matches the next turn's: an edited role doc or a ``/swap``
gets a new process. A turn that failed, was stopped, was halted by the
sentinel or left a background task running never hands its process on.

With ``warm_spare`` the session also starts a process ahead of time when none
fits (at start, after a key change). An idle process that no turn will use
(on close, or when the next turn's key does not fit) is killed, not drained;
the one serving a turn in flight, and one handed back by a turn that cannot
pass it on, are ended gracefully (the latter in the background). Every process
is ended on the loop it lives on.

The session decides *what* to launch (``launch`` callables from
:mod:`mnemara.claude.options`); this module only keeps, hands out and ends
processes.
"""
from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from mnemara.claude.process import CliHandle, alive, hard_kill, process_transport, release_transport, rewind_conversation
from mnemara.core.debuglog import log_event
from mnemara.core.sync_runner import running_loop

SPARE_WAIT_SECONDS = 60.0
Launch = Callable[[], CliHandle]


class CliPool:
    """Hands a session the CLI process for its next turn and ends the ones it is done with."""

    def __init__(self, log: logging.Logger, *, reuse: bool = True) -> None:
        self.log = log  # the instance's logger (debug.log)
        self.reuse = reuse
        self.spare: CliHandle | None = None  # ready (or getting ready) for the next turn
        self.active: CliHandle | None = None  # the process serving the turn in flight
        #: How each turn got its process: a spare started ahead, a fresh start, or one that served turns before.
        self.stats = {"spare_used": 0, "fresh_started": 0, "reused": 0}
        self.continued = 0  # of the reused, how many continued their conversation
        self._tasks: set[asyncio.Task[Any]] = set()
        self._ending: list[CliHandle] = []  # being ended by discard(): still killable by kill_all()

    async def take(self, key: str, launch: Launch, continuing: str | None = None) -> CliHandle:
        """The kept process if it fits ``key``, else a freshly launched one (connected either way).

        The process comes with an empty conversation, unless ``continuing`` is the start of the
        conversation it kept (:attr:`CliHandle.open_since`): then it keeps it. A kept conversation
        that is not to be continued is rewound first."""
        spare, self.spare = self.spare, None
        if spare is not None:
            if spare.key == key and spare.loop is asyncio.get_running_loop():
                try:
                    await asyncio.wait_for(asyncio.shield(spare.ready), SPARE_WAIT_SECONDS)
                    if spare.open_since is not None and spare.open_since != continuing:
                        await self._rewind(spare)
                    if alive(spare.client):
                        self.stats["reused" if spare.turns_served else "spare_used"] += 1
                        if spare.open_since is not None:
                            self.continued += 1
                        return spare
                    log_event(self.log, "spare_failed", level="warning", error="spare CLI exited")
                except Exception as exc:
                    log_event(self.log, "spare_failed", level="warning", error=repr(exc))
            await self.discard(spare, kill=True)
        fresh = launch()
        self.stats["fresh_started"] += 1
        try:
            await fresh.ready
        except BaseException:
            await self.discard(fresh, kill=True)
            raise
        return fresh

    def keep_spare(self, key: str, launch: Launch) -> None:
        """Have a process ready for a turn with ``key``: keep the one waiting when it fits, else
        start one now (call on the loop that will run that turn)."""
        if self.spare is not None:
            if self.spare.key == key:
                return
            self._background(self.discard(self.spare, kill=True))
            self.spare = None
        try:
            self.spare = launch()
        except Exception as exc:
            log_event(self.log, "spare_failed", level="warning", error=repr(exc))

    def release(self, handle: CliHandle, rewind_to: str | None = None, *, keep_conversation: bool = False) -> None:
        """A turn is done with ``handle``.

        ``rewind_to`` is the id of the turn's user message when the turn ended
        cleanly: the process is then kept for the next turn. With ``keep_conversation``
        its conversation stays as it is (:attr:`CliHandle.open_since` says where it
        starts); otherwise it is rewound to empty in the background (a failed rewind
        ends it when the next turn takes it). Without ``rewind_to``, or with reuse off,
        the process is ended.
        """
        if self.active is handle:
            self.active = None
        if rewind_to is None or not self.reuse or self.spare is not None or not alive(handle.client):
            self._background(self.discard(handle))  # ended gracefully, off the turn's path
            return
        handle.turns_served += 1
        handle.conversation = None  # the session says what it holds once the turn is stored
        if handle.open_since is None:
            handle.open_since = rewind_to
        handle.last_sent = rewind_to
        self.spare = handle
        if not keep_conversation:
            self.rewind_spare()

    def rewind_spare(self) -> None:
        """Have the kept process's conversation emptied now, in the background (the next turn will
        not continue it: a trim, say), so that turn does not wait for it."""
        spare = self.spare
        if spare is None or spare.open_since is None:
            return
        before = spare.ready

        async def rewind() -> None:
            await before
            await self._rewind(spare)

        spare.ready = asyncio.get_running_loop().create_task(rewind())

    async def _rewind(self, handle: CliHandle) -> None:
        start, handle.open_since, handle.conversation = handle.open_since, None, None
        if start is not None and not await rewind_conversation(handle.client, start, handle.last_sent):
            raise RuntimeError("the CLI did not rewind its conversation")

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

    async def discard(self, handle: CliHandle | None, *, kill: bool = False) -> None:
        """End a CLI process (on the loop it lives on); ``kill`` first for one nobody is using."""
        if handle is None:
            return
        transport = process_transport(handle.client)  # disconnect() forgets the way to it
        self._ending.append(handle)
        try:
            await self._end(handle, kill=kill)
        finally:
            self._ending.remove(handle)
            release_transport(transport)

    async def _end(self, handle: CliHandle, *, kill: bool) -> None:
        if kill:
            hard_kill(handle.client)
        if handle.loop is running_loop():
            if not handle.ready.done():
                handle.ready.cancel()
            try:
                await asyncio.wait_for(handle.client.disconnect(), 10)
            except BaseException:
                hard_kill(handle.client)
        elif handle.loop.is_running() and not handle.loop.is_closed():
            fut = asyncio.run_coroutine_threadsafe(self.discard(handle, kill=kill), handle.loop)
            try:
                await asyncio.wrap_future(fut)
            except BaseException:
                hard_kill(handle.client)
        else:
            hard_kill(handle.client)

    async def aclose(self) -> None:
        """End every process (the idle one killed, a running turn's ended gracefully) and wait a
        bounded time for background endings on this loop."""
        spare, active = self.spare, self.active
        self.spare = self.active = None
        await self.discard(spare, kill=True)
        await self.discard(active)
        pending = [t for t in self._tasks if t.get_loop() is asyncio.get_running_loop()]
        if pending:
            await asyncio.wait(pending, timeout=15)

    def kill_all(self) -> None:
        """Synchronous last resort (no loop to wait on, or no time left): kill every process,
        those being ended gracefully included."""
        for handle in (self.active, self.spare, *self._ending):
            if handle is not None:
                hard_kill(handle.client)
                release_transport(process_transport(handle.client))
        self.spare = self.active = None
