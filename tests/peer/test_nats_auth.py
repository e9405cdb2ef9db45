"""peer_nats_url with user:pass@, and TLS with peer_nats_tls_ca, against real servers that require them."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path

import trustme

from mnemara.peer import outbox
from mnemara.peer.nats_settings import NatsSettings, PeerSettingsError, redact
from mnemara.testing.nats_server import NatsServer
from mnemara.testing.peer_panel import StorePanel
from tests.peer.nats_support import nats_config


async def _until(check, timeout: float = 10.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not check():
        assert loop.time() < deadline, "condition not met in time"
        await asyncio.sleep(0.02)


async def _round_trip(config, root: Path) -> list[list[str]]:
    lead = config.model_copy(update={"peer_role": "lead"})
    await outbox.send_async(lead, "lead", root, "eng", json.dumps({"q": 1}))
    panel = StorePanel(root / "eng", config, "eng")
    panel.inbox.start()
    try:
        await _until(lambda: len(panel.answers()) == 1)
        return panel.answers()
    finally:
        await panel.aclose()


async def test_user_and_password_in_the_url_log_in_and_a_wrong_one_is_one_redacted_line(tmp_path: Path) -> None:
    server = NatsServer(tmp_path / "nats", user="panels", password="s3cret pass").start()
    try:
        port = server.url.rsplit(":", 1)[1]
        good = nats_config(server, "AUTH", peer_nats_url=f"nats://panels:s3cret%20pass@127.0.0.1:{port}")
        assert await _round_trip(good, tmp_path) == [["nats:AUTH:1"]]
        bad = nats_config(server, "AUTH", peer_nats_url=f"nats://panels:wrong@127.0.0.1:{port}")
        panel = StorePanel(tmp_path / "bad", bad, "eng")
        panel.inbox.start()
        try:
            await _until(lambda: "nats_down" in panel.inbox.problems)
            problem = panel.inbox.problems["nats_down"]
        finally:
            await panel.aclose()
        assert "authorization" in problem.lower() and "panels:***@" in problem and "wrong" not in problem
        assert "\n" not in problem
    finally:
        server.stop()


async def test_tls_with_the_servers_ca_connects_and_without_it_is_refused_in_one_line(tmp_path: Path) -> None:
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1")
    ca_file, cert_file, key_file = tmp_path / "ca.pem", tmp_path / "cert.pem", tmp_path / "key.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    cert.cert_chain_pems[0].write_to_path(str(cert_file))
    cert.private_key_pem.write_to_path(str(key_file))
    server = NatsServer(tmp_path / "nats", tls_cert=cert_file, tls_key=key_file).start()
    try:
        url = "tls://127.0.0.1:" + server.url.rsplit(":", 1)[1]
        good = nats_config(server, "TLS", peer_nats_url=url, peer_nats_tls_ca=str(ca_file))
        assert await _round_trip(good, tmp_path) == [["nats:TLS:1"]]
        untrusted = nats_config(server, "TLS", peer_nats_url=url)
        status, ok = await asyncio.to_thread(outbox.status, untrusted, "eng", tmp_path)
        assert not ok and any(line.startswith("connection: NATS server tls://127.0.0.1") and "unreachable" in line
                              for line in status), status
    finally:
        server.stop()


def test_settings_refuse_what_cannot_work_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "cert.pem").write_text("x")
    cases = [
        ({"peer_nats_url": "nats://h:4222", "peer_nats_stream": "a.b"}, "peer_nats_stream 'a.b' cannot be used"),
        ({"peer_nats_url": "nats://h:4222", "peer_nats_subject_prefix": "a..b"}, "peer_nats_subject_prefix"),
        ({"peer_nats_url": "nats://h:4222", "peer_nats_creds": "missing.creds"}, "peer_nats_creds"),
        ({"peer_nats_url": "nats://h:4222", "peer_nats_tls_cert": "cert.pem"}, "go together"),
        ({"peer_nats_url": "nats://h:0"}, "port 0"),
        ({"peer_nats_url": ""}, "peer_nats_url is empty"),
    ]
    from mnemara.core.config import Config

    for fields, why in cases:
        config = Config.from_dict({"peer_transport": "nats", **fields})
        try:
            NatsSettings.from_config(config, tmp_path)
        except PeerSettingsError as exc:
            assert why in str(exc) and "\n" not in str(exc), (fields, exc)
        else:
            raise AssertionError(f"{fields} was accepted")
    assert redact("nats://u:p@h:1") == "nats://u:***@h:1" and redact("nats://tok@h:1") == "nats://***@h:1"
    from mnemara.core.errors import ConfigError

    try:
        Config.from_dict({"peer_transport": "kafka"})
    except ConfigError as exc:
        assert "peer_transport" in exc.message and "'sqlite' or 'nats'" in exc.message
    else:
        raise AssertionError("peer_transport kafka was accepted")
