"""No process of a turn survives it (issue 39): a Bash command the real Claude CLI is running, a real
``python3 -c 'import time; time.sleep(...)'``, ends when the turn is stopped with Escape, when the panel
is left with ``/quit``, and when the panel itself is killed with ``kill -9``.

The CLI's Bash tool starts each command in a session of its own (``setsid``), so killing the CLI, or
its process group, leaves the command running with parent PID 1. The launcher of
:mod:`mnemara.claude.child_guard` marks every process under a CLI and leaves a watchdog that kills the
marked ones when the CLI ends, however it ends.
"""
from __future__ import annotations

import os
import signal
import shutil
import time
import uuid
from pathlib import Path

import pytest

from mnemara.core.config import update_config
from mnemara.store.instance import Instance
from mnemara.testing.scripted_api import reply, tool_use
from tests.e2e.test_tui_tmux import Tmux
from tests.e2e.test_tui_tmux_tour import keys, start
from tests.tui_support import instance, make_app, wait_for  # noqa: F401  (fixtures)

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc (Linux)")]

ALLOW_BASH = [{"tool": "Bash", "mode": "allow", "allowed_patterns": []}]


def sleeper() -> tuple[str, str]:
    """A Bash command that sleeps 90 s, and the text that finds its process (unique to this test)."""
    seconds = f"90.{uuid.uuid4().int % 10**9:09d}"
    return f"python3 -c 'import time; time.sleep({seconds})'", f"time.sleep({seconds})"


def running(marker: str) -> list[int]:
    """PIDs of live (not zombie) processes whose command line holds ``marker``."""
    pids = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as fh:
                cmdline = fh.read().replace(b"\0", b" ").decode("utf-8", "replace")
            with open(f"/proc/{name}/stat", "rb") as fh:
                state = fh.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if marker in cmdline and "bash" not in cmdline.split(" ", 1)[0] and state != b"Z":
            pids.append(int(name))
    return pids


def wait_until(condition, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def leftovers():
    """Markers of this test's sleepers; any still running at teardown is killed (and the test failed)."""
    markers: list[str] = []
    yield markers
    for marker in markers:
        for pid in running(marker):
            os.kill(pid, signal.SIGKILL)


async def test_escape_in_the_panel_ends_the_bash_command_of_the_stopped_turn(scripted_api, make_app, instance,
                                                                              leftovers):
    command, marker = sleeper()
    leftovers.append(marker)
    update_config(instance.config_path, allowed_tools=ALLOW_BASH)
    scripted_api.push(reply(tool_use("Bash", {"command": command, "timeout": 600000})), reply("done"))
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        app.chat_input.focus()
        app.chat_input.insert("run the slow thing")
        await pilot.press("ctrl+s")
        (pid,) = await wait_for(pilot, lambda: running(marker), 60, "the Bash command to start")
        assert os.getppid() != pid
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.turn_running, 20, "the turn to stop")
        await wait_for(pilot, lambda: not running(marker), 10, "the stopped turn's command to end")
        assert app.session.store.history()[-1].meta.get("interrupted") is True


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed on this machine")
@pytest.mark.parametrize("leave", ["/quit", "kill -9"])
def test_leaving_the_panel_mid_turn_ends_the_bash_command(leave, scripted_api, mnemara_home: Path, leftovers):
    command, marker = sleeper()
    leftovers.append(marker)
    inst = Instance.create("orphans")
    update_config(inst.config_path, allowed_tools=ALLOW_BASH)
    scripted_api.push(reply(tool_use("Bash", {"command": command, "timeout": 600000})), reply("done"))
    tmux = Tmux()
    try:
        start(tmux, mnemara_home, "run", "--instance", "orphans")
        tmux.wait_for("turns: 0/20")
        keys(tmux, "run the slow thing", "C-s")
        wait_until(lambda: running(marker), 60, "the Bash command to start")
        if leave == "/quit":
            keys(tmux, "/quit", "C-s")
            tmux.wait_for("PANEL-EXIT=", timeout=30)
        else:
            shell = tmux("display-message", "-p", "-t", "smoke", "#{pane_pid}").strip()  # sh -c "env -i ... python"
            with open(f"/proc/{shell}/task/{shell}/children", encoding="ascii") as fh:
                (panel,) = fh.read().split()  # env exec'd the panel's python
            os.kill(int(panel), signal.SIGKILL)
            tmux.wait_for("PANEL-EXIT=137", timeout=30)
        wait_until(lambda: not running(marker), 10, f"the command to end after {leave}")
    finally:
        tmux.close()
