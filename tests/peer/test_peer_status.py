"""``mnemara peer status`` says what the settings are, for every combination of them.

The inbox line follows ``peer_poll_enabled`` and ``peer_inbox_on``; the connection line follows the
transport and whether it is set and answers; the exit code is 1 only when a set transport does not
answer, or the inbox is on with no transport set (2 for a NATS setting that cannot be used).
"""
from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from mnemara.core.config import update_config
from mnemara.peer.db import create_table
from mnemara.store.instance import Instance
from tests.peer.nats_support import nats_server, stream_name  # noqa: F401

SOURCES = ["sqlite-empty", "sqlite-missing", "sqlite-ok", "nats-empty", "nats-down", "nats-ok"]
INBOX = {
    (False, True): "inbox: off (peer_poll_enabled is false): no panel of this instance reads peer messages",
    (False, False): "inbox: off (peer_poll_enabled is false): no panel of this instance reads peer messages",
    (True, True): "inbox: on (peer_poll_enabled), delivery ON",
    (True, False): "inbox: on (peer_poll_enabled), delivery OFF (peer_inbox_on is false",
}


def _source_fields(source: str, tmp_path: Path, request: pytest.FixtureRequest) -> dict[str, object]:
    if source == "sqlite-empty":
        return {"peer_db_path": ""}
    if source == "sqlite-missing":
        return {"peer_db_path": str(tmp_path / "absent.db")}
    if source == "sqlite-ok":
        path = tmp_path / "peer.db"
        conn = sqlite3.connect(path, isolation_level=None)
        create_table(conn)
        conn.close()
        return {"peer_db_path": str(path)}
    if source == "nats-empty":
        return {"peer_transport": "nats", "peer_nats_url": ""}
    if source == "nats-down":
        return {"peer_transport": "nats", "peer_nats_url": "nats://127.0.0.1:1"}
    server = request.getfixturevalue("nats_server")
    stream = request.getfixturevalue("stream_name")
    return {"peer_transport": "nats", "peer_nats_url": server.url, "peer_nats_stream": stream,
            "peer_nats_subject_prefix": f"t.{stream}"}


def _expected(source: str, enabled: bool) -> tuple[int, str]:
    return {
        "sqlite-empty": (1, "connection: peer_poll_enabled is true but peer_db_path is empty") if enabled
        else (0, "connection: not set (peer_db_path is empty)"),
        "sqlite-missing": (1, "does not exist"),
        "sqlite-ok": (0, "connection: peer db "),
        "nats-empty": (2, "peer_nats_url is empty") if enabled else (0, "connection: not set (peer_nats_url is empty)"),
        "nats-down": (1, "connection: NATS server nats://127.0.0.1:1 unreachable"),
        "nats-ok": (0, "connection: connected to nats://127.0.0.1:"),
    }[source]


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("inbox_on", [True, False])
@pytest.mark.parametrize("enabled", [False, True])
def test_status_tells_the_truth_for_each_combination(cli, mnemara_home, tmp_path: Path, request, source: str,
                                                     enabled: bool, inbox_on: bool) -> None:
    inst = Instance.create("eng")
    update_config(inst.config_path, peer_poll_enabled=enabled, peer_inbox_on=inbox_on,
                  **_source_fields(source, tmp_path, request))
    out = cli("peer", "status", "--instance", "eng")
    code, says = _expected(source, enabled)
    assert out.returncode == code, (out.stdout, out.stderr)
    if code == 2:
        assert out.stderr.startswith("error: ") and says in out.stderr and len(out.stderr.splitlines()) == 1
        return
    lines = out.stdout.splitlines()
    assert lines[0] == f"transport: {source.split('-')[0]}" and lines[1] == "role: eng"
    assert lines[2].startswith(INBOX[(enabled, inbox_on)]), lines[2]
    assert any(says in line for line in lines[3:]), lines
    if not enabled:  # the two lies of the report: a disabled inbox is never "delivery ON", nor "enabled is true"
        assert "delivery ON" not in out.stdout and "peer_poll_enabled is true" not in out.stdout
