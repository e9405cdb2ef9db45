"""``PeerInbox``: the background runner that turns pending peer rows into agent turns.

An embedder or a UI runs it beside an ``AgentSession``::

    inbox = PeerInbox.from_config(cfg, instance_name, deliver=my_turn, is_idle=lambda: not session.busy,
                                  debug_log=inst.logger)
    inbox.start()            # a task on the running event loop
    inbox.toggle()           # live ON/OFF of delivery (the /inbox command, the Inbox button)
    inbox.state_text         # for the status line, e.g. "⚡ Inbox: ON · 2 waiting"
    await inbox.aclose()

``deliver(text)`` runs one agent turn with ``text`` as the user message and must
raise if the turn did not complete; the UI passes its own "run this turn and
render it" coroutine, an embedder can use :func:`mnemara.peer.session_deliverer`.

Where messages come from is the transport (``peer_transport``): ``sqlite`` (the
default) reads the ``returns`` table of ``peer_db_path``; ``nats`` takes them
from a NATS JetStream consumer (:class:`~mnemara.peer.nats_transport.NatsTransport`,
a :class:`Feed`). Everything else (batching, silent types, ON/OFF, the status
line, the turn text, handled only after the turn succeeded) is the same.

Detection reads the database every ``peer_poll_interval_seconds`` (read-only,
no model call). When delivery is ON and the session is idle, silent types are
acknowledged in one short write and every other row goes into ONE turn (or one
turn per row with ``peer_poll_batch: false``). Delivery OFF means the inbox only
counts: it neither delivers nor acknowledges anything.

"Seen once": a row counts as handled only after the turn carrying it returned
without error (or its silent ack committed). A failed turn leaves its rows
unhandled, so they are delivered again on a later poll. The watermark is the
highest id below which every matching row is handled; handled rows above a
still-unhandled one are remembered in a small set until the watermark passes
them. Rows the agent delivers are acknowledged by the agent itself (through the
ack tool); Mnemara writes only the silent acks.

First enable (no saved watermark): rows addressed to this panel that are already
pending are delivered; broadcasts already pending are skipped (one notice says
how many) unless ``peer_deliver_backlog``.

With a feed (NATS) every message is acknowledged by Mnemara, confirmed by the
server, once the turn carrying it succeeded (or as a silent type). The keys of
the messages a turn carries (stream and sequence) are stored with its answer row
(``peer_delivered`` in the row's meta, see :class:`~mnemara.peer.session_link.InboxPart`),
so a message that comes again (a crash before its ack) is acknowledged without a
second turn.
"""
from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Sequence

from mnemara.core.debuglog import LogTarget, instance_logger, log_event
from mnemara.peer import db, watermark
from mnemara.peer.addressing import resolve_db_path, resolve_role
from mnemara.peer.feed import Feed, InFlight, builtin_tool, feed_for, feed_signature
from mnemara.peer.feed_steps import FeedSteps
from mnemara.peer.message import format_turn
from mnemara.peer.problems import ProblemLog
from mnemara.peer.rows import PeerRow

if TYPE_CHECKING:
    from mnemara.core.config import Config

Deliver = Callable[[str], Awaitable[Any]]
DeliveredKeys = Callable[[list[str]], set[str]]
ICON = "⚡"
#: How long the first delivery point of a run (a piped REPL, ``mnemara serve``) waits for the transport.
CONNECT_WAIT_S = 10.0
MAX_PAGES_PER_STEP = 50
SHORT_PROBLEM = {
    "no_path": "no peer_db_path",
    "missing": "peer db missing",
    "not_a_file": "peer db not a file",
    "locked": "peer db locked",
    "no_table": "no returns table",
    "missing_column": "peer db schema",
    "not_a_database": "peer db unreadable",
    "cannot_open": "peer db unreadable",
    "sqlite_error": "peer db error",
    "delivery_failed": "delivery failed",
    "ack_failed": "ack failed",
    "internal": "inbox error",
    "nats_down": "NATS down",
    "nats_setup": "NATS setup",
    "nats_settings": "NATS settings",
    "delivered_lookup": "turns.sqlite unreadable",
}


@dataclass
class InboxStats:
    polls: int = 0
    delivered_rows: int = 0
    delivered_turns: int = 0
    failed_turns: int = 0
    silent_acked: int = 0


class PeerInbox(FeedSteps):
    """The inbox of one panel; see the module docstring."""

    def __init__(
        self,
        *,
        db_path: Path | None,
        role: str,
        deliver: Deliver,
        senders: Sequence[str] = (),
        interval: float = 30.0,
        is_idle: Callable[[], bool] | None = None,
        ack_tool: str = "",
        submit_tool: str = "",
        batch: bool = True,
        silent_types: Sequence[str] = (),
        debug_log: LogTarget | None = None,
        enabled: bool = True,
        max_rows_per_turn: int = 100,
        idle_check_seconds: float = 0.25,
        on_change: Callable[["PeerInbox"], Any] | None = None,
        watermark_file: Path | None = None,
        deliver_backlog: bool = True,
        on_notice: Callable[[str], Any] | None = None,
        feed: Feed | None = None,
        feed_problem: str = "",
        delivered_keys: DeliveredKeys | None = None,
    ) -> None:
        if max_rows_per_turn < 1:
            raise ValueError("max_rows_per_turn must be at least 1")
        self.db_path = Path(db_path) if db_path is not None else None
        self.role = role
        self.filter = db.Filter(role=role, senders=tuple(s for s in senders if s))
        self.interval = float(interval)
        self.ack_tool = ack_tool
        self.submit_tool = submit_tool
        self.batch = batch
        self.silent_types = frozenset(t for t in silent_types if t)
        self.max_rows_per_turn = max_rows_per_turn
        self.idle_check_seconds = idle_check_seconds
        self.stats = InboxStats()
        self._deliver_fn = deliver
        self._is_idle = is_idle or (lambda: True)
        self._logger = _logger(debug_log)
        self._problems = ProblemLog(self._logger)
        self._on_change = on_change
        self._enabled = enabled
        self._watermark = 0
        # Persisted watermark (peer_watermark.json): without a saved one, the first poll starts
        # past the rows already pending unless ``deliver_backlog``.
        self._watermark_file = Path(watermark_file) if watermark_file else None
        self._deliver_backlog = deliver_backlog
        self._watermark_ready = self._watermark_file is None
        self._watermark_saved: tuple[int, int] | None = None
        self._on_notice = on_notice
        self.notices: list[str] = []
        self.feed = feed
        self._feed_problem = feed_problem  # the transport's settings cannot be used (one line)
        self._delivered_keys = delivered_keys
        self.in_flight: InFlight | None = None
        self._feed_signature: tuple[Any, ...] = ()
        self._next_feed: tuple[Feed | None, str] | None = None
        self._handled: set[int] = set()
        self._unconfirmed: set[int] = set()
        self._waiting: list[PeerRow] = []
        self._waiting_more = False
        self._delivering = 0
        self._hold_until = 0.0
        self._lock = asyncio.Lock()
        self._wake: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping = False
        self._task: asyncio.Task[None] | None = None
        self._last_text = ""
        self._source: tuple[str, Path | None] | None = None  # (instance name, root) when built from a config

    @classmethod
    def from_config(cls, config: "Config", instance_name: str, *, deliver: Deliver,
                    instance_root: Path | None = None, debug_log: LogTarget | None = None,
                    **kwargs: Any) -> "PeerInbox":
        """Build an inbox from an instance's config (``peer_*`` fields)."""
        role = resolve_role(config, instance_name)
        kwargs.update(zip(("feed", "feed_problem"), feed_for(config, role, instance_root)))
        inbox = cls(
            db_path=resolve_db_path(config.peer_db_path, instance_root),
            role=role,
            senders=config.peer_poll_roles,
            interval=config.peer_poll_interval_seconds,
            ack_tool=config.peer_poll_ack_tool or builtin_tool(config, "ack"),
            submit_tool=config.peer_poll_submit_tool or builtin_tool(config, "send"),
            batch=config.peer_poll_batch,
            silent_types=config.peer_poll_silent_types,
            debug_log=debug_log,
            deliver=deliver,
            watermark_file=Path(instance_root) / watermark.FILE_NAME if instance_root is not None else None,
            deliver_backlog=config.peer_deliver_backlog,
            **{"enabled": config.peer_inbox_on, **kwargs},
        )
        inbox._source = (instance_name, instance_root)
        inbox._feed_signature = feed_signature(config, role)
        inbox._wire_feed()
        return inbox

    def apply_config(self, config: "Config") -> None:
        """Adopt changed ``peer_*`` fields of a live config (an inbox built by :meth:`from_config`).

        A new database or role starts reading that table from its beginning; a changed
        transport, NATS setting, role or sender list gets a new feed at the next step;
        ``peer_poll_enabled`` is the UI's business (it starts or stops the inbox).
        """
        if self._source is None:
            return
        name, root = self._source
        db_path, role = resolve_db_path(config.peer_db_path, root), resolve_role(config, name)
        signature = feed_signature(config, role)
        if signature != self._feed_signature:
            self._feed_signature = signature
            self._next_feed = feed_for(config, role, root)
        flt = db.Filter(role=role, senders=tuple(s for s in config.peer_poll_roles if s),
                        broadcasts_after=self.filter.broadcasts_after)
        settings = (db_path, flt, float(config.peer_poll_interval_seconds),
                    config.peer_poll_ack_tool or builtin_tool(config, "ack"),
                    config.peer_poll_submit_tool or builtin_tool(config, "send"),
                    config.peer_poll_batch, frozenset(t for t in config.peer_poll_silent_types if t))
        if settings == (self.db_path, self.filter, self.interval, self.ack_tool, self.submit_tool, self.batch,
                        self.silent_types) and self._next_feed is None:
            return  # the usual case: a turn re-read an unchanged config.json
        if db_path != self.db_path or role != self.role:
            self._watermark, self._handled, self._waiting = 0, set(), []
            self._watermark_ready = self._watermark_file is None
        (self.db_path, self.filter, self.interval, self.ack_tool, self.submit_tool, self.batch,
         self.silent_types) = settings
        self.role = role
        self.wake()

    # -- state -----------------------------------------------------------------
    @property
    def enabled(self) -> bool:
        """Whether delivery is ON (detection runs either way)."""
        return self._enabled

    @property
    def watermark(self) -> int:
        return self._watermark

    @property
    def waiting(self) -> list[PeerRow]:
        """Rows seen at the last poll and not handled yet (oldest first)."""
        return list(self._waiting)

    @property
    def more_waiting(self) -> bool:
        """More messages wait than the last step took (a full page, or more on the NATS server)."""
        return self._waiting_more

    async def quiesce(self) -> None:
        """Wait until no step runs (a turn in flight ends and its messages are acknowledged)."""
        async with self._lock:
            pass

    @property
    def problems(self) -> dict[str, str]:
        return self._problems.active

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    @property
    def state_text(self) -> str:
        """One short line for the status bar / Inbox button, e.g. ``⚡ Inbox: ON · 3 waiting``."""
        parts = [f"{ICON} Inbox: {'ON' if self._enabled else 'OFF'}"]
        if self._delivering:
            parts.append(f"delivering {self._delivering}")
        elif self._waiting:
            parts.append(f"{len(self._waiting)}{'+' if self._waiting_more else ''} waiting")
        for key in self._problems.active:
            parts.append("⚠ " + SHORT_PROBLEM.get(key, key.replace("_", " ")))
            break
        else:
            if self.feed is not None and self.feed.open_server:
                parts.append("⚠ NATS: no credentials")
        return " · ".join(parts)

    def describe(self) -> str:
        """A few lines for ``/inbox``: state, role, file, filter, counters, current problems."""
        senders = ", ".join(self.filter.senders) or "(none)"
        lines = [
            self.state_text,
            f"role: {self.role}   {self.source_text}",
            f"broadcasts accepted from: {senders}   poll every {self.interval:g}s   "
            f"{'batched' if self.batch else 'one turn per message'}",
            f"delivered: {self.stats.delivered_rows} rows in {self.stats.delivered_turns} turns   "
            f"silently acked: {self.stats.silent_acked}   failed turns: {self.stats.failed_turns}",
        ]
        lines += self.notices
        for key, message in self._problems.active.items():
            lines.append(f"problem ({key}): {message}")
        return "\n".join(lines)

    @property
    def source_text(self) -> str:
        """Where messages come from: the peer db, or the NATS server, stream and consumer."""
        if self.feed is not None:
            return self.feed.describe()
        if self._feed_problem:
            return f"NATS: {self._feed_problem}"
        return f"peer db: {self.db_path or '(peer_db_path is empty)'}"

    def _notice(self, line: str) -> None:
        """A line the panel shows once (the UI's ``on_notice``) and ``/inbox`` repeats."""
        self.notices.append(line)
        if self._on_notice is not None:
            try:
                self._on_notice(line)
            except Exception:
                pass

    def set_enabled(self, flag: bool) -> None:
        """Turn delivery ON or OFF live."""
        flag = bool(flag)
        if flag != self._enabled:
            self._enabled = flag
            self._hold_until = 0.0
            self._log("peer_inbox_toggled", enabled=flag)
        self.wake()
        self._changed(force=True)

    def toggle(self) -> bool:
        self.set_enabled(not self._enabled)
        return self._enabled

    def wake(self) -> None:
        """Ask the runner to look again now (e.g. the session just became idle). Thread-safe."""
        event, loop = self._wake, self._loop
        if event is None or loop is None or loop.is_closed():
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            event.set()
        else:
            loop.call_soon_threadsafe(event.set)

    # -- one poll + processing -------------------------------------------------
    async def settle(self, timeout: float = CONNECT_WAIT_S) -> bool:
        """A delivery point that must not miss a message (the first of a run, the last before it exits):
        wait (at most ``timeout`` seconds) until the transport is connected and has fetched what the server
        holds for this panel, so a step right after it sees those messages.

        True at once for SQLite (every step reads the file). False when the NATS server did not
        answer in time: a line says so (the inbox keeps trying in the background).
        """
        feed = self.feed
        if feed is None:
            return True
        feed.start()
        deadline = time.monotonic() + timeout
        if await feed.wait_ready(timeout) and await feed.caught_up(max(0.5, deadline - time.monotonic())):
            return True
        self._notice(f"{ICON} inbox: not connected to NATS after {timeout:g}s; waiting messages go out once it is")
        self._log("peer_connect_wait_timeout", seconds=timeout)
        return False

    async def step(self) -> None:
        """Poll now and, if delivery is ON and the session idle, process what is pending.

        Never raises (except cancellation); trouble is logged once and shown in the state.
        """
        self._loop = asyncio.get_running_loop()  # also where the peer_ack tool acknowledges
        async with self._lock:
            try:
                await self._step()
                self._problems.clear("internal")
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a bug or an unforeseen error must not stop the panel
                self._problems.report("internal", f"peer inbox step failed: {type(exc).__name__}: {exc}")
        self._changed()

    async def _start_watermark(self) -> None:
        """Load the saved watermark; on the first enable, start at 0 but skip the broadcasts already
        pending (unless ``deliver_backlog``): rows addressed to this panel are all delivered."""
        assert self._watermark_file is not None
        saved = watermark.load_state(self._watermark_file, self.db_path)
        if saved is None and not self._deliver_backlog:
            try:
                top = await asyncio.to_thread(db.max_id, self.db_path)
                skipped = await asyncio.to_thread(db.count_pending, self.db_path, self.filter, direct=False,
                                                  up_to=top)
            except db.PeerDbError:
                return  # the poll reports the problem; try again on the next one
            saved = watermark.Saved(0, top)
            self._log("peer_backlog_skipped", broadcasts_after=top, skipped=skipped,
                      note="broadcasts already pending were not delivered (peer_deliver_backlog: true delivers them)")
            if skipped:
                self._notice(f"{ICON} inbox first enabled: {skipped} broadcast(s) already pending were skipped "
                             "(rows addressed to this panel are delivered; peer_deliver_backlog: true delivers all)")
        self._watermark = saved.watermark if saved else 0
        self.filter = replace(self.filter, broadcasts_after=saved.broadcasts_after if saved else 0)
        self._watermark_ready = True
        self._save_watermark()  # the first enable's cut-off holds even if the panel stops before a poll

    def _save_watermark(self) -> None:
        state = (self._watermark, self.filter.broadcasts_after)
        if self._watermark_file is None or not self._watermark_ready or state == self._watermark_saved:
            return
        try:
            watermark.save(self._watermark_file, self.db_path, *state)
            self._watermark_saved = state
        except OSError as exc:
            self._problems.once("watermark_save", f"cannot save {self._watermark_file}: {exc}")

    async def _step(self) -> None:
        if self._next_feed is not None:
            await self._swap_feed()
        if self.feed is not None or self._feed_problem:
            await self._feed_step()
            return
        if not self._watermark_ready:
            await self._start_watermark()
        try:
            await self._poll_pages()
        finally:
            self._save_watermark()

    async def _poll_pages(self) -> None:
        cursor = self._watermark
        contiguous = True
        waiting: list[PeerRow] = []
        more = False
        for _ in range(MAX_PAGES_PER_STEP):
            result = await self._read(cursor)
            if result is None:
                return
            fresh = [r for r in result.rows if r.id not in self._handled]
            if fresh and self._enabled:
                await self._process(fresh, result.has_completed_at)
            left = [r for r in fresh if r.id not in self._handled]
            waiting.extend(left)
            if contiguous:
                contiguous = self._advance(result)
            more = result.full_page
            # Stop at rows that wait for delivery (OFF, busy, a failed turn); rows whose
            # silent ack failed only wait for the next poll and do not block later pages.
            if not result.full_page or any(r.message_type not in self.silent_types for r in left):
                break
            cursor = result.scanned_to
        self._waiting = waiting
        self._waiting_more = more
        self._handled = {i for i in self._handled if i > self._watermark}

    async def _read(self, after_id: int) -> db.PollResult | None:
        self.stats.polls += 1
        try:
            result = await asyncio.to_thread(db.read_pending, self.db_path, self.filter, after_id,
                                             self.max_rows_per_turn)
        except db.PeerDbError as exc:
            self._problems.clear(*[k for k in db.READ_PROBLEMS if k != exc.key])
            self._problems.report(exc.key, exc.message, db=str(self.db_path))
            return None
        self._problems.clear(*db.READ_PROBLEMS)
        for row in result.rows:
            if row.payload_error:
                self._problems.once(f"malformed_payload:{row.id}",
                                    f"peer row {row.id} from {row.agent_role}: {row.payload_error}; "
                                    "delivered as raw text", row=row.id)
        return result

    async def _process(self, rows: list[PeerRow], has_completed_at: bool) -> None:
        silent = [r for r in rows if r.message_type in self.silent_types]
        if silent:
            await self._ack_silent(silent, has_completed_at)
        loud = [r for r in rows if r.message_type not in self.silent_types]
        if not loud or time.monotonic() < self._hold_until:
            return
        chunks = [loud] if self.batch else [[r] for r in loud]
        for chunk in chunks:
            if not (self._enabled and self._is_idle()):
                return
            if not await self._deliver_turn(chunk):
                return

    async def _ack_silent(self, rows: list[PeerRow], has_completed_at: bool) -> None:
        if self.feed is not None:
            if await self._feed_ack([r.id for r in rows]):
                self._handled.update(r.id for r in rows)
                self.stats.silent_acked += len(rows)
                self._log("peer_silent_ack", rows=[r.id for r in rows])
            return
        if not has_completed_at:
            self._problems.report("missing_completed_at",
                                  f"peer db {self.db_path}: table '{db.TABLE}' has no completed_at column; "
                                  "silent acks set status='done' only")
        else:
            self._problems.clear("missing_completed_at")
        ids = [r.id for r in rows]
        try:
            await asyncio.to_thread(db.ack_rows, self.db_path, ids, has_completed_at)
        except db.PeerDbError as exc:
            self._problems.report("ack_failed", f"silent ack of rows {ids} not written: {exc.message}",
                                  db=str(self.db_path))
            return
        self._problems.clear("ack_failed")
        self._handled.update(ids)
        self.stats.silent_acked += len(ids)
        self._log("peer_silent_ack", rows=ids)

    async def _deliver_turn(self, rows: list[PeerRow]) -> bool:
        ids = [r.id for r in rows]
        text = format_turn(rows, self.role, self.ack_tool, self.submit_tool)
        self._delivering = len(rows)
        self._changed()
        feed = self.feed
        self.in_flight = InFlight(text, [feed.key(i) for i in ids] if feed is not None else [], ids)
        try:
            await self._deliver_fn(text)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self.stats.failed_turns += 1
            self._hold_until = time.monotonic() + self.interval
            self._problems.report("delivery_failed",
                                  f"inbox turn with rows {ids} failed ({type(exc).__name__}: {exc}); "
                                  "they stay pending and will be delivered again")
            return False
        finally:
            self._delivering = 0
            self.in_flight = None
        self._problems.clear("delivery_failed")
        self._handled.update(ids)
        if feed is not None and feed is self.feed:
            await self._feed_ack(ids)  # a failed ack is tried again at the next step
        self.stats.delivered_rows += len(ids)
        self.stats.delivered_turns += 1
        self._log("peer_delivered", rows=ids)
        return True

    def _advance(self, page: db.PollResult) -> bool:
        """Move the watermark over a fetched page as far as every row of it is handled."""
        unhandled = [r.id for r in page.rows if r.id not in self._handled]
        if unhandled:
            self._watermark = max(self._watermark, min(unhandled) - 1)
            return False
        self._watermark = max(self._watermark, page.scanned_to)
        return True

    # -- the background loop -----------------------------------------------------
    def _ready(self) -> bool:
        return (self._enabled and bool(self._waiting) and time.monotonic() >= self._hold_until
                and self._is_idle())

    async def run(self) -> None:
        """Poll every ``interval`` seconds until :meth:`aclose`; deliver as soon as idle."""
        self._wake = asyncio.Event()
        self._loop = asyncio.get_running_loop()
        self._stopping = False
        next_poll = 0.0
        while not self._stopping:
            now = time.monotonic()
            due = now >= next_poll
            if due or self._ready() or self._wake.is_set():
                self._wake.clear()
                await self.step()
                if due:
                    next_poll = time.monotonic() + self.interval
            timeout = max(0.0, next_poll - time.monotonic())
            if self._waiting and self._enabled:
                timeout = min(timeout, self.idle_check_seconds)
            try:
                await asyncio.wait_for(self._wake.wait(), timeout)
            except asyncio.TimeoutError:
                pass

    def start(self) -> asyncio.Task[None]:
        """Run :meth:`run` as a task on the current event loop (idempotent)."""
        task = self._task
        if task is None or task.done():
            task = self._task = asyncio.get_running_loop().create_task(self.run(), name="mnemara-peer-inbox")
        return task

    async def aclose(self) -> None:
        """Stop the runner. A turn in flight is cancelled; its rows stay undelivered."""
        self._stopping = True
        task, self._task = self._task, None
        try:
            if task is not None:
                self.wake()
                if self._delivering:
                    task.cancel()
                await self._close_task(task)
        finally:
            if self.feed is not None:
                await self.feed.aclose()

    async def _close_task(self, task: "asyncio.Task[None]") -> None:
        try:
            await asyncio.wait_for(asyncio.shield(task), timeout=max(1.0, db.WRITE_TIMEOUT_S + 1))
        except (asyncio.TimeoutError, asyncio.CancelledError):
            task.cancel()
            try:
                await task
            except (asyncio.CancelledError, Exception):
                pass

    # -- helpers ---------------------------------------------------------------
    def _log(self, event: str, **fields: Any) -> None:
        if self._logger is not None:
            log_event(self._logger, event, role=self.role, **fields)

    def _changed(self, force: bool = False) -> None:
        text = self.state_text
        if (force or text != self._last_text) and self._on_change is not None:
            try:
                self._on_change(self)
            except Exception:
                pass
        self._last_text = text


def _logger(debug_log: LogTarget | None) -> logging.Logger | None:
    """The instance logger problems and deliveries are logged to (given, or found by its debug.log path)."""
    if debug_log is None or isinstance(debug_log, logging.Logger):
        return debug_log
    return instance_logger(debug_log)
