"""``mnemara peer send`` / ``mnemara peer status`` over SQLite and NATS, and their refusals."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from mnemara.core.config import update_config
from mnemara.store.instance import Instance
from mnemara.peer.db import create_table


def _sqlite_instance(tmp_path: Path, name: str = "lead") -> tuple[Instance, Path]:
    inst = Instance.create(name)
    path = tmp_path / "peer.db"
    conn = sqlite3.connect(path, isolation_level=None)
    create_table(conn)
    conn.close()
    update_config(inst.config_path, peer_db_path=str(path), peer_poll_roles=["lead"])
    return inst, path


def _rows(path: Path) -> list[tuple]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT agent_role, recipient_role, task_id, payload_json, status FROM returns").fetchall()
    finally:
        conn.close()


def test_sqlite_send_inserts_a_pending_row_and_status_counts_it(cli, mnemara_home, tmp_path: Path) -> None:
    inst, path = _sqlite_instance(tmp_path)
    out = cli("peer", "send", "--instance", "lead", "--to", "lead", "--task", "T-7", '{"q": 1}')
    assert out.returncode == 0 and out.stdout.startswith("sent to lead: row 1 of ")
    out = cli("peer", "send", "--instance", "lead", '{"all": true}')
    assert out.returncode == 0 and "sent as a broadcast: row 2" in out.stdout
    assert _rows(path) == [("lead", "lead", "T-7", '{"q": 1}', "pending"), ("lead", None, None, '{"all": true}', "pending")]
    status = cli("peer", "status", "--instance", "lead")
    assert status.returncode == 0
    lines = status.stdout.splitlines()
    assert "transport: sqlite" in lines and "pending: 1" in lines  # our own broadcast is not for us
    assert "last delivered id: (none yet: the inbox has not run)" in lines


@pytest.mark.parametrize("args, message", [
    (["--to", "eng", "{not json"], "PAYLOAD_JSON is not valid JSON"),
    (["--to", "", "{}"], "--to is empty"),
    (["--to", "eng", ""], "PAYLOAD_JSON is not valid JSON"),
])
def test_sqlite_send_refuses_bad_input_and_writes_nothing(cli, mnemara_home, tmp_path: Path, args, message) -> None:
    _inst, path = _sqlite_instance(tmp_path)
    out = cli("peer", "send", "--instance", "lead", *args)
    assert out.returncode == 2 and out.stderr.startswith(f"error: {message}") and len(out.stderr.splitlines()) == 1
    assert _rows(path) == []


def test_refusals_for_an_unknown_instance_a_missing_db_and_a_bad_nats_url(cli, mnemara_home, tmp_path: Path) -> None:
    out = cli("peer", "send", "--instance", "ghost", "--to", "eng", "{}")
    assert out.returncode != 0 and "ghost" in out.stderr and len(out.stderr.splitlines()) == 1
    inst = Instance.create("eng")
    out = cli("peer", "send", "--instance", "eng", "--to", "lead", "{}")
    assert out.returncode == 2 and out.stderr.startswith("error: peer_db_path is empty in config.json")
    update_config(inst.config_path, peer_db_path=str(tmp_path / "absent.db"))
    out = cli("peer", "send", "--instance", "eng", "--to", "lead", "{}")
    assert out.returncode == 1 and "does not exist" in out.stderr and "nothing was sent" in out.stderr
    assert not (tmp_path / "absent.db").exists()  # never created by a send
    status = cli("peer", "status", "--instance", "eng")
    assert status.returncode == 1 and "does not exist" in status.stdout
    for url, why in [("http://127.0.0.1:4222", "scheme must be one of"), ("nats://", "names no host"),
                     ("nats://h:4222/path", "no path"), ("nats://a:1 nats://b:2", "not one URL")]:
        update_config(inst.config_path, peer_transport="nats", peer_nats_url=url)
        for args in (["send", "--instance", "eng", "{}"], ["status", "--instance", "eng"]):
            out = cli("peer", *args)
            assert out.returncode == 2 and why in out.stderr and "peer_nats_url" in out.stderr, (url, out.stderr)


def test_nats_send_refuses_a_role_that_is_not_a_subject_token(cli, mnemara_home, nats_server, stream_name) -> None:
    inst = Instance.create("eng")
    update_config(inst.config_path, peer_transport="nats", peer_nats_url=nats_server.url, peer_nats_stream=stream_name,
                  peer_nats_subject_prefix=f"t.{stream_name}")
    out = cli("peer", "send", "--instance", "eng", "--to", "a.b", "{}")
    assert out.returncode == 2 and "--to 'a.b' cannot be used with NATS" in out.stderr


def test_nats_send_and_status_through_a_real_server(cli, mnemara_home, nats_server, stream_name) -> None:
    for name in ("lead", "eng"):
        inst = Instance.create(name)
        update_config(inst.config_path, peer_transport="nats", peer_nats_url=nats_server.url,
                      peer_nats_stream=stream_name, peer_nats_subject_prefix=f"t.{stream_name}",
                      peer_poll_roles=["lead"])
    status = cli("peer", "status", "--instance", "eng")
    assert status.returncode == 0 and "pending: unknown (no consumer yet" in status.stdout
    out = cli("peer", "send", "--instance", "lead", "--to", "eng", "--task", "T-1", json.dumps({"q": "lease?"}))
    assert out.returncode == 0 and out.stdout.startswith(f"sent to eng: message 1 on NATS stream {stream_name}")
    assert cli("peer", "send", "--instance", "lead", "{}").stdout.startswith("sent as a broadcast: message 2")


def test_nats_status_and_send_say_in_one_line_when_the_server_is_down(cli, mnemara_home) -> None:
    inst = Instance.create("eng")
    update_config(inst.config_path, peer_transport="nats", peer_nats_url="nats://eng:s3cret@127.0.0.1:1")
    status = cli("peer", "status", "--instance", "eng")
    assert status.returncode == 1 and "connection: NATS server nats://eng:***@127.0.0.1:1 unreachable" in status.stdout
    out = cli("peer", "send", "--instance", "eng", "--to", "lead", "{}")
    assert out.returncode == 1 and len(out.stderr.splitlines()) == 1 and "nothing was sent" in out.stderr
    assert "s3cret" not in status.stdout + out.stderr
