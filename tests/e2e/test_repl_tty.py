"""The terminal REPL in a real pseudo-terminal: prompt, streaming, Ctrl+C stops a turn, history."""
from __future__ import annotations

import os
import pty
import select
import shlex
import shutil
import subprocess
import sys
import time

import pytest

from mnemara.store.instance import Instance
from mnemara.store.turns import TurnStore
from mnemara.testing.scripted_api import reply
from tests.conftest import ROOT, cli_env

pytestmark = pytest.mark.e2e


class Terminal:
    def __init__(self, *args: str) -> None:
        self.master, slave = pty.openpty()
        self.proc = subprocess.Popen([sys.executable, "-m", "mnemara", *args], stdin=slave, stdout=slave,
                                     stderr=slave, env=cli_env({"PROMPT_TOOLKIT_NO_CPR": "1", "TERM": "xterm"}), cwd=str(ROOT), close_fds=True, start_new_session=True)
        os.close(slave)
        self.buffer = ""
        self.seen = ""

    def screen(self, raw: str) -> str:
        """What ``expect`` matches against; subclasses may clean the raw output."""
        return raw

    def expect(self, text: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while text not in self.screen(self.buffer):
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"{text!r} not seen; screen so far:\n{self.screen(self.buffer)[-2000:]}")
            ready, _, _ = select.select([self.master], [], [], min(left, 0.2))
            if ready:
                try:
                    self.buffer += os.read(self.master, 65536).decode("utf-8", "replace")
                except OSError:
                    break
        shown = self.screen(self.buffer)
        if text not in shown:
            raise AssertionError(f"{text!r} not seen before the terminal closed:\n{shown[-2000:]}")
        end = shown.index(text) + len(text)
        self.seen += shown[:end]
        self.buffer = shown[end:]  # later expects look past this match

    def send(self, data: str) -> None:
        os.write(self.master, data.encode())

    def close(self) -> int:
        try:
            return self.proc.wait(timeout=30)
        finally:
            os.close(self.master)


def test_terminal_repl_streams_stops_on_ctrl_c_and_keeps_history(scripted_api, mnemara_home):
    inst = Instance.create("tty")
    scripted_api.push(reply("first reply"), reply("slow " * 300, delay=0.05), reply("after the stop"))
    term = Terminal("run", "--instance", "tty", "--no-tui")
    try:
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
        term.send("\x04")
        assert term.close() == 0
    finally:
        if term.proc.poll() is None:
            term.proc.kill()
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
