"""Send a peer message and read the inbox's state from outside a panel (``mnemara peer send|status``).

Both go through the transport the instance is configured for: SQLite inserts a
``pending`` row in the ``returns`` table; NATS publishes on the stream with a
``Nats-Msg-Id``, so a retried publish is stored once.
"""
from __future__ import annotations

import asyncio
import json
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from mnemara.core.errors import MnemaraError, UsageError
from mnemara.peer import db, watermark
from mnemara.peer.addressing import resolve_db_path, resolve_role
from mnemara.peer.nats_settings import NatsSettings, PeerSettingsError, check_token, inbox_prefix
from mnemara.peer.nats_transport import (PeerTransportError, accepts_anonymous, connect, ensure_stream,
                                         open_server_warning, publish, unbound_sender, unbound_sender_warning)

if TYPE_CHECKING:
    from mnemara.core.config import Config

PUBLISH_ATTEMPTS = 2


class PeerSendError(MnemaraError):
    """The message was not sent (the server or file could not take it); one line saying why."""


class PeerInputError(UsageError):
    """The message or a setting is not usable; nothing was sent."""


@dataclass(frozen=True)
class Outgoing:
    sender: str
    to: str | None
    payload_json: str
    task: str | None


def check_payload(text: str) -> str:
    """``text`` when it is one JSON value (the spec's ``payload_json``)."""
    try:
        json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise PeerInputError(f"PAYLOAD_JSON is not valid JSON ({exc}); nothing was sent") from None
    return text


def outgoing(config: "Config", instance_name: str, to: str | None, payload_json: str,
             task: str | None) -> Outgoing:
    sender = resolve_role(config, instance_name)
    if to is not None and not to.strip():
        raise PeerInputError("--to is empty (leave it out to send a broadcast); nothing was sent")
    to = to.strip() if to is not None else None
    if config.peer_transport == "nats":
        try:
            check_token("this panel's role", sender)
            if to is not None:
                check_token("--to", to)
        except PeerSettingsError as exc:
            raise PeerInputError(f"{exc}; nothing was sent") from None
    return Outgoing(sender, to, check_payload(payload_json), (task or "").strip() or None)


def nats_settings(config: "Config", root: Path | None) -> NatsSettings:
    try:
        return NatsSettings.from_config(config, root)
    except PeerSettingsError as exc:
        raise PeerInputError(f"{exc} (config.json)") from None


def send(config: "Config", instance_name: str, root: Path | None, to: str | None, payload_json: str,
         task: str | None = None) -> str:
    """Send one message through the configured transport; returns a line saying where it went."""
    return asyncio.run(send_async(config, instance_name, root, to, payload_json, task))


async def send_async(config: "Config", instance_name: str, root: Path | None, to: str | None, payload_json: str,
                     task: str | None = None) -> str:
    """:func:`send` inside a running event loop."""
    msg = outgoing(config, instance_name, to, payload_json, task)
    target = f"to {msg.to}" if msg.to else "as a broadcast"
    if config.peer_transport == "nats":
        settings = nats_settings(config, root)
        seq = await _publish(settings, msg)
        return f"sent {target}: message {seq} on NATS stream {settings.stream} ({settings.shown_url})"
    path = resolve_db_path(config.peer_db_path, root)
    if path is None:
        raise PeerInputError("peer_db_path is empty in config.json (or set peer_transport to nats); nothing was sent")
    try:
        row = await asyncio.to_thread(db.insert_pending, path, msg.sender, msg.to, msg.payload_json, msg.task)
    except db.PeerDbError as exc:
        raise PeerSendError(f"{exc.message}; nothing was sent") from None
    return f"sent {target}: row {row} of {path}"


async def _publish(settings: NatsSettings, msg: Outgoing) -> int:
    msg_id = f"{msg.sender}-{uuid.uuid4().hex}"
    try:
        nc = await connect(settings, inbox_prefix=inbox_prefix(msg.sender))
    except PeerTransportError as exc:
        raise PeerSendError(exc.message.split("; retrying")[0] + "; nothing was sent") from None
    try:
        js = nc.jetstream()
        last: Exception | None = None
        for _ in range(PUBLISH_ATTEMPTS):  # the same Nats-Msg-Id: a retry after a lost answer is stored once
            try:
                await ensure_stream(js, settings)
                return await publish(js, settings, msg.sender, msg.to, msg.payload_json, msg.task, msg_id)
            except PeerTransportError as exc:
                raise PeerSendError(f"{exc.message}; nothing was sent") from None
            except Exception as exc:
                last = exc
        raise PeerSendError(f"NATS publish to {settings.shown_url} failed ({type(last).__name__}: {last}); "
                            "nothing was sent")
    finally:
        await nc.close()


def inbox_line(config: "Config") -> str:
    """What the settings make of this instance's inbox, in one line (``peer status``)."""
    if not config.peer_poll_enabled:
        return ("inbox: off (peer_poll_enabled is false): no panel of this instance reads peer messages; "
                "peer send still works")
    if not config.peer_inbox_on:
        return ("inbox: on (peer_poll_enabled), delivery OFF (peer_inbox_on is false; /inbox on turns it on): "
                "panels count messages and deliver none")
    return "inbox: on (peer_poll_enabled), delivery ON"


def status(config: "Config", instance_name: str, root: Path | None) -> tuple[list[str], bool]:
    """Lines for ``mnemara peer status`` and whether it is healthy: False when the transport is set but
    does not answer, or when the inbox is on with no transport set (a transport that is not set, on an
    instance whose inbox is off, is only said)."""
    lines, ok = _transport_status(config, instance_name, root)
    if root is not None:
        from mnemara.peer import health

        lines += health.describe(root)
    return lines, ok


def _transport_status(config: "Config", instance_name: str, root: Path | None) -> tuple[list[str], bool]:
    role = resolve_role(config, instance_name)
    lines = [f"transport: {config.peer_transport}", f"role: {role}", inbox_line(config)]
    if config.peer_transport == "nats":
        if not config.peer_nats_url.strip() and not config.peer_poll_enabled:
            return lines + ["connection: not set (peer_nats_url is empty)"], True
        settings = nats_settings(config, root)
        more, ok = asyncio.run(_nats_status(settings, role))
        return lines + more, ok
    path = resolve_db_path(config.peer_db_path, root)
    if path is None:
        if config.peer_poll_enabled:
            return lines + ["connection: peer_poll_enabled is true but peer_db_path is empty "
                            "(set it, or peer_transport: nats)"], False
        return lines + ["connection: not set (peer_db_path is empty)"], True
    senders = tuple(s for s in config.peer_poll_roles if s)
    try:
        pending = db.count_pending(path, db.Filter(role=role, senders=senders))
    except db.PeerDbError as exc:
        return lines + [f"connection: {exc.message}"], False
    saved = watermark.load(root / watermark.FILE_NAME, path) if root is not None else None
    return lines + [f"connection: peer db {path} readable", f"pending: {pending}",
                    f"last delivered id: {saved if saved is not None else '(none yet: the inbox has not run)'}"], True


async def _nats_status(settings: NatsSettings, role: str) -> tuple[list[str], bool]:
    from nats.js.errors import NotFoundError

    try:
        durable = settings.durable(role)
    except PeerSettingsError as exc:
        return [f"connection: not tried ({exc})"], False
    try:
        nc = await connect(settings, inbox_prefix=inbox_prefix(role))
    except PeerTransportError as exc:
        return [f"connection: {exc.message.split('; retrying')[0]}"], False
    try:
        js = nc.jetstream()
        lines = [f"connection: connected to {settings.shown_url}, stream {settings.stream}"]
        if await accepts_anonymous(settings):
            lines.append(f"warning: {open_server_warning(settings)}")
        elif (user := await unbound_sender(nc, settings, role)) is not None:
            lines.append(f"warning: {unbound_sender_warning(settings, user)}")
        try:
            info = await js.consumer_info(settings.stream, durable)
        except NotFoundError:
            return lines + ["pending: unknown (no consumer yet: the panel has not run with NATS)",
                            "last delivered id: (none yet)"], True
        pending = int(info.num_pending or 0) + int(info.num_ack_pending or 0)
        floor = info.ack_floor.stream_seq if info.ack_floor is not None else 0
        return lines + [f"pending: {pending} ({info.num_ack_pending or 0} fetched, not acknowledged)",
                        f"last delivered id: {floor or '(none yet)'} (ack floor, stream sequence)"], True
    except Exception as exc:
        return [f"connection: NATS {settings.shown_url}: {type(exc).__name__}: {exc}"], False
    finally:
        await nc.close()
