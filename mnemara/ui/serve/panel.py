"""A headless panel: the session and the peer inbox the panel and the REPL use, with no terminal.

:class:`HeadlessPanel` attaches the inbox to an :class:`~mnemara.session.agent.AgentSession`
(:func:`mnemara.peer.attach_inbox`, the same delivery as the panel and the REPL: no second loop),
runs it on one event loop until a signal, and logs each event as one line
(:class:`~mnemara.ui.serve.event_log.EventLog`):

* ``serving`` (where messages come from), ``turn_started`` / ``turn_ended`` (the messages a turn
  carries; ok, cost, tokens, seconds), ``tool_use``, ``halt`` (the sentinel, a spend cap: any halt the
  session reports), ``error``, ``notice``, ``permission_refused``, ``inbox_problem`` /
  ``inbox_recovered``, ``stopping``, ``stopped``.
* SIGTERM or SIGINT: no new turn starts; the running one finishes, its messages are acknowledged (an
  ack the server did not confirm is tried again; ``stopped.unacknowledged`` names any it never
  confirmed: they come again and are acknowledged without a second turn), then the panel exits 0. A
  second signal stops the running turn: its messages are not acknowledged and come again to the next
  panel of the role.
* ``once``: deliver what is waiting (waiting for the transport first), then exit; 1 when a turn failed.
* Nobody can answer a permission question: a tool on ``ask`` is refused, with a ``permission_refused``
  line; pre-approve what inbox turns need in config.json / permissions.json.
* Health for ``mnemara peer status`` in ``serve_health.json`` (:mod:`mnemara.peer.health`).

Idle, it waits on the transport (the NATS long poll, the SQLite poll interval): no busy polling.
"""
from __future__ import annotations

import asyncio
import os
import signal
import time
from typing import TYPE_CHECKING, Any, Callable

from mnemara.core import events as ev
from mnemara.peer import attach_inbox, health
from mnemara.peer.inbox import CONNECT_WAIT_S

if TYPE_CHECKING:
    from mnemara.guard.request import PermissionRequest
    from mnemara.peer.inbox import PeerInbox
    from mnemara.session.agent import AgentSession
    from mnemara.ui.serve.event_log import EventLog

USAGE_KEYS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")


class HeadlessPanel:
    """Serve one session's peer inbox until stopped (see the module docstring)."""

    def __init__(self, session: "AgentSession", log: "EventLog", *, once: bool = False) -> None:
        self.session = session
        self.log = log
        self.once = once
        self.stopping = False
        self._signals = 0
        self._stop: asyncio.Event | None = None
        self._problems: dict[str, str] = {}
        self._turn_started = 0.0
        self._health = health.ServeHealth(pid=os.getpid(), started_at=time.time())
        self.inbox: PeerInbox | None = None

    # -- the inbox's callbacks ---------------------------------------------------------------
    def _idle(self) -> bool:
        return not self.stopping and not self.session.busy

    def _on_turn(self, text: str) -> Callable[[ev.Event], None]:
        inbox = self.inbox
        flight = inbox.in_flight if inbox is not None else None
        ids = list(flight.ids) if flight is not None else []
        self._turn_started = time.monotonic()
        self._health.running_since, self._health.running_messages = time.time(), len(ids)
        self._save_health()
        self.log.emit("turn_started", messages=ids, keys=(list(flight.keys) or None) if flight else None)
        return lambda event: self._on_event(event, ids)

    def _on_event(self, event: Any, ids: list[int]) -> None:
        if isinstance(event, ev.ToolUse):
            self.log.emit("tool_use", tool=event.name)
        elif isinstance(event, ev.Halt):
            self.log.emit("halt", reason=event.reason, source=event.source)
        elif isinstance(event, ev.ErrorEvent):
            self.log.emit("error", message=event.message, kind=event.kind)
        elif isinstance(event, ev.Notice):
            self.log.emit("notice", message=event.message, level=event.level)
        elif isinstance(event, ev.TurnDone):
            ok = not (event.error or event.interrupted)
            usage = {k: event.usage[k] for k in USAGE_KEYS if isinstance(event.usage.get(k), int)}
            self.log.emit("turn_ended", messages=ids, ok=ok, interrupted=event.interrupted or None,
                          error=event.error, cost_usd=event.cost_usd, usage=usage or None,
                          seconds=round(time.monotonic() - self._turn_started, 3))
            h = self._health
            h.running_since, h.running_messages = None, 0
            if ok:
                h.delivered_turns += 1
                h.last_delivery_at, h.last_delivery_messages = time.time(), len(ids)
            else:
                h.failed_turns += 1
            self._save_health()

    def _on_notice(self, line: str) -> None:
        self.log.emit("notice", message=line)

    def _on_change(self, inbox: "PeerInbox") -> None:
        now = dict(inbox.problems)
        for key, message in now.items():
            if self._problems.get(key) != message:
                self.log.emit("inbox_problem", key=key, message=message)
        for key in self._problems.keys() - now.keys():
            self.log.emit("inbox_recovered", key=key)
        self._problems = now

    def _refuse(self, request: "PermissionRequest") -> str:
        """Nobody sits at a headless panel: a tool on ``ask`` is refused, and the log says which."""
        self.log.emit("permission_refused", tool=request.tool_name, policy=request.policy_name,
                      target=request.describe(),
                      note="a headless panel cannot ask; allow it in config.json or permissions.json")
        return "n"

    def _save_health(self) -> None:
        try:
            health.save(self.session.instance.root, self._health)
        except OSError as exc:
            self.log.emit("error", message=f"cannot write {health.FILE_NAME}: {exc}", kind="health")

    # -- signals -------------------------------------------------------------------------------
    def _signal(self, signum: int) -> None:
        self._signals += 1
        name = signal.Signals(signum).name
        if self._signals == 1:
            self.stopping = True
            busy = self.session.busy
            self.log.emit("stopping", signal=name, running_turn=busy,
                          note=("the running turn finishes and its messages are acknowledged; a second signal "
                                "stops it" if busy else None))
            if self._stop is not None:
                self._stop.set()
        elif self.session.request_stop():
            self.log.emit("stopping", signal=name, note="the running turn is stopped; its messages are not "
                                                        "acknowledged and will be delivered again")

    # -- running -------------------------------------------------------------------------------
    async def run(self) -> int:
        """Serve until a signal (or, with ``once``, until what was waiting is delivered); the exit code."""
        loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, self._signal, signum)
        self.session.warn_to_stderr = False  # notices are log lines
        self.session.set_permission_prompt(self._refuse)
        inbox = attach_inbox(self.session, on_turn=self._on_turn, is_idle=self._idle, on_notice=self._on_notice,
                             on_change=self._on_change, enabled=True)
        if inbox is None:
            raise RuntimeError("peer_poll_enabled is false: nothing to serve")
        self.inbox = inbox
        self._health.source = inbox.source_text
        self._save_health()
        code = 0
        unconfirmed: list[int] = []
        try:
            for problem in self.session.gate.new_problems():
                self.log.emit("notice", message=problem, level="warning")
            if not self.session.config.peer_inbox_on:
                self.log.emit("notice", message="peer_inbox_on is false in config.json (a panel's /inbox off); "
                                                "a headless panel delivers anyway")
            connected = await inbox.settle(CONNECT_WAIT_S)
            self.log.emit("serving", role=inbox.role, source=inbox.source_text, connected=connected,
                          once=self.once or None, pid=os.getpid())
            if self.once:
                code = await self._deliver_waiting(inbox)
            else:
                inbox.start()
                await self._stop.wait()
            await inbox.quiesce()  # the running turn ends and is acknowledged before the inbox closes
            unconfirmed = await inbox.confirm_acks()  # an ack the server did not confirm is tried again
            if unconfirmed:
                self.log.emit("notice", level="warning",
                              message=f"the server did not confirm the ack of messages {unconfirmed}: they will "
                                      "be delivered again and acknowledged without a second turn (their answer "
                                      "is stored)")
        finally:
            for signum in (signal.SIGTERM, signal.SIGINT):
                loop.remove_signal_handler(signum)
            self.stopping = True
            await inbox.aclose()
            self._health.stopped_at = time.time()
            self._health.running_since = None
            self._save_health()
            stats = inbox.stats
            self.log.emit("stopped", delivered_turns=stats.delivered_turns, delivered_messages=stats.delivered_rows,
                          failed_turns=stats.failed_turns, silent_acked=stats.silent_acked,
                          unacknowledged=unconfirmed or None, exit_code=code)
        return code

    async def _deliver_waiting(self, inbox: "PeerInbox") -> int:
        """``--once``: step until nothing waits (or a turn fails, or a signal); 1 when a turn failed."""
        while not self.stopping:
            before = (inbox.stats.delivered_rows, inbox.stats.silent_acked, inbox.stats.failed_turns)
            await inbox.step()
            if inbox.stats.failed_turns > before[2]:
                return 1
            if (inbox.stats.delivered_rows, inbox.stats.silent_acked) == before[:2]:
                # nothing went out: done, unless messages wait that could not go (the inbox_problem says why)
                return 1 if inbox.waiting or inbox.problems else 0
            await inbox.settle(CONNECT_WAIT_S)  # more may have come meanwhile (or past a full batch)
        return 0
