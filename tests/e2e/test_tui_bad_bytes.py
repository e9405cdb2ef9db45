"""The panel in a real pseudo-terminal given a byte that is not UTF-8 (a Latin-1 paste, an 8-bit
Meta key): Textual's input thread used to die on it (UnicodeDecodeError drawn over the panel), no key
reached the panel afterwards, Ctrl+C included, and what was in the input was lost with it.

The process boundary (a real terminal and Textual's own driver) is the point; no CLI is involved.
"""
from __future__ import annotations

import json
import os
import pty
import signal
import subprocess
import sys

import pytest

from mnemara.store.instance import Instance
from tests.conftest import ROOT, cli_env
from tests.e2e.test_repl_tty import Terminal

pytestmark = pytest.mark.e2e


class PanelTerminal(Terminal):
    """`mnemara run` opening the panel (MNEMARA_NO_TUI is off for this process)."""

    def __init__(self, *args: str) -> None:
        self.master, slave = pty.openpty()
        env = cli_env({"MNEMARA_NO_TUI": "0", "TERM": "xterm-256color", "COLUMNS": "100", "LINES": "30"})
        self.proc = subprocess.Popen([sys.executable, "-m", "mnemara", *args], stdin=slave, stdout=slave,
                                     stderr=slave, env=env, cwd=str(ROOT), close_fds=True, start_new_session=True)
        os.close(slave)
        self.buffer = ""
        self.seen = ""


def test_a_byte_that_is_not_utf8_does_not_kill_the_panels_keyboard(mnemara_home):
    inst = Instance.create("bytes")
    term = PanelTerminal("run", "--instance", "bytes")
    try:
        term.expect("Send")  # the button bar: the panel is drawn and reads keys
        os.write(term.master, b"abc\xffzqxw")
        term.expect("zqxw")  # echoed in the input: the keys after the bad byte still arrive
        os.write(term.master, b"\x03")  # Ctrl+C quits; what is in the input is kept for the next panel
        assert term.proc.wait(timeout=60) == 0
        assert "Traceback" not in term.seen + term.buffer
    finally:
        if term.proc.poll() is None:
            os.killpg(term.proc.pid, signal.SIGKILL)
        os.close(term.master)
    assert json.loads((inst.root / "unsent.json").read_text(encoding="utf-8")) == ["abc\ufffdzqxw"]
