"""`mnemara serve`: a headless panel as a real process (its real CLI, the scripted API, SQLite or NATS).

It delivers inbox turns as they arrive, one JSON line per event; refuses a tool on ask with a log
line; exits 0 on SIGTERM after the running turn (acknowledged), and leaves a turn stopped by a second
signal unacknowledged; --once delivers what waits and exits; it refuses an instance another panel
holds; `peer status` shows its health.
"""
from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from mnemara.core.config import update_config
from mnemara.peer.db import statuses
from mnemara.peer.nats_settings import NatsSettings
from mnemara.peer.nats_transport import connect
from mnemara.peer.outbox import send
from mnemara.store.instance import Instance
from mnemara.store.turns import TurnStore
from mnemara.testing.fleet import ServedPanel
from mnemara.testing.scripted_api import RecordedRequest, Reply, reply, tool_use
from tests.conftest import cli_env
from tests.peer.nats_support import nats_config, nats_server, stream_name  # noqa: F401
from tests.peer_support import add, new_db

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]


def Served(name: str, *args: str) -> ServedPanel:
    return ServedPanel(name, *args, env=cli_env(), cwd=ROOT)


def status(name: str) -> str:
    return subprocess.run([sys.executable, "-m", "mnemara", "peer", "status", "--instance", name],
                          capture_output=True, text=True, env=cli_env(), timeout=60, cwd=str(ROOT)).stdout


def sqlite_instance(tmp_path: Path, name: str = "eng") -> tuple[Instance, Path]:
    path = new_db(tmp_path / "peer.db")
    inst = Instance.create(name)
    update_config(inst.config_path, peer_poll_enabled=True, peer_db_path=str(path), peer_role="eng",
                  peer_poll_interval_seconds=0.2)
    return inst, path


def test_serve_delivers_as_rows_arrive_refuses_ask_and_stops_cleanly_on_sigterm(scripted_api, mnemara_home,
                                                                               tmp_path: Path) -> None:
    inst, path = sqlite_instance(tmp_path)
    marker = tmp_path / "ran.txt"
    scripted_api.push(reply(tool_use("Bash", {"command": f"touch {marker}"})), reply("ANSWER-ONE"),
                      reply("ANSWER-TWO"))
    first = add(path, "lead", "eng", {"task": "one"})
    served = Served("eng")
    try:
        started = served.wait_for("serving")[0]
        assert started["source"].startswith("peer db: ") and started["connected"] is True
        ended = served.wait_for("turn_ended")[0]
        assert ended["ok"] is True and ended["messages"] == [first] and "usage" in ended
        refused = served.named("permission_refused")
        assert len(refused) == 1 and refused[0]["tool"] == "Bash" and str(marker) in refused[0]["target"]
        assert not marker.exists()
        assert "serve: running (pid " in status("eng") and "running turn: none" in status("eng")
        second = add(path, "lead", "eng", {"task": "two"})  # arrives while it serves: delivered, no input needed
        assert served.wait_for("turn_ended", 2)[1]["messages"] == [second]
        assert served.named("turn_started")[1]["messages"] == [second]
        shown = status("eng")
        assert "last delivery: " in shown and "(1 message(s)" in shown and "serve turns: 2 delivered" in shown
        served.proc.send_signal(signal.SIGTERM)
        assert served.finish() == 0
    finally:
        served.kill()
    assert served.named("stopping")[0]["signal"] == "SIGTERM"
    assert served.named("stopped")[0]["delivered_turns"] == 2
    assert "stopped cleanly" in status("eng")
    with TurnStore(inst.turns_path) as store:
        answers = [t.text for t in store.history() if t.role == "assistant"]
    assert answers == ["ANSWER-ONE", "ANSWER-TWO"]
    assert statuses(path)[first][0] == "pending"  # SQLite: the agent acknowledges through its own tool


def test_serve_refuses_a_held_instance_a_disabled_inbox_and_a_bad_log_format(cli, scripted_api, mnemara_home,
                                                                          tmp_path: Path) -> None:
    Instance.create("idle")
    out = cli("serve", "--instance", "idle")
    assert out.returncode == 2 and "set \"peer_poll_enabled\": true" in out.stderr
    assert len(out.stderr.splitlines()) == 1
    out = cli("serve", "--instance", "ghost")
    assert out.returncode != 0 and "ghost" in out.stderr
    sqlite_instance(tmp_path)
    out = cli("serve", "--instance", "eng", "--log-format", "xml")
    assert out.returncode == 2 and "'xml' is not one of 'json', 'text'" in out.stderr
    served = Served("eng")
    try:
        served.wait_for("serving")
        second = subprocess.run([sys.executable, "-m", "mnemara", "serve", "--instance", "eng"], capture_output=True,
                                text=True, env=cli_env(), timeout=60, cwd=str(ROOT))
        assert second.returncode != 0 and f"(pid {served.proc.pid})" in second.stderr
        assert "already open in another `mnemara run` or `mnemara serve`" in second.stderr
        served.proc.send_signal(signal.SIGINT)
        assert served.finish() == 0
    finally:
        served.kill()


def test_serve_once_delivers_what_waits_then_exits_and_text_log_is_for_people(scripted_api, mnemara_home,
                                                                           tmp_path: Path) -> None:
    _inst, path = sqlite_instance(tmp_path)
    scripted_api.push(reply("ONCE-ANSWER"))
    rows = [add(path, "lead", "eng", {"task": n}) for n in ("a", "b")]
    done = subprocess.run([sys.executable, "-m", "mnemara", "serve", "--instance", "eng", "--once", "--log-format",
                           "text"], capture_output=True, text=True, env=cli_env(), timeout=120, cwd=str(ROOT))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line.split(" ")[1] for line in lines] == ["serving", "turn_started", "turn_ended", "stopped"], lines
    assert f"messages=[{rows[0]}, {rows[1]}]" in lines[1] and "ok=true" in lines[2]
    again = subprocess.run([sys.executable, "-m", "mnemara", "serve", "--instance", "eng", "--once"],
                           capture_output=True, text=True, env=cli_env(), timeout=120, cwd=str(ROOT))
    assert again.returncode == 0
    assert [json.loads(x)["event"] for x in again.stdout.splitlines()] == ["serving", "stopped"]
    assert len(scripted_api.message_requests()) == 1  # nothing was delivered twice


def _slow(req: RecordedRequest) -> Reply:
    return reply("SLOW-ANSWER", delay=0.4)  # about ten chunks: a turn that lasts a few seconds


def test_sigterm_mid_turn_finishes_and_acks_it_a_second_signal_leaves_it_unacknowledged(
        scripted_api, mnemara_home, nats_server, stream_name) -> None:
    scripted_api.responder = _slow
    inst = Instance.create("eng")
    fields = nats_config(nats_server, stream_name, peer_role="eng", peer_poll_roles=["lead"]).model_dump(mode="json")
    update_config(inst.config_path, **{k: v for k, v in fields.items() if k.startswith("peer_")})
    lead = nats_config(nats_server, stream_name, peer_role="lead")
    settings = NatsSettings.from_config(lead)

    async def unacked() -> tuple[int, int]:
        nc = await connect(settings)
        try:
            info = await nc.jetstream().consumer_info(stream_name, settings.durable("eng"))
            return int(info.num_pending or 0), int(info.num_ack_pending or 0)
        finally:
            await nc.close()

    import asyncio

    send(lead, "lead", None, "eng", json.dumps({"task": "finish me"}))
    served = Served("eng")
    try:
        served.wait_for("turn_started")
        served.proc.send_signal(signal.SIGTERM)  # mid-turn: it finishes, is acknowledged, then the panel exits
        assert served.finish() == 0
    finally:
        served.kill()
    assert served.named("turn_ended")[0]["ok"] is True
    assert served.named("stopping")[0]["running_turn"] is True
    assert "unacknowledged" not in served.named("stopped")[0], served.events  # every ack confirmed
    assert asyncio.run(unacked()) == (0, 0)
    send(lead, "lead", None, "eng", json.dumps({"task": "stop me"}))
    served = Served("eng")
    try:
        served.wait_for("turn_started")
        served.proc.send_signal(signal.SIGTERM)
        served.wait_for("stopping")
        served.proc.send_signal(signal.SIGTERM)  # the second: the turn is stopped, its message not acknowledged
        assert served.finish() == 0
    finally:
        served.kill()
    ended = served.named("turn_ended")
    assert ended and ended[0]["ok"] is False
    assert sum(asyncio.run(unacked())) == 1  # it will come again
    with TurnStore(inst.turns_path) as store:
        assert [t.text for t in store.history() if t.role == "assistant"][:1] == ["SLOW-ANSWER"]


def test_a_spend_cap_applies_to_a_served_turn_and_its_halt_is_a_log_line(scripted_api, mnemara_home,
                                                                        tmp_path: Path) -> None:
    from tests.e2e.test_spend_e2e import BIG

    inst, path = sqlite_instance(tmp_path)
    update_config(inst.config_path, allowed_tools=[{"tool": "Bash", "mode": "allow"}], budget_usd_per_turn=0.7)
    scripted_api.push(*[reply(tool_use("Bash", {"command": f"echo {i}"}), usage=BIG) for i in range(6)])
    row = add(path, "lead", "eng", {"task": "loop"})
    done = subprocess.run([sys.executable, "-m", "mnemara", "serve", "--instance", "eng", "--once"],
                          capture_output=True, text=True, env=cli_env(), timeout=180, cwd=str(ROOT))
    events = [json.loads(line) for line in done.stdout.splitlines()]
    halts = [e for e in events if e["event"] == "halt"]
    assert len(halts) == 1 and halts[0]["source"] == "budget", events
    assert "spent this turn reached budget_usd_per_turn $0.7000" in halts[0]["reason"]
    ended = [e for e in events if e["event"] == "turn_ended"]
    assert ended[0]["messages"] == [row] and ended[0]["cost_usd"] == pytest.approx(0.90045)
    assert len(scripted_api.message_requests()) == 3  # the cap held at the recorder: the 4th call never left
    assert done.returncode == 0  # a halted turn is delivered (its messages are not sent again)
