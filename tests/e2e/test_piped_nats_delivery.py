"""A piped `mnemara run --no-tui` never skips a NATS message: the first delivery point waits for the
connection, a message that arrives while the REPL waits for a line is delivered then, and one waiting at
end of input goes out before the run exits. Real processes: `mnemara run`, its CLI, nats-server; the
early CLI start is on (MNEMARA_WARM_SPARE=1), as for a user."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from mnemara.core.config import update_config
from mnemara.peer.outbox import send
from mnemara.store.instance import Instance
from mnemara.store.turns import TurnStore
from mnemara.testing.scripted_api import RecordedRequest, Reply, reply
from tests.conftest import cli_env
from tests.peer.nats_support import nats_config, nats_server, stream_name  # noqa: F401

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]


def last_text(req: RecordedRequest) -> str:
    texts = [b.get("text", "") for b in req.blocks("user") if b.get("type") == "text"]
    return texts[-1] if texts else ""


def answer(req: RecordedRequest) -> Reply:
    """The inbox turn and the user's line get different answers (the last user block says which)."""
    text = last_text(req)
    if "[peer inbox]" in text:
        tasks = [t for t in ("TASK-A", "TASK-B", "TASK-C") if t in text]
        return reply("INBOX-ANSWER " + " ".join(tasks))
    return reply("USER-ANSWER")


def setup(server, stream: str, name: str = "eng"):
    inst = Instance.create(name)
    fields = nats_config(server, stream, peer_role="eng", peer_poll_roles=["lead"]).model_dump(mode="json")
    update_config(inst.config_path, **{k: v for k, v in fields.items() if k.startswith("peer_")})
    lead = nats_config(server, stream, peer_role="lead")
    return inst, lead


def run_env() -> dict[str, str]:
    return cli_env({"MNEMARA_WARM_SPARE": "1"})  # the early start on: the case that skipped the message


def inbox_turns(inst: Instance) -> list[str]:
    with TurnStore(inst.turns_path) as store:
        return [t.text for t in store.history() if t.role == "user" and "[peer inbox]" in t.text]


def test_echo_into_a_piped_run_delivers_the_waiting_nats_task_first(scripted_api, mnemara_home, nats_server,
                                                                     stream_name) -> None:
    scripted_api.responder = answer
    inst, lead = setup(nats_server, stream_name)
    runs = int(os.environ.get("MNEMARA_PIPED_RUNS", "2"))  # the 10 of 10: MNEMARA_PIPED_RUNS=10
    for i in range(runs):
        send(lead, "lead", None, "eng", json.dumps({"task": f"TASK-A run {i}"}))
        done = subprocess.run([sys.executable, "-m", "mnemara", "run", "--instance", "eng", "--no-tui"],
                              input="hello\n", capture_output=True, text=True, env=run_env(), timeout=120,
                              cwd=str(ROOT))
        assert done.returncode == 0, done.stderr
        assert "INBOX-ANSWER TASK-A" in done.stdout and "USER-ANSWER" in done.stdout, (done.stdout, done.stderr)
        assert done.stdout.index("INBOX-ANSWER") < done.stdout.index("USER-ANSWER")  # before the first line
        assert "(not connected)" not in done.stderr
        assert done.stderr.count("accepts connections without credentials") == 1  # an open test server: said once
        assert len(inbox_turns(inst)) == i + 1, f"run {i}: the task was not delivered exactly once"
    status = subprocess.run([sys.executable, "-m", "mnemara", "peer", "status", "--instance", "eng"],
                            capture_output=True, text=True, env=cli_env(), timeout=60, cwd=str(ROOT))
    assert "pending: 0 " in status.stdout, status.stdout


def test_a_message_arriving_while_the_piped_repl_waits_and_one_at_end_of_input_are_delivered(
        scripted_api, mnemara_home, nats_server, stream_name) -> None:
    scripted_api.responder = answer
    inst, lead = setup(nats_server, stream_name)
    proc = subprocess.Popen([sys.executable, "-m", "mnemara", "run", "--instance", "eng", "--no-tui"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=run_env(), cwd=str(ROOT))
    out: list[str] = []
    err: list[str] = []
    readers = [threading.Thread(target=lambda s=s, b=b: b.extend(iter(s.readline, "")), daemon=True)
               for s, b in ((proc.stdout, out), (proc.stderr, err))]
    for reader in readers:
        reader.start()

    def wait_for(text: str, where: list[str], timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        while not any(text in line for line in where):
            assert time.monotonic() < deadline and proc.poll() is None, (text, out, err)
            time.sleep(0.05)

    try:
        wait_for("⚡ Inbox: ON", err)  # the REPL now waits for its first line
        send(lead, "lead", None, "eng", json.dumps({"task": "TASK-B"}))
        wait_for("INBOX-ANSWER TASK-B", out)  # delivered with no input line
        assert proc.stdin is not None
        proc.stdin.write("hello\n")
        proc.stdin.flush()
        wait_for("USER-ANSWER", out)
        send(lead, "lead", None, "eng", json.dumps({"task": "TASK-C"}))
        proc.stdin.close()  # end of input at once: TASK-C still goes out before the run exits
        assert proc.wait(timeout=120) == 0, err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    for reader in readers:
        reader.join(timeout=10)
    assert any("INBOX-ANSWER TASK-C" in line for line in out), (out, err)
    turns = inbox_turns(inst)
    assert len(turns) == 2 and "TASK-B" in turns[0] and "TASK-C" in turns[1], turns
