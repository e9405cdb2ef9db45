"""Peers have identities: the sender a panel shows is what the server authenticated, never a header.

The sender is the last token of the subject (``<prefix>.to.<role>.<sender>``); a server that gives each
panel a user with :meth:`NatsSettings.permissions` lets it publish only as itself, read only its own
consumer and replies. A header ``Mnemara-From: lead`` is ignored. A server that takes connections
without credentials is said once: a notice of the inbox (status line, debug.log) and peer status.
"""
from __future__ import annotations

import asyncio
import json
from pathlib import Path

import nats
import pytest

from mnemara.core.config import update_config
from mnemara.peer import outbox
from mnemara.peer.nats_settings import NatsSettings, inbox_prefix
from mnemara.peer.nats_transport import PeerTransportError, accepts_anonymous
from mnemara.store.instance import Instance
from mnemara.testing.nats_server import NatsServer
from mnemara.testing.peer_panel import StorePanel
from tests.peer.nats_support import nats_config, nats_server, stream_name  # noqa: F401
from tests.peer_support import until

STREAM = "IDS"
PASSWORDS = {"lead": "lead-pw", "eng": "eng-pw", "mallory": "mallory-pw"}


def _config(server: NatsServer, role: str):
    port = server.url.rsplit(":", 1)[1]
    return nats_config(server, STREAM, peer_role=role, peer_poll_roles=["lead"],
                       peer_nats_url=f"nats://{role}:{PASSWORDS[role]}@127.0.0.1:{port}")


@pytest.fixture
def locked_server(tmp_path: Path):
    base = NatsSettings(url="nats://127.0.0.1:4222", stream=STREAM, prefix=f"t.{STREAM}")
    users = [{"user": role, "password": pw, "permissions": base.permissions(role, create_stream=role == "lead")}
             for role, pw in PASSWORDS.items()]
    server = NatsServer(tmp_path / "nats", users=users).start()
    try:
        yield server
    finally:
        server.stop()


async def test_a_sender_is_who_the_server_authenticated_and_a_forged_header_or_subject_is_refused(
        locked_server: NatsServer, tmp_path: Path) -> None:
    lead, eng = _config(locked_server, "lead"), _config(locked_server, "eng")
    await outbox.send_async(lead, "lead", tmp_path, "eng", json.dumps({"q": "real task"}))
    settings = NatsSettings.from_config(_config(locked_server, "mallory"))
    async def quiet(exc: Exception) -> None:  # the server's permission errors, expected here
        return None

    nc = await nats.connect(settings.server_url, user="mallory", password=PASSWORDS["mallory"],
                            inbox_prefix=inbox_prefix("mallory"), allow_reconnect=False, error_cb=quiet)
    try:
        js = nc.jetstream()
        with pytest.raises(Exception):  # publishing as lead: the server refuses the subject
            await js.publish(f"t.{STREAM}.to.eng.lead", b'{"q": "forged"}', stream=STREAM,
                             headers={"Mnemara-From": "lead"}, timeout=2)
        with pytest.raises(Exception):  # reading eng's task by sequence: refused too
            await js.get_msg(STREAM, 1)
        # as itself, with a header claiming to be lead: stored, and shown as from mallory
        await js.publish(f"t.{STREAM}.to.eng.mallory", b'{"q": "from me"}', stream=STREAM,
                         headers={"Mnemara-From": "lead"}, timeout=5)
    finally:
        await nc.close()
    with pytest.raises(outbox.PeerSendError):  # the CLI as mallory cannot send as lead either
        await outbox.send_async(_config(locked_server, "mallory").model_copy(update={"peer_role": "lead"}), "lead",
                                tmp_path, "eng", "{}")
    panel = StorePanel(tmp_path / "eng", eng, "eng")  # the panel works with exactly its own permissions
    panel.inbox.start()
    try:
        await until(lambda: len(panel.store.history()) >= 2 or len(panel.answers()) >= 1)
        await until(lambda: not panel.inbox.waiting and not panel.inbox.feed.rows())  # type: ignore[union-attr]
        texts = "\n".join(t.text for t in panel.store.history() if t.role == "user")
        assert panel.inbox.feed.open_server is False  # type: ignore[union-attr]
        assert not panel.inbox.notices and "NATS: no credentials" not in panel.inbox.state_text
    finally:
        await panel.aclose()
    assert "real task" in texts and "from me" in texts and "forged" not in texts
    lines = [line for line in texts.splitlines() if line.startswith("--- message")]
    assert len(lines) == 2 and "from lead" in lines[0] and "from mallory" in lines[1], lines


async def test_an_open_server_is_said_once_by_the_inbox_and_by_peer_status(nats_server, stream_name, tmp_path: Path,
                                                                          cli, mnemara_home) -> None:
    config = nats_config(nats_server, stream_name, peer_role="eng")
    assert await accepts_anonymous(NatsSettings.from_config(config))
    panel = StorePanel(tmp_path / "eng", config, "eng")
    panel.inbox.start()
    try:
        await until(lambda: panel.inbox.feed is not None and panel.inbox.feed.open_server is not None)
        for _ in range(3):
            await panel.inbox.step()
        assert len(panel.inbox.notices) == 1 and "accepts connections without credentials" in panel.inbox.notices[0]
        assert panel.inbox.state_text == "⚡ Inbox: ON · ⚠ NATS: no credentials"
    finally:
        await panel.aclose()
    log = (tmp_path / "eng" / "debug.log").read_text(encoding="utf-8")
    assert log.count("peer_nats_no_credentials") == 1
    inst = Instance.create("eng")
    fields = config.model_dump(mode="json")
    update_config(inst.config_path, **{k: v for k, v in fields.items() if k.startswith("peer_")})
    out = await asyncio.to_thread(cli, "peer", "status", "--instance", "eng")
    warnings = [line for line in out.stdout.splitlines() if line.startswith("warning: ")]
    assert out.returncode == 0 and len(warnings) == 1 and "without credentials" in warnings[0]


async def test_a_server_that_needs_a_password_is_not_said_open(tmp_path: Path) -> None:
    server = NatsServer(tmp_path / "nats", user="panels", password="pw").start()
    try:
        port = server.url.rsplit(":", 1)[1]
        settings = NatsSettings(url=f"nats://panels:pw@127.0.0.1:{port}")
        assert settings.anonymous().url == f"nats://127.0.0.1:{port}"  # nothing of the credential is left
        assert not await accepts_anonymous(settings)
    finally:
        server.stop()
    with pytest.raises(PeerTransportError):
        from mnemara.peer.nats_transport import connect

        await connect(settings)  # the server is gone: one line, as before


def test_peer_permissions_prints_the_user_entry_and_refuses_what_cannot_have_one(cli, mnemara_home) -> None:
    inst = Instance.create("eng")
    out = cli("peer", "permissions", "--instance", "eng")
    assert out.returncode == 2 and "NATS permissions are for" in out.stderr and len(out.stderr.splitlines()) == 1
    update_config(inst.config_path, peer_transport="nats", peer_nats_stream=STREAM, peer_nats_subject_prefix="p.q")
    out = cli("peer", "permissions", "--instance", "eng")
    entry = json.loads(out.stdout)
    settings = NatsSettings(url="nats://127.0.0.1:4222", stream=STREAM, prefix="p.q")
    assert out.returncode == 0 and entry["user"] == "eng" and entry["permissions"] == settings.permissions("eng")
    assert "p.q.to.*.eng" in entry["permissions"]["publish"]["allow"]
    assert f"$JS.API.STREAM.CREATE.{STREAM}" not in entry["permissions"]["publish"]["allow"]
    with_create = json.loads(cli("peer", "permissions", "--instance", "eng", "--create-stream").stdout)
    assert f"$JS.API.STREAM.CREATE.{STREAM}" in with_create["permissions"]["publish"]["allow"]
    update_config(inst.config_path, peer_role="a.b")
    out = cli("peer", "permissions", "--instance", "eng")
    assert out.returncode == 2 and "'a.b' cannot be used with NATS" in out.stderr


@pytest.mark.parametrize("allow, says", [
    (None, True), ([">"], True), (["t.>"], True), (["t.IDS.>"], True), (["t.IDS.to.*.*"], True),
    (["t.IDS.to.*.lead"], True), (["t.*.to.*.eng"], False), (["t.IDS.to.*.eng", "t.IDS.broadcast.eng", "$JS.API.>"], False),
    (["other.>", "$JS.ACK.IDS.mnemara_eng.>"], False),
])
def test_which_publish_permissions_let_a_user_send_as_another_role(allow, says) -> None:
    settings = NatsSettings(url="nats://127.0.0.1:4222", stream=STREAM, prefix=f"t.{STREAM}")
    assert settings.sends_as_others(allow, "eng") is says
    assert settings.sends_as_others(settings.permissions("eng")["publish"]["allow"], "eng") is False


async def test_one_shared_user_is_said_not_to_prove_the_sender(tmp_path: Path, cli, mnemara_home) -> None:
    server = NatsServer(tmp_path / "nats", user="panels", password="pw").start()
    try:
        port = server.url.rsplit(":", 1)[1]
        config = nats_config(server, STREAM, peer_role="eng", peer_nats_url=f"nats://panels:pw@127.0.0.1:{port}")
        panel = StorePanel(tmp_path / "eng", config, "eng")
        panel.inbox.start()
        try:
            await until(lambda: bool(panel.inbox.notices))
            await panel.inbox.step()
            assert len(panel.inbox.notices) == 1 and "NATS user 'panels'" in panel.inbox.notices[0]
            assert "may publish as any role" in panel.inbox.notices[0] and "pw" not in panel.inbox.notices[0]
        finally:
            await panel.aclose()
        inst = Instance.create("eng")
        fields = config.model_dump(mode="json")
        update_config(inst.config_path, **{k: v for k, v in fields.items() if k.startswith("peer_")})
        out = await asyncio.to_thread(cli, "peer", "status", "--instance", "eng")
        warnings = [line for line in out.stdout.splitlines() if line.startswith("warning: ")]
        assert len(warnings) == 1 and "may publish as any role" in warnings[0]
    finally:
        server.stop()
