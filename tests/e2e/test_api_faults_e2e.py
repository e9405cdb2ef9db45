"""Issue 13 item 10: API faults end fast and cleanly, through the real `mnemara run`.

Each test drives the real mnemara CLI (a subprocess), the real SDK and the real Claude
Code CLI against the scripted API told to fail in one way, with the CLI's own retry
default in force (the scripted fixture's CLAUDE_CODE_MAX_RETRIES=0 is removed), and
checks what the user sees (one error line), what reached the API and what was stored.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mnemara.core.config import update_config
from mnemara.store.instance import Instance
from mnemara.store.turns import TurnStore
from mnemara.testing.scripted_api import drop, http_error, reply, stall
from tests.conftest import ROOT, cli_env, run_cli

pytestmark = pytest.mark.e2e


@pytest.fixture
def cli_retry_default(scripted_api, monkeypatch):
    """The CLI's retry behaviour as users get it: only config.json's api_max_retries caps it."""
    monkeypatch.delenv("CLAUDE_CODE_MAX_RETRIES", raising=False)
    return scripted_api


def _errors(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("error:")]


def _rows(name: str) -> list:
    with TurnStore(Instance.open(name).turns_path) as store:
        return store.history()


def test_rejected_key_fails_on_the_first_answer_with_one_line(cli_retry_default, mnemara_home):
    api = cli_retry_default
    Instance.create("auth")
    api.default = http_error(401)  # every request, retries included, is refused
    proc = run_cli("run", "--instance", "auth", "--no-tui", input="hello with a bad key\n", timeout=90)
    assert proc.returncode == 1, proc.stderr  # the only turn failed (issue 27)
    assert len(api.message_requests()) == 1  # the CLI would retry a 401 ten times over ~3 minutes
    assert proc.stderr.splitlines() == [("error: authentication failed (HTTP 401): the API rejected the key; "
                                         "check ANTHROPIC_API_KEY; your message is saved")]  # that one line only
    (user,) = _rows("auth")
    assert (user.role, user.text, user.meta["error_kind"]) == ("user", "hello with a bad key", "auth")


def test_persistent_server_errors_use_the_retry_budget_and_show_each_retry(cli_retry_default, mnemara_home):
    """HTTP 500 here; 529's retry notice ("overloaded (HTTP 529)") and its error kind are proven in
    test_engine_e2e.py (a variant that differs only in the status would cost one more CLI start)."""
    api = cli_retry_default
    status, label = 500, "server_error (HTTP 500)"
    inst = Instance.create("busy")
    update_config(inst.config_path, api_max_retries=1)
    api.default = http_error(status)
    proc = run_cli("run", "--instance", "busy", "--no-tui", input="are you there\n", timeout=90)
    assert proc.returncode == 1, proc.stderr  # the only turn failed (issue 27)
    assert len(api.message_requests()) == 2  # the first try and the one retry of the budget
    retries = [line for line in proc.stderr.splitlines() if "retrying" in line]
    assert len(retries) == 1 and label in retries[0] and "attempt 1 of 1" in retries[0]
    (error,) = _errors(proc.stderr)
    assert f"HTTP {status}" in error
    (user,) = _rows("busy")
    assert user.role == "user" and user.meta["error_kind"] == "server"


def test_a_silent_stream_ends_as_an_error_after_api_stall_seconds(scripted_api, mnemara_home):
    inst = Instance.create("stalled")
    update_config(inst.config_path, api_stall_seconds=3)
    scripted_api.push(stall(5, "the first words arrive and then nothing"))
    proc = run_cli("run", "--instance", "stalled", "--no-tui", input="talk to me\n", timeout=90)
    assert proc.returncode == 1, proc.stderr  # the only turn failed (issue 27)
    assert _errors(proc.stderr) == [("error: the API sent nothing for 3 s, so the turn was ended "
                                     "(api_stall_seconds in config.json); your message is saved, send again to retry")]
    assert len(scripted_api.message_requests()) == 1
    user, *partial = _rows("stalled")
    assert user.text == "talk to me" and user.meta["error_kind"] == "stall"
    # what was shown before the silence is kept once, marked interrupted (on a loaded machine the
    # CLI may not have shown anything yet when the clock, started at send time, runs out)
    assert len(partial) <= 1
    if partial:
        assert partial[0].role == "assistant" and partial[0].meta["interrupted"] is True
        assert "the first words" in partial[0].text and "nothing" not in partial[0].text


def test_a_dropped_connection_shows_and_stores_the_partial_answer_once(cli_retry_default, mnemara_home):
    api = cli_retry_default
    inst = Instance.create("dropped")
    update_config(inst.config_path, api_max_retries=1)
    api.default = drop(6, "a partial answer that the network cuts off here")  # every retry drops at the same spot
    proc = run_cli("run", "--instance", "dropped", "--no-tui", input="tell me\n", timeout=90)
    assert proc.returncode == 1, proc.stderr  # the only turn failed (issue 27)
    assert len(api.message_requests()) >= 2  # the CLI did try again ...
    shown = "a partial answer that the network"[:8 * 4]  # four 8-character deltas before the drop
    assert proc.stdout.count(shown) == 1  # ... and the screen shows the partial text once, not per attempt
    (error,) = _errors(proc.stderr)
    assert "connection to the API was lost" in error
    user, partial = _rows("dropped")
    assert partial.role == "assistant" and partial.text == shown
    assert partial.meta["interrupted"] is True and partial.meta["error_kind"] == "connection"
    assert user.meta["error_kind"] == "connection"


def _children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry.name))
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux only")
def test_kill_9_of_mnemara_leaves_no_cli_calling_the_api(scripted_api, mnemara_home):
    Instance.create("orphan")
    scripted_api.push(stall(4, "a long answer that never finishes"))
    proc = subprocess.Popen([sys.executable, "-m", "mnemara", "run", "--instance", "orphan", "--no-tui"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=cli_env(), cwd=str(ROOT))
    try:
        proc.stdin.write(b"start a long answer\n")
        proc.stdin.flush()
        assert scripted_api.wait_for_requests(1, timeout=90), "the CLI never called the API"
        clis = [c for c in _children(proc.pid) if b"claude" in Path(f"/proc/{c}/cmdline").read_bytes()]
        assert clis, "no Claude CLI child found under mnemara"
        scripted_api.default = reply("a retry after the parent died")
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        deadline = time.monotonic() + 15
        while any(_alive(c) for c in clis) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(_alive(c) for c in clis), "the Claude CLI outlived mnemara"
        assert scripted_api.wait_idle(15), "a connection to the scripted API stayed open"
        assert len(scripted_api.message_requests()) == 1
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            stream.close()
