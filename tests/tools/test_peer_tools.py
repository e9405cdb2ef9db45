"""The built-in peer_send / peer_ack tools: only with NATS, under the gate, against a real server."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path

from mnemara.core.live_config import LiveConfig
from mnemara.core.config import Config, ToolPolicy
from mnemara.store.instance import Instance
from mnemara.guard.gate import PermissionGate
from mnemara.peer.inbox import PeerInbox
from mnemara.store.turns import TurnStore
from mnemara.tools import ToolContext, ToolSpec, enabled_specs
from tests.peer.nats_support import nats_config, nats_server, stream_name  # noqa: F401


def _specs(config: Config) -> dict[str, ToolSpec]:
    return {s.name: s for s in enabled_specs(config) if s.name.startswith("peer_")}


def _ctx(inst: Instance, config: Config) -> ToolContext:
    return ToolContext(instance=inst, live=LiveConfig(inst.config_path, current=config), store=TurnStore(inst.turns_path))


def test_the_peer_tools_exist_only_with_nats_and_the_gate_governs_them(mnemara_home: Path) -> None:
    assert _specs(Config.from_dict({"peer_poll_enabled": True, "peer_db_path": "x.db"})) == {}
    assert _specs(Config.from_dict({"peer_transport": "nats"})) == {}  # the inbox is off
    nats = Config.from_dict({"peer_poll_enabled": True, "peer_transport": "nats"})
    assert set(_specs(nats)) == {"peer_send", "peer_ack"}
    inst = Instance.create("gate")
    gate = PermissionGate(Config(allowed_tools=[ToolPolicy(tool="PeerSend", mode="deny")]), inst)
    assert gate.decide("mcp__mnemara__peer_send", {"payload_json": "{}"}).verdict == "deny"
    assert gate.decide("mcp__mnemara__peer_ack", {"ids": [1]}).verdict == "allow"


async def test_peer_send_publishes_as_this_role_and_peer_ack_acks_the_current_batch(
        mnemara_home: Path, nats_server, stream_name, tmp_path: Path) -> None:
    inst = Instance.create("lead")
    lead = nats_config(nats_server, stream_name, peer_role="lead")
    send = _specs(lead)["peer_send"]
    ctx = _ctx(inst, lead)
    answer = await asyncio.to_thread(send.handler, ctx, {"to": "eng", "payload_json": '{"q": 1}', "task": "T-2"})
    assert answer["ok"] is True and answer["sent"].startswith("sent to eng: message 1"), answer
    for bad, why in [({"to": "eng", "payload_json": "{nope"}, "not valid JSON"),
                     ({"to": "a.b", "payload_json": "{}"}, "cannot be used with NATS"),
                     ({"to": "eng"}, "missing argument 'payload_json'")]:
        refused = await asyncio.to_thread(send.handler, ctx, bad)
        assert refused["ok"] is False and why in refused["error"], refused
    await asyncio.to_thread(send.handler, ctx, {"to": "eng", "payload_json": '{"q": 2}'})
    eng_cfg = nats_config(nats_server, stream_name, peer_role="eng")
    held: list[str] = []
    eng_inst = Instance.create("eng")
    eng_ctx = _ctx(eng_inst, eng_cfg)
    ack = _specs(eng_cfg)["peer_ack"]
    assert (await asyncio.to_thread(ack.handler, eng_ctx, {"ids": [1]}))["ok"] is False  # no inbox yet

    async def deliver(text: str) -> None:  # the model calls peer_ack mid-turn
        held.append(text)
        result = await asyncio.to_thread(ack.handler, eng_ctx, {"ids": [1, 99]})
        held.append(json.dumps(result))

    inbox = PeerInbox.from_config(eng_cfg, "eng", deliver=deliver, instance_root=tmp_path, enabled=False)
    eng_ctx.state.peer_inbox = inbox
    inbox.start()
    try:
        await asyncio.wait_for(_until(lambda: len(inbox.waiting) == 2), 10)
        inbox.set_enabled(True)
        await asyncio.wait_for(_until(lambda: len(held) == 2), 10)
        assert '"from lead' not in held[0] and "from lead" in held[0] and "task T-2" in held[0]
        assert json.loads(held[1]) == {"ok": True, "acked": [1], "not_in_this_batch": [99]}
        await asyncio.wait_for(_until(lambda: not inbox.feed.rows()), 10)  # type: ignore[union-attr]  # row 2: acked after the turn
    finally:
        await inbox.aclose()
        ctx.store.close()
        eng_ctx.store.close()


async def _until(check) -> None:
    while not check():
        await asyncio.sleep(0.02)
