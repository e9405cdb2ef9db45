"""The event loop behind the synchronous session API (``turn``, ``prewarm``, ``close``).

A CLI process lives on the loop that started it, and a warm spare must outlive
one ``turn()`` call, so the sync API cannot use ``asyncio.run`` per call: it
runs every coroutine on one long-lived loop in a daemon thread, started on
first use. Async callers never touch it.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class LoopThread:
    """One asyncio loop running in a daemon thread; coroutines are submitted from any thread."""

    def __init__(self, name: str = "mnemara-session") -> None:
        self.name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    @property
    def loop(self) -> asyncio.AbstractEventLoop | None:
        """The loop when it has been started (and not stopped), else None."""
        return self._loop

    def ensure(self) -> asyncio.AbstractEventLoop:
        """The running loop, started now if needed."""
        if self._loop is None:
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name=self.name, daemon=True)
            thread.start()
            self._loop, self._thread = loop, thread
        return self._loop

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule ``coro`` on the loop; returns a concurrent future."""
        return asyncio.run_coroutine_threadsafe(coro, self.ensure())

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run ``coro`` on the loop and wait for its result."""
        return self.submit(coro).result(timeout=timeout)

    def run_to_end(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run ``coro`` from synchronous code: on the loop when it is running (what lives there, e.g.
        CLI processes, is ended there), else on a short-lived loop of its own."""
        if self._loop is not None:
            return self.run(coro, timeout=timeout)
        loop = asyncio.new_event_loop()
        try:
            return loop.run_until_complete(coro)
        finally:
            loop.close()

    def call_soon(self, callback: Callable[[], Any]) -> None:
        """Run ``callback`` on the loop as soon as it is free."""
        self.ensure().call_soon_threadsafe(callback)

    def stop(self) -> None:
        """Stop the loop (idempotent); a later :meth:`ensure` starts a new one."""
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._loop = None


def running_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop running in this thread, or None."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def schedule_on(loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, Any]) -> None:
    """Start ``coro`` on ``loop`` without waiting for it, from that loop's thread or any other."""
    if running_loop() is loop:
        loop.create_task(coro)
    else:
        asyncio.run_coroutine_threadsafe(coro, loop)
