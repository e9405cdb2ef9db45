"""The terminal REPL in a real pseudo-terminal: prompt, streaming, Ctrl+C stops a turn, history."""
from __future__ import annotations

import os
import shlex
import shutil
import sys

import pytest

from mnemara.store.instance import Instance
from mnemara.store.turns import TurnStore
from mnemara.testing.scripted_api import reply
from tests.conftest import ROOT
from tests.e2e.terminal import Terminal

pytestmark = pytest.mark.e2e


def test_terminal_repl_streams_stops_on_ctrl_c_and_keeps_history(scripted_api, mnemara_home):
    inst = Instance.create("tty")
    scripted_api.push(reply("first reply"), reply("slow " * 300, delay=0.05), reply("after the stop"))
    with Terminal("run", "--instance", "tty", "--no-tui") as term:
        term.expect("you>")
        term.send("hello there\r")
        term.expect("first reply")
        term.expect("you>")
        term.send("go slowly\r")
        term.expect("slow slow")
        term.send("\x03")
        term.expect("(turn interrupted)")
        term.expect("you>")
        term.send("and now?\r")
        term.expect("after the stop")
        term.expect("you>")
        assert term.quit() == 0
    with TurnStore(inst.turns_path) as store:
        rows = store.history()
    assert [r.role for r in rows] == ["user", "assistant"] * 3
    assert rows[3].meta["interrupted"] is True and rows[5].text == "after the stop"
    history = inst.prompt_history_path.read_text()
    assert "hello there" in history and "and now?" in history


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed on this machine")
def test_spoofed_multiline_command_is_shown_whole_at_80x30(scripted_api, mnemara_home, isolated_home):
    """Issue 13 item 2: `touch X` + 60 newlines + `ls -la` must not pass for `ls -la` on an 80x30 terminal."""
    from tests.e2e.test_tui_tmux import Tmux
    from mnemara.testing.scripted_api import tool_use

    Instance.create("spoof")
    marker = isolated_home / "X"
    command = f"touch {marker}" + "\n" * 60 + "ls -la"
    scripted_api.push(reply(tool_use("Bash", {"command": command})), reply("all done"))
    env = {
        **{k: v for k, v in os.environ.items() if k.startswith(("ANTHROPIC_", "CLAUDE_", "MNEMARA_"))},
        "HOME": os.environ["HOME"], "PYTHONPATH": str(ROOT), "PATH": os.environ["PATH"], "TERM": "xterm",
        "LANG": "C.UTF-8",
    }
    line = " ".join(["env", "-i", *(shlex.quote(f"{k}={v}") for k, v in env.items()), shlex.quote(sys.executable),
                     "-m", "mnemara", "run", "--instance", "spoof", "--no-tui", "; echo REPL-EXIT=$?; sleep 60"])
    tmux = Tmux()
    try:
        tmux("new-session", "-d", "-s", "smoke", "-x", "80", "-y", "30", line)
        tmux.wait_for("you>")
        tmux("send-keys", "-t", "smoke", "list the files", "Enter")
        screen = tmux.wait_for("[a]lways this exact target")
        assert f"touch {marker}" in screen.replace("\n", "") and "ls -la" in screen, screen
        assert "61 lines" in screen and "shown escaped" in screen
        assert "[y]es once / [n]o" in screen
        tmux("send-keys", "-t", "smoke", "n", "Enter")
        tmux.wait_for("all done")
        assert not marker.exists()
    finally:
        tmux.close()
