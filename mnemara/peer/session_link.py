"""Run a :class:`PeerInbox` beside an :class:`~mnemara.session.agent.AgentSession`.

For embedders (and the REPL)::

    session = AgentSession.open("eng")
    inbox = attach_inbox(session)        # None when peer_poll_enabled is false
    if inbox: inbox.start()              # inside the running event loop

:func:`session_deliverer` makes the inbox's ``deliver`` from ``session.aturn``:
a turn that ended with an ``ErrorEvent`` or was interrupted raises
:class:`PeerTurnFailed`, so its rows are delivered again later. A turn halted by
the sentinel counts as delivered (the model saw the messages and stopped to ask
the user; delivering them again would only repeat the halt). A UI that renders
turns itself passes its own ``deliver`` with the same contract instead.
"""
from __future__ import annotations

from mnemara.core.errors import MnemaraError

from typing import TYPE_CHECKING, Any, Callable, Protocol

from mnemara.peer.inbox import Deliver, PeerInbox
from mnemara.core.turn_parts import TurnPart

if TYPE_CHECKING:
    from mnemara.core.config import Config
    from collections.abc import AsyncIterator

    from mnemara.core import events as ev
    from mnemara.core.turn_parts import PartHost, TurnHost

    class PeerHost(PartHost, Protocol):
        """What the inbox uses of the session it feeds: its parts, whether it is busy, a turn."""

        busy: bool
        peer_inbox: PeerInbox | None

        def aturn(self, text: str) -> AsyncIterator[ev.Event]: ...


DELIVERED = "peer_delivered"  # the answer row's meta key listing the peer messages its turn carried


class PeerTurnFailed(MnemaraError):
    """The turn carrying peer messages did not complete; they stay undelivered."""


EventSink = Callable[[Any], Any]


def session_deliverer(session: "PeerHost", on_event: EventSink | None = None,
                      on_turn: Callable[[str], EventSink | None] | None = None) -> Deliver:
    """A ``deliver(text)`` that runs one turn on ``session`` and raises if it did not complete.

    ``on_turn(text)`` is called as an inbox turn starts (a UI shows the injected
    message there) and may return a callable that receives that turn's events;
    ``on_event`` receives the events of every inbox turn.
    """
    from mnemara.core import events as ev

    async def deliver(text: str) -> None:
        error: str | None = None
        done: Any = None
        sink = on_turn(text) if on_turn is not None else None
        async for event in session.aturn(text):
            if sink is not None:
                sink(event)
            if on_event is not None:
                on_event(event)
            if isinstance(event, ev.ErrorEvent):
                error = error or event.message
            elif isinstance(event, ev.TurnDone):
                done = event
        if done is None:
            raise PeerTurnFailed("the turn ended without finishing")
        if error or done.error:
            raise PeerTurnFailed(error or done.error or "turn failed")
        if done.interrupted:
            raise PeerTurnFailed("the turn was interrupted")

    return deliver


def attach_inbox(session: "PeerHost", *, deliver: Deliver | None = None,
                 on_event: EventSink | None = None, on_turn: Callable[[str], EventSink | None] | None = None,
                 is_idle: Callable[[], bool] | None = None, **kwargs: Any) -> PeerInbox | None:
    """Build the session's inbox from its config and expose it as ``session.peer_inbox``.

    Returns None (and sets ``session.peer_inbox = None``) when ``peer_poll_enabled``
    is false. The inbox is not started; call ``inbox.start()`` inside the event loop
    that runs the session's turns. After each successful turn of the session the
    inbox is woken, so messages that arrived meanwhile go out as soon as it is idle.
    ``is_idle`` defaults to ``not session.busy``; a UI that runs turns in workers
    passes its own (idle = no turn running and none about to start). Other
    keyword arguments go to :class:`PeerInbox` (e.g. ``on_change`` to refresh a
    status line, ``enabled=False`` to start with delivery OFF).
    """
    cfg = session.config
    if not cfg.peer_poll_enabled:
        session.peer_inbox = None
        return None
    inst = session.instance
    inbox = PeerInbox.from_config(
        cfg, inst.name,
        deliver=deliver or session_deliverer(session, on_event, on_turn),
        is_idle=is_idle or (lambda: not session.busy),
        instance_root=inst.root,
        debug_log=inst.logger,
        delivered_keys=lambda keys: session.store.meta_list_values(DELIVERED, keys),
        **kwargs,
    )
    session.peer_inbox = inbox
    session.tool_context.state.peer_inbox = inbox  # the built-in peer_ack tool acknowledges through it
    session.parts[:] = [p for p in session.parts if not isinstance(p, InboxPart)]  # one inbox per session
    session.add_part(InboxPart(inbox))
    return inbox


class InboxPart(TurnPart):
    """The peer inbox as a part of every turn: woken after each one, and told about config changes."""

    name = "peer_inbox"

    def __init__(self, inbox: PeerInbox) -> None:
        self.inbox = inbox

    def answer_meta(self, host: TurnHost, text: str) -> dict[str, Any]:
        """The keys of the peer messages this turn carries (NATS), stored with its answer: a message
        that comes again (its ack lost in a crash) is then acknowledged without a second turn."""
        flight = self.inbox.in_flight
        if flight is not None and flight.keys and flight.text == text:
            return {DELIVERED: list(flight.keys)}
        return {}

    def after_turn(self, host: TurnHost, assistant_row_id: int) -> None:
        self.inbox.wake()  # messages that arrived during the turn go out as soon as it is idle

    def config_changed(self, config: Config) -> None:
        self.inbox.apply_config(config)
