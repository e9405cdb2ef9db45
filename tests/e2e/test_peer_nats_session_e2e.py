"""The NATS inbox beside a real AgentSession: NATS -> inbox -> real CLI -> scripted API -> answer row.

The stream sequences a turn carried are stored with its answer row; a message whose
ack was lost after its turn completed is acknowledged without a second turn.
"""
from __future__ import annotations

import asyncio
import json

import pytest

from mnemara.core.config import update_config
from mnemara.peer import attach_inbox, session_deliverer
from mnemara.peer.nats_settings import NatsSettings
from mnemara.peer.nats_transport import connect
from mnemara.peer.outbox import send_async
from mnemara.testing.scripted_api import reply
from tests.peer.nats_support import nats_config, nats_server, stream_name  # noqa: F401

pytestmark = pytest.mark.e2e


async def until(check, timeout: float = 60.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not check():
        assert loop.time() < deadline, "condition not met in time"
        await asyncio.sleep(0.02)


async def test_a_completed_turn_stores_its_sequences_and_a_lost_ack_is_not_a_second_turn(
        scripted_api, session_factory, nats_server, stream_name) -> None:
    session = session_factory("eng")
    fields = nats_config(nats_server, stream_name, peer_role="eng", peer_poll_roles=["lead"]).model_dump(mode="json")
    update_config(session.instance.config_path, **{k: v for k, v in fields.items() if k.startswith("peer_")})
    session.reload_config()
    real = session_deliverer(session)
    failures = [1]

    async def deliver(text: str) -> None:  # the turn completes, then the panel "fails" before its ack
        await real(text)
        if failures:
            failures.pop()
            raise RuntimeError("lost before the ack")

    inbox = attach_inbox(session, deliver=deliver)
    assert inbox is not None and inbox.feed is not None
    scripted_api.push(reply("Handled; acked."), reply("unused"))
    lead = session.config.model_copy(update={"peer_role": "lead"})
    await send_async(lead, "lead", None, "eng", json.dumps({"q": "lease timeout?"}))
    await send_async(lead, "lead", None, None, json.dumps({"q": "status?"}))
    inbox.start()
    try:
        await until(lambda: inbox.stats.failed_turns == 1)
        inbox._hold_until = 0.0
        await until(lambda: not inbox.feed.rows() and not inbox.waiting)  # type: ignore[union-attr]
        await asyncio.sleep(0.3)
    finally:
        await inbox.aclose()
    sent = [r for r in scripted_api.message_requests() if "[peer inbox]" in r.user_text()]
    assert len(sent) == 1  # one turn for the two messages, none for the repeat
    assert "`mcp__mnemara__peer_ack`" in sent[0].user_text() and "`mcp__mnemara__peer_send`" in sent[0].user_text()
    answers = [t for t in session.store.history() if t.role == "assistant"]
    assert [a.meta.get("peer_delivered") for a in answers] == [[f"nats:{stream_name}:1", f"nats:{stream_name}:2"]]
    settings = NatsSettings.from_config(session.config)
    nc = await connect(settings)
    try:
        info = await nc.jetstream().consumer_info(stream_name, settings.durable("eng"))
    finally:
        await nc.close()
    assert (info.num_pending, info.num_ack_pending) == (0, 0)
    await session.aclose()
