"""The seam between the peer inbox and a transport that hands it messages (NATS).

SQLite (``peer_transport: "sqlite"``, the default) is the inbox's own paged read
of the ``returns`` table; ``"nats"`` gives the inbox a :class:`Feed`, a
:class:`~mnemara.peer.nats_transport.NatsTransport`. Also here: the built-in
agent tools that go with NATS (``peer_send``/``peer_ack`` of the in-process MCP
server) and what of a config makes a new feed necessary.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Protocol

from mnemara.core.mcp_names import tool_name
from mnemara.peer.rows import PeerRow

if TYPE_CHECKING:
    from mnemara.core.config import Config

BUILTIN_TOOLS = {"send": "peer_send", "ack": "peer_ack"}


class Feed(Protocol):
    """A transport that hands the inbox its messages (NATS); SQLite is the inbox's own paged read."""

    name: str
    connected: bool
    limit: int  # at most this many messages fetched and not yet acknowledged
    on_arrival: Callable[[], None]  # set by the inbox: wakes it when messages arrive
    report: Callable[..., Any]  # the inbox's problem log: report(key, one_line_message)
    clear: Callable[..., Any]
    open_server: bool | None  # the server lets anyone in without credentials (None: not known yet)
    warn: Callable[[str], None]  # set by the inbox: says a warning once (the open server)

    @property
    def more(self) -> bool:
        """More messages wait on the server than were fetched."""
        ...

    def start(self) -> None: ...

    async def wait_ready(self, timeout: float) -> bool:
        """Wait until the feed is set up and has fetched what waited at connection time (True), or
        ``timeout`` seconds pass (False)."""
        ...

    async def caught_up(self, timeout: float) -> bool:
        """Wait until what the server holds for this panel is fetched (True), or ``timeout`` passes."""
        ...

    def rows(self) -> list[PeerRow]: ...

    async def ack(self, ids: list[int]) -> None: ...

    def key(self, row_id: int) -> str: ...

    def describe(self) -> str: ...

    async def aclose(self) -> None: ...


@dataclass
class InFlight:
    """The inbox turn being delivered: its text, the keys of the messages it carries (a feed's), and
    their ids (row ids, or stream sequences)."""

    text: str
    keys: list[str]
    ids: list[int] = field(default_factory=list)


def builtin_tool(config: "Config", which: str) -> str:
    """With NATS, the model-facing name of the built-in ``peer_send``/``peer_ack`` tool; else ''."""
    if config.peer_transport != "nats":
        return ""
    return tool_name(BUILTIN_TOOLS[which])


def feed_signature(config: "Config", role: str) -> tuple[Any, ...]:
    """What a feed is built from: a change means a new feed."""
    return (config.peer_transport, config.peer_nats_url, config.peer_nats_stream, config.peer_nats_subject_prefix,
            config.peer_nats_creds, config.peer_nats_tls_ca, config.peer_nats_tls_cert, config.peer_nats_tls_key,
            role, tuple(s for s in config.peer_poll_roles if s), config.peer_poll_batch)


def feed_for(config: "Config", role: str, root: Path | None) -> tuple[Feed | None, str]:
    """The feed of ``config`` (None for SQLite) and, when its settings cannot be used, why (one line)."""
    if config.peer_transport != "nats":
        return None, ""
    from mnemara.peer.nats_settings import NatsSettings, PeerSettingsError
    from mnemara.peer.nats_transport import NatsTransport

    try:
        settings = NatsSettings.from_config(config, root)
        return NatsTransport(settings, role, tuple(s for s in config.peer_poll_roles if s)), ""
    except PeerSettingsError as exc:
        return None, str(exc)
