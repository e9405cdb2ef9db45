"""What the peer inbox does with a feed (NATS): the step, the acks, a feed swapped for a new one.

A mixin of :class:`~mnemara.peer.inbox.PeerInbox`, kept apart so the inbox module
stays about the shared behaviour and SQLite's paged read. With a feed, every
message is acknowledged by Mnemara (confirmed by the server) once the turn
carrying it succeeded, or at once for a silent type. Before delivering, the keys
of the fetched messages are looked up in the stored answers (``delivered_keys``):
a message a completed turn already carried (its ack lost in a crash, or
redelivered by the consumer reset at start) is acknowledged without a turn.
"""
from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Callable

from mnemara.peer.feed import Feed
from mnemara.core.errors import MnemaraError
from mnemara.peer.db import READ_PROBLEMS

if TYPE_CHECKING:
    from mnemara.peer.problems import ProblemLog
    from mnemara.peer.rows import PeerRow

FEED_PROBLEMS = ("nats_down", "nats_setup", "nats_settings")


class FeedSteps:
    feed: Feed | None
    _feed_problem: str
    _next_feed: tuple[Feed | None, str] | None
    _handled: set[int]
    _unconfirmed: set[int]  # handled here, the server did not confirm the ack (tried again until it does)
    _lock: asyncio.Lock
    _waiting: list["PeerRow"]
    _waiting_more: bool
    _enabled: bool
    _problems: "ProblemLog"
    _delivered_keys: Callable[[list[str]], set[str]] | None
    _loop: asyncio.AbstractEventLoop | None
    max_rows_per_turn: int
    stats: Any

    def wake(self) -> None: ...

    def _log(self, event: str, **fields: Any) -> None: ...

    async def _process(self, rows: list["PeerRow"], has_completed_at: bool) -> None: ...

    def _wire_feed(self) -> None:
        if self.feed is not None:
            self.feed.on_arrival = self.wake
            self.feed.report = self._problems.report
            self.feed.clear = self._problems.clear
            self.feed.warn = self._warn_open_server
            self.feed.limit = self.max_rows_per_turn  # fetch no more than one turn carries

    def _notice(self, line: str) -> None: ...

    def _warn_open_server(self, line: str) -> None:
        """Once per feed: the server takes connections without credentials (a line, debug.log, status)."""
        self._log("peer_nats_no_credentials", level="warning", message=line)
        self._notice(f"⚠ {line}")

    async def _swap_feed(self) -> None:
        """Put the feed built by :meth:`apply_config` in place of the running one."""
        pending, self._next_feed = self._next_feed, None
        if pending is None:
            return
        old, (self.feed, self._feed_problem) = self.feed, pending
        self._handled, self._waiting, self._unconfirmed = set(), [], set()
        self._problems.clear(*FEED_PROBLEMS, *READ_PROBLEMS)
        if old is not None:
            await old.aclose()
        self._wire_feed()

    async def _feed_step(self) -> None:
        """One step with a feed (NATS): take what it fetched, drop repeats, process the rest."""
        feed = self.feed
        if feed is None:
            self._problems.report("nats_settings", self._feed_problem)
            return
        feed.start()
        self.stats.polls += 1
        rows = feed.rows()
        unacked = [r.id for r in rows if r.id in self._handled]  # handled here, the ack not confirmed yet
        if unacked:
            await self._feed_ack(unacked)
        fresh = [r for r in rows if r.id not in self._handled]
        if fresh and self._delivered_keys is not None:
            keys = {feed.key(r.id): r.id for r in fresh}
            try:
                done = await asyncio.to_thread(self._delivered_keys, list(keys))
            except Exception as exc:  # cannot tell: deliver nothing rather than risk a second turn
                self._problems.report("delivered_lookup", f"cannot read which peer messages were already "
                                      f"delivered ({type(exc).__name__}: {exc}); delivery waits")
                self._waiting = fresh
                return
            self._problems.clear("delivered_lookup")
            repeats = sorted(keys[k] for k in done if k in keys)
            if repeats:
                self._log("peer_repeat_acked", rows=repeats, note="already carried by a stored turn")
                self._handled.update(repeats)
                await self._feed_ack(repeats)
                fresh = [r for r in fresh if r.id not in self._handled]
        for row in fresh:
            if row.payload_error:
                self._problems.once(f"malformed_payload:{feed.key(row.id)}",
                                    f"peer message {row.id} from {row.agent_role}: {row.payload_error}; "
                                    "delivered as raw text", row=row.id)
        if fresh and self._enabled:
            await self._process(fresh, True)
        self._waiting = [r for r in fresh if r.id not in self._handled]
        self._waiting_more = feed.more
        present = {r.id for r in feed.rows()}
        self._handled &= present

    async def _feed_ack(self, ids: list[int]) -> bool:
        assert self.feed is not None
        from mnemara.peer.nats_transport import PeerTransportError

        try:
            await self.feed.ack(ids)
        except PeerTransportError as exc:
            self._unconfirmed.difference_update(ids)
            self._unconfirmed.update(exc.unconfirmed or ids)
            self._problems.report("ack_failed", exc.message)
            return False
        self._unconfirmed.difference_update(ids)
        self._problems.clear("ack_failed")
        return True

    async def confirm_acks(self, attempts: int = 3) -> list[int]:
        """Before the inbox closes: try again to acknowledge the messages a turn handled whose ack the
        server did not confirm (it froze, or the connection dropped, at that moment), waiting for a
        dropped connection to come back and hand them over again. Returns the ones still unconfirmed
        after ``attempts`` tries: the server delivers them again, and their stored answer keeps that
        delivery from becoming a second turn (``delivered_keys``)."""
        feed = self.feed
        if feed is None:
            return []
        from mnemara.peer.nats_transport import CONNECT_TIMEOUT_S

        async with self._lock:
            for _ in range(max(1, attempts)):
                if not self._unconfirmed:
                    break
                present = {r.id for r in feed.rows()}
                if not self._unconfirmed <= present:  # reconnecting: wait for the redelivery
                    await feed.wait_ready(2 * CONNECT_TIMEOUT_S)
                    await feed.caught_up(CONNECT_TIMEOUT_S)
                    present = {r.id for r in feed.rows()}
                targets = sorted(self._unconfirmed & present)
                if targets:
                    await self._feed_ack(targets)
            return sorted(self._unconfirmed)

    def ack_from_tool(self, ids: list[int], timeout: float) -> tuple[list[int], list[int]]:
        """For the ``peer_ack`` tool (called from a worker thread): acknowledge ``ids`` that are in the
        current batch, on the inbox's own loop. Returns (acknowledged, not in the batch)."""
        loop = self._loop
        if loop is None or loop.is_closed():
            raise MnemaraError("the peer inbox is not running; nothing was acknowledged")
        return asyncio.run_coroutine_threadsafe(self._ack_ids(ids), loop).result(timeout)

    async def _ack_ids(self, ids: list[int]) -> tuple[list[int], list[int]]:
        feed = self.feed
        present = {r.id for r in feed.rows()} if feed is not None else set()
        mine = sorted(i for i in dict.fromkeys(ids) if i in present)
        if mine and not await self._feed_ack(mine):
            raise MnemaraError(self._problems.active.get("ack_failed", "the NATS ack was not confirmed"))
        self._handled.update(mine)
        self._log("peer_tool_ack", rows=mine)
        return mine, [i for i in dict.fromkeys(ids) if i not in present]
