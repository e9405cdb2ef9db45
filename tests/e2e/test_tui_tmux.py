"""Smoke test in a real terminal: `mnemara run` inside tmux, keys sent with send-keys, screen read with capture-pane.

This catches what the pilot cannot: the CLI choosing the panel on a terminal,
real key decoding (Ctrl+S reaching the app, not the tty's flow control) and a
clean exit on Ctrl+C.
"""
from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from mnemara.store.instance import Instance
from mnemara.store.turns import TurnStore
from mnemara.testing.scripted_api import reply

from tests.conftest import ROOT

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed on this machine"),
]


class Tmux:
    """One private tmux server (its own socket, no user config) holding one window."""

    def __init__(self) -> None:
        self.socket = f"mnemara-test-{uuid.uuid4().hex[:8]}"

    def __call__(self, *args: str) -> str:
        out = subprocess.run(["tmux", "-L", self.socket, "-f", "/dev/null", *args],
                             capture_output=True, text=True, timeout=30)
        return out.stdout

    def screen(self) -> str:
        return self("capture-pane", "-p", "-t", "smoke")

    def wait_for(self, text: str, timeout: float = 60.0) -> str:
        return self._wait(lambda screen: text in screen, repr(text), timeout)

    def wait_idle(self, marker: str, timeout: float = 60.0) -> str:
        """Wait until `marker` shows and the status line no longer says a turn is running: only then does
        Ctrl+C quit (during a turn, the first Ctrl+C stops the turn, as in Claude Code)."""
        return self._wait(lambda screen: marker in screen and "working…" not in screen,
                          f"{marker!r} with no turn running", timeout)

    def wait_screen(self, ready: Callable[[str], bool], what: str, timeout: float = 60.0) -> str:
        """Wait until ``ready(screen)`` holds; ``what`` names it in the failure. For a condition that stays
        true once met (a streamed row's text scrolls away, "some row numbered 30 or more" does not)."""
        return self._wait(ready, what, timeout)

    def _wait(self, ready: Callable[[str], bool], what: str, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            screen = self.screen()
            if ready(screen):
                return screen
            time.sleep(0.1)
        raise AssertionError(f"{what} never appeared; the screen was:\n{self.screen()}")

    def close(self) -> None:
        self("kill-server")


@pytest.fixture
def tmux():
    session = Tmux()
    yield session
    session.close()


def test_run_opens_the_panel_sends_with_ctrl_s_and_quits_with_ctrl_c(tmux, scripted_api, mnemara_home: Path):
    Instance.create("smoke")
    scripted_api.push(reply("Hello from the scripted model, in a real terminal."))
    env = {
        **{k: v for k, v in os.environ.items() if k.startswith(("ANTHROPIC_", "CLAUDE_"))},
        "HOME": os.environ["HOME"], "MNEMARA_HOME": str(mnemara_home), "MNEMARA_NO_TUI": "",
        "PYTHONPATH": str(ROOT), "PATH": os.environ["PATH"], "TERM": "xterm-256color", "LANG": "C.UTF-8",
    }
    command = " ".join([
        "env", "-i", *(shlex.quote(f"{k}={v}") for k, v in env.items()),
        shlex.quote(sys.executable), "-m", "mnemara", "run", "--instance", "smoke",
        "; echo PANEL-EXIT=$?; sleep 60",
    ])
    tmux("new-session", "-d", "-s", "smoke", "-x", "100", "-y", "30", command)

    screen = tmux.wait_for("turns: 0/20")
    assert "mnemara: smoke" in screen and "Send ⌃S" in screen
    # Text and Ctrl+S in one send-keys: the terminal delivers them in one burst, and all of it must be sent.
    tmux("send-keys", "-t", "smoke", "hello from tmux, what can you do?", "C-s")
    screen = tmux.wait_for("Hello from the scripted model, in a real terminal.")
    assert "you: hello from tmux, what can you do?" in screen
    tmux.wait_idle("turns: 2/20")

    # issue 39: idle, the first Ctrl+C clears the input (as in Claude Code) and says so; the second quits
    tmux("send-keys", "-t", "smoke", "a draft to drop")
    tmux.wait_for("a draft to drop")
    tmux("send-keys", "-t", "smoke", "C-c")
    screen = tmux.wait_for("input cleared (↑ brings it back): press Ctrl+C again to quit")
    assert "PANEL-EXIT" not in screen and "a draft to drop" not in screen
    tmux("send-keys", "-t", "smoke", "C-c")
    tmux.wait_for("PANEL-EXIT=0", timeout=30)
    with TurnStore(Instance.open("smoke").turns_path) as store:
        assert [(r.role, r.text) for r in store.history()] == [
            ("user", "hello from tmux, what can you do?"), ("assistant", "Hello from the scripted model, in a real terminal.")]
