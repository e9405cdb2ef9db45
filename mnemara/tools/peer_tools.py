"""``peer_send`` and ``peer_ack``: the built-in peer tools when the inbox runs over NATS.

Registered only with ``peer_transport: "nats"`` and ``peer_poll_enabled``; the
inbox's turn text names them (``mcp__mnemara__peer_send`` / ``mcp__mnemara__peer_ack``)
unless ``peer_poll_submit_tool`` / ``peer_poll_ack_tool`` name tools of the user's
own. With SQLite they do not exist: the user's peer-message system provides its
tools, as before. Like every tool they pass the permission gate (policy names
``PeerSend`` and ``PeerAck``; in-process tools default to allow, a policy may ask or deny).

``peer_send`` publishes through the configured server and stream as this panel's
role (never another's). ``peer_ack`` acknowledges messages of the inbox's current
batch early; the inbox acknowledges every message of a turn that completed anyway.
"""
from __future__ import annotations

import asyncio
from typing import Any

from pydantic import Field

from mnemara.core.errors import MnemaraError
from mnemara.tools import ToolContext, ToolSpec
from mnemara.tools.declare import ToolArgs, declare

ACK_TIMEOUT_S = 10.0


class PeerSendArgs(ToolArgs):
    payload_json: str = Field(min_length=1, description='The message as JSON text, e.g. {"type": "answer", "text": "..."}.')
    to: str = Field("", description="The recipient panel's role; empty sends a broadcast.")
    task: str = Field("", description="An optional topic label (task id).")


class PeerAckArgs(ToolArgs):
    ids: list[int] = Field(min_length=1, description="The message ids (stream sequences) of the inbox turn you handled.")


def peer_send(ctx: ToolContext, args: PeerSendArgs) -> dict[str, Any]:
    from mnemara.peer.outbox import send_async

    line = asyncio.run(send_async(ctx.config, ctx.instance.name, ctx.instance.root, args.to or None,
                                  args.payload_json, args.task or None))
    return {"ok": True, "sent": line}


def peer_ack(ctx: ToolContext, args: PeerAckArgs) -> dict[str, Any]:
    inbox = ctx.state.peer_inbox
    if inbox is None or inbox.feed is None:
        raise MnemaraError("no NATS peer inbox runs in this session; nothing was acknowledged")
    acked, unknown = inbox.ack_from_tool(list(args.ids), ACK_TIMEOUT_S)
    answer: dict[str, Any] = {"ok": True, "acked": acked}
    if unknown:
        answer["not_in_this_batch"] = unknown  # already acknowledged, or not this panel's
    return answer


def specs() -> list[ToolSpec]:
    return [
        declare("peer_send", "Send a message to another panel (or a broadcast) over the NATS peer bus.", PeerSendArgs,
                peer_send),
        declare("peer_ack", "Acknowledge peer messages of the current inbox turn that you handled.", PeerAckArgs,
                peer_ack),
    ]
