"""The peer inbox over NATS JetStream: a durable pull consumer per panel role.

:class:`NatsTransport` keeps a connection and a small buffer of fetched,
not yet acknowledged messages (at most ``limit``). A background task connects
(retrying while the server is down), makes sure the stream and this role's
durable consumer exist, rewinds the consumer to its ack floor
(``$JS.API.CONSUMER.RESET``, server 2.14+) so messages left unacknowledged by a
crash come first and in order, then long-polls for more. The inbox takes the
buffer as :class:`~mnemara.peer.rows.PeerRow` rows whose ``id`` is the stream
sequence, and acknowledges them (confirmed by the server) only after the turn
carrying them succeeded. A rewound consumer also delivers again messages that
were acknowledged after an unacknowledged one; the inbox recognises them by
stream sequence (stored with the turn), never by delivery count.

Trouble (server down, no JetStream, a stream that does not take our subjects)
is reported as one line through ``report(key, message)`` and retried.
"""
from __future__ import annotations

from mnemara.core.errors import MnemaraError

import asyncio
import json
from collections.abc import Callable
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from mnemara.peer.nats_settings import USER_INFO, NatsSettings, inbox_prefix
from mnemara.peer.rows import PeerRow

if TYPE_CHECKING:
    from nats.aio.client import Client
    from nats.aio.msg import Msg
    from nats.js.client import JetStreamContext

RETRY_S = 2.0
FETCH_WAIT_S = 5.0
CONNECT_TIMEOUT_S = 2.0
ACKED_KEPT = 4096  # confirmed acks remembered, so a second ack of one message is no failure
ACK_WAIT_S = 24 * 3600  # a turn may take long; a crash is recovered by the rewind at start, not by ack_wait
STREAM_MAX_AGE_S = 14 * 24 * 3600  # a stream we create keeps messages two weeks (no size reservation)
HEADER_TASK = "Mnemara-Task"
HEADER_SUBMITTED = "Mnemara-Submitted"
PROBLEM_KEYS = ("nats_down", "nats_setup")

Report = Callable[[str, str], None]
Clear = Callable[..., None]


class PeerTransportError(MnemaraError):
    """A transport operation failed; ``key`` names the kind, the message is one line."""

    def __init__(self, key: str, message: str, unconfirmed: tuple[int, ...] = ()) -> None:
        super().__init__(message)
        self.key = key
        self.unconfirmed = unconfirmed  # an ack: the messages whose ack the server did not confirm


async def connect(settings: NatsSettings, **callbacks: Any) -> "Client":
    """One connection attempt (raises :class:`PeerTransportError` naming the server when it fails).

    No automatic reconnection: the transport's own loop reconnects, reports and rewinds the consumer.
    """
    import nats

    seen: list[Exception] = []

    async def remember(exc: Exception) -> None:  # nats-py would print errors to stderr otherwise
        seen[:] = [exc]  # the last one says why a connection attempt failed

    try:
        return await nats.connect(settings.server_url, connect_timeout=CONNECT_TIMEOUT_S, allow_reconnect=False,
                                  max_reconnect_attempts=1, reconnect_time_wait=0.05, error_cb=remember,
                                  **settings.connect_options(), **callbacks)
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        cause = seen[-1] if seen else exc
        text = str(cause).strip() or type(cause).__name__
        raise PeerTransportError("nats_down", f"NATS server {settings.shown_url} unreachable ({text}); "
                                 f"retrying every {RETRY_S:g}s") from None


async def ensure_stream(js: "JetStreamContext", settings: NatsSettings) -> None:
    """Create the stream when it is missing; refuse one that does not take ``<prefix>.>``."""
    from nats.js import api
    from nats.js.errors import BadRequestError, NotFoundError

    wanted = f"{settings.prefix}.>"
    try:
        info = await js.stream_info(settings.stream)
    except NotFoundError:
        try:
            await js.add_stream(name=settings.stream, subjects=[wanted], storage=api.StorageType.FILE,
                                retention=api.RetentionPolicy.LIMITS, max_age=STREAM_MAX_AGE_S,
                                discard=api.DiscardPolicy.OLD)
        except BadRequestError as exc:
            raise PeerTransportError("nats_setup", f"NATS stream {settings.stream} for {wanted} cannot be created "
                                     f"({exc.description}); set peer_nats_stream or peer_nats_subject_prefix") from None
        return
    subjects = list(info.config.subjects or [])
    if wanted not in subjects:
        raise PeerTransportError("nats_setup", f"NATS stream {settings.stream} takes {', '.join(subjects) or 'no subjects'}"
                                 f", not {wanted} (set peer_nats_stream or peer_nats_subject_prefix)")


async def publish(js: "JetStreamContext", settings: NatsSettings, sender: str, to: str | None,
                  payload_json: str, task: str | None = None, msg_id: str = "") -> int:
    """Publish one message (``to`` None: a broadcast); returns its stream sequence.

    ``msg_id`` becomes ``Nats-Msg-Id``: the server drops a second publish with the same id
    within its duplicate window, so a retried send is stored once.
    """
    subject = settings.role_subject(to, sender) if to else settings.broadcast_subject(sender)
    headers = {HEADER_SUBMITTED: datetime.now(timezone.utc).isoformat(timespec="seconds")}
    if task:
        headers[HEADER_TASK] = task
    if msg_id:
        headers["Nats-Msg-Id"] = msg_id
    ack = await js.publish(subject, payload_json.encode("utf-8"), stream=settings.stream, headers=headers)
    return int(ack.seq)


def row_of(msg: "Msg", settings: NatsSettings) -> PeerRow:
    """A fetched message as the inbox's row: id = stream sequence, the sender the subject names (never a
    header: ``Mnemara-From`` is ignored), recipient None for a broadcast."""
    headers = msg.headers or {}
    named = settings.sender_of(msg.subject)
    sender, recipient = named if named is not None else (None, None)
    return PeerRow.from_db(id=msg.metadata.sequence.stream, agent_role=sender,
                           recipient_role=recipient, payload_json=msg.data.decode("utf-8", errors="replace"),
                           task_id=headers.get(HEADER_TASK), submitted_at=headers.get(HEADER_SUBMITTED))


async def accepts_anonymous(settings: NatsSettings) -> bool:
    """Whether the server lets a client in with no credential at all (then anyone who reaches it reads
    every panel's messages and sends as any role). One connection attempt without them."""
    try:
        nc = await connect(settings.anonymous())
    except PeerTransportError:
        return False
    try:
        await nc.close()
    except Exception:
        pass
    return True


async def unbound_sender(nc: "Client", settings: NatsSettings, role: str) -> str | None:
    """The authenticated user's name when its permissions let it publish as other roles (its sender is
    then not proven); None when they bind it, or when the server does not say (no answer, no right to ask)."""
    try:
        reply = await nc.request(USER_INFO, b"", timeout=CONNECT_TIMEOUT_S)
        data = json.loads(reply.data or b"{}").get("data") or {}
    except asyncio.CancelledError:
        raise
    except Exception:
        return None
    if not isinstance(data, dict) or not data.get("user"):
        return None
    publish = (data.get("permissions") or {}).get("publish") if isinstance(data.get("permissions"), dict) else None
    allow = publish.get("allow") if isinstance(publish, dict) else None
    if settings.sends_as_others(allow if isinstance(allow, list) else None, role):
        return str(data["user"])
    return None


def unbound_sender_warning(settings: NatsSettings, user: str) -> str:
    return (f"NATS user {user!r} on {settings.shown_url} may publish as any role: the sender a panel shows is not "
            "proven (give each panel its own user: mnemara peer permissions; docs/peer-inbox.md, Identities)")


def open_server_warning(settings: NatsSettings) -> str:
    return (f"NATS server {settings.shown_url} accepts connections without credentials: anyone who reaches it "
            "can read these messages and send as any role (give each panel its own user: docs/peer-inbox.md, "
            "Identities)")


class NatsTransport:
    """Fetches this role's messages into a bounded buffer and acknowledges them on request."""

    name = "nats"

    def __init__(self, settings: NatsSettings, role: str, senders: tuple[str, ...], *, limit: int = 100,
                 on_arrival: Callable[[], None] = lambda: None, report: Report = lambda k, m: None,
                 clear: Clear = lambda *k: None) -> None:
        self.settings = settings
        self.role = role
        self.senders = senders
        self.subjects = settings.filter_subjects(role, senders)
        self.durable = settings.durable(role)
        self.limit = limit
        self.connected = False
        self.open_server: bool | None = None  # the server accepts connections without credentials (None: unknown)
        self.warn: Callable[[str], None] = lambda line: None  # said once: the open-server warning
        self.pending_on_server: int | None = None
        self.on_arrival = on_arrival
        self.report = report
        self.clear = clear
        self._buffer: dict[int, Msg] = {}
        self._acked: dict[int, None] = {}  # the latest confirmed acks, oldest first (an ordered set)
        self._space = asyncio.Event()
        self._nc: Client | None = None
        self._task: asyncio.Task[None] | None = None
        self._closing = False  # aclose runs: the background task ends instead of reconnecting
        self._ready = asyncio.Event()
        self._fetched = asyncio.Event()  # set after each fetch (caught_up waits on it)

    # -- what the inbox uses ------------------------------------------------------------------
    @property
    def key_prefix(self) -> str:
        return f"nats:{self.settings.stream}:"

    def key(self, seq: int) -> str:
        """How a message is named in the turn that carried it (stream and sequence)."""
        return f"{self.key_prefix}{seq}"

    def rows(self) -> list[PeerRow]:
        """The fetched, unacknowledged messages, oldest first."""
        return [row_of(self._buffer[seq], self.settings) for seq in sorted(self._buffer)]

    def describe(self) -> str:
        state = "connected" if self.connected else "not connected"
        return f"NATS {self.settings.shown_url} stream {self.settings.stream} consumer {self.durable} ({state})"

    @property
    def more(self) -> bool:
        return bool(self.pending_on_server)

    async def ack(self, seqs: list[int]) -> None:
        """Acknowledge buffered messages ``seqs`` and wait for the server to confirm each.

        Raises :class:`PeerTransportError`; the ones not confirmed stay buffered.
        """
        order = sorted(seqs)
        for n, seq in enumerate(order):
            msg = self._buffer.get(seq)
            if msg is None:
                if seq in self._acked:
                    continue  # confirmed already (the peer_ack tool, then the turn's end)
                # The connection dropped while the turn ran: the buffer went with it, and the server
                # holds the message as delivered until the reconnect's rewind hands it over again.
                raise PeerTransportError("ack_failed", f"NATS ack of message {seq} not sent: the connection "
                                         "dropped while it was handled; it is acknowledged when it comes again",
                                         tuple(s for s in order[n:] if s not in self._acked))
            try:
                await msg.ack_sync(timeout=CONNECT_TIMEOUT_S)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                raise PeerTransportError("ack_failed", f"NATS ack of message {seq} not confirmed "
                                         f"({type(exc).__name__}: {exc or 'timeout'}); it will come again",
                                         tuple(order[n:])) from None
            del self._buffer[seq]
            self._acked[seq] = None
            while len(self._acked) > ACKED_KEPT:
                del self._acked[next(iter(self._acked))]
        self._space.set()

    def start(self) -> None:
        if self._task is None or self._task.done():
            self._closing = False
            self._task = asyncio.get_running_loop().create_task(self._run(), name="mnemara-peer-nats")

    async def wait_ready(self, timeout: float) -> bool:
        """Wait until the consumer is set up and what waited on the server at connection time is
        fetched (True), or ``timeout`` passes (False): the first delivery point of a run waits on it."""
        try:
            await asyncio.wait_for(self._ready.wait(), timeout)
        except asyncio.TimeoutError:
            return False
        return True

    async def caught_up(self, timeout: float) -> bool:
        """Wait until every message the server holds for this consumer is fetched (or the buffer is
        full): True, or False when not connected or ``timeout`` passes. Asks the server, so a message
        published a moment ago counts even before the long poll hands it over."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            nc = self._nc
            if nc is None or not self.connected:
                return False
            try:
                info = await nc.jetstream().consumer_info(self.settings.stream, self.durable,
                                                          timeout=max(0.1, deadline - loop.time()))
            except asyncio.CancelledError:
                raise
            except Exception:
                return False
            if len(self._buffer) >= self.limit or (
                    not info.num_pending and int(info.num_ack_pending or 0) <= len(self._buffer)):
                return True
            self._fetched.clear()
            try:
                await asyncio.wait_for(self._fetched.wait(), max(0.0, min(0.5, deadline - loop.time())))
            except asyncio.TimeoutError:
                pass
            if loop.time() >= deadline:
                return False

    async def aclose(self) -> None:
        """Stop fetching and close the connection (``close``, not ``drain``: acks are already confirmed)."""
        self._closing = True
        task, self._task = self._task, None
        # nats-py's Client.close() swallows a CancelledError (it awaits its own tasks' cancellation),
        # so one cancel() can land there and be lost while the task goes on reconnecting to a server
        # that is gone: cancel until the task is done, and let _run see _closing between attempts.
        while task is not None and not task.done():
            task.cancel()
            await asyncio.wait({task}, timeout=1.0)
        if task is not None and not task.cancelled():
            task.exception()  # retrieved: an ending task's error is not "never retrieved" noise
        await self._close()

    # -- the background task ------------------------------------------------------------------
    async def _close(self) -> None:
        nc, self._nc = self._nc, None
        self.connected = False
        self._ready.clear()
        self._buffer.clear()  # not acknowledged: the server delivers them again
        if nc is not None:
            try:
                await nc.close()
            except Exception:
                pass

    async def _run(self) -> None:
        while not self._closing:
            try:
                await self._session()
            except asyncio.CancelledError:
                raise
            except PeerTransportError as exc:
                self.report(exc.key, exc.message)
            except Exception as exc:
                lost = "connection lost" if self.connected else "failed"
                self.report("nats_down", f"NATS server {self.settings.shown_url} {lost} ({type(exc).__name__}: "
                            f"{exc}); retrying every {RETRY_S:g}s")
            await self._close()
            if not self._closing:
                await asyncio.sleep(RETRY_S)

    async def _session(self) -> None:
        """Connect, set up, rewind, then fetch until something fails."""
        self._nc = nc = await connect(self.settings, inbox_prefix=inbox_prefix(self.role))
        js = nc.jetstream()
        await ensure_stream(js, self.settings)
        sub = await self._consumer(js)
        await self._rewind(nc)
        self.connected = True
        self.clear(*PROBLEM_KEYS)
        if self.open_server is None:  # once per transport: one connection attempt without credentials
            self.open_server = await accepts_anonymous(self.settings)
            if self.open_server:
                self.warn(open_server_warning(self.settings))
            else:
                user = await unbound_sender(nc, self.settings, self.role)
                if user is not None:
                    self.warn(unbound_sender_warning(self.settings, user))
        if not await self._backlog(js):
            self._ready.set()  # nothing waits: ready now (else after the first fetch below)
        while True:
            if len(self._buffer) >= self.limit:
                self._space.clear()
                await self._space.wait()
                continue
            try:
                msgs = await sub.fetch(self.limit - len(self._buffer), timeout=FETCH_WAIT_S)
            except asyncio.TimeoutError:  # nats-py raises its own TimeoutError, and on a slow reply a bare one
                msgs = []  # nothing came: a connection that dropped is caught just below
            if not nc.is_connected:
                raise PeerTransportError("nats_down", f"NATS server {self.settings.shown_url} connection lost; "
                                         f"retrying every {RETRY_S:g}s")
            fresh = False
            for msg in msgs:
                seq = msg.metadata.sequence.stream
                fresh = fresh or seq not in self._buffer
                self._buffer[seq] = msg  # a redelivery replaces the older copy
            if msgs:
                self.pending_on_server = msgs[-1].metadata.num_pending
            if fresh:
                self.on_arrival()
            self._ready.set()
            self._fetched.set()

    async def _consumer(self, js: "JetStreamContext") -> Any:
        """This role's durable pull consumer, created or brought to the current filter."""
        from nats.js import api
        from nats.js.errors import NotFoundError

        config = api.ConsumerConfig(durable_name=self.durable, name=self.durable, ack_policy=api.AckPolicy.EXPLICIT,
                                    deliver_policy=api.DeliverPolicy.ALL, ack_wait=ACK_WAIT_S,
                                    filter_subjects=self.subjects, max_ack_pending=max(1000, self.limit * 2))
        try:
            info = await js.consumer_info(self.settings.stream, self.durable)
            if sorted(info.config.filter_subjects or [info.config.filter_subject or ""]) != sorted(self.subjects):
                await js.add_consumer(self.settings.stream, config=config)  # same name: an update
        except NotFoundError:
            await js.add_consumer(self.settings.stream, config=config)
        return await js.pull_subscribe_bind(durable=self.durable, stream=self.settings.stream)

    async def _backlog(self, js: "JetStreamContext") -> int:
        """How many messages wait for this consumer right after the rewind."""
        info = await js.consumer_info(self.settings.stream, self.durable)
        return int(info.num_pending or 0) + int(info.num_ack_pending or 0)

    async def _rewind(self, nc: "Client") -> None:
        """Reset the consumer to its ack floor: what a crash left unacknowledged comes first, in order."""
        subject = f"$JS.API.CONSUMER.RESET.{self.settings.stream}.{self.durable}"
        reply = await nc.request(subject, b"", timeout=CONNECT_TIMEOUT_S)
        try:
            data = json.loads(reply.data or b"{}")
        except ValueError:
            data = {}
        error = data.get("error") if isinstance(data, dict) else None
        if error:
            raise PeerTransportError("nats_setup", f"NATS consumer reset refused ({error.get('description', error)}); "
                                     "the server must be 2.14 or newer")
