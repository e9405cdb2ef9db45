"""`mnemara` on a real pseudo-terminal, for the e2e tests that type keys and read the screen.

Use a terminal as a context manager: however the test ends, a process still running is killed with
its whole process group (the REPL and the Claude Code CLI it started) and the terminal is closed::

    with Terminal("run", "--instance", "x", "--no-tui") as term:
        term.expect("you>")
        term.send("hello\\r")
        assert term.quit() == 0
"""
from __future__ import annotations

import os
import pty
import re
import select
import signal
import subprocess
import sys
import time
from types import TracebackType

from tests.conftest import ROOT, cli_env

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class Terminal:
    """`python -m mnemara ARGS` on a pseudo-terminal (the REPL by default: ``TERM=xterm``, no CPR)."""

    ENV = {"PROMPT_TOOLKIT_NO_CPR": "1", "TERM": "xterm"}

    def __init__(self, *args: str) -> None:
        self.master, slave = pty.openpty()
        self.proc = subprocess.Popen([sys.executable, "-m", "mnemara", *args], stdin=slave, stdout=slave,
                                     stderr=slave, env=cli_env(self.ENV), cwd=str(ROOT), close_fds=True,
                                     start_new_session=True)
        os.close(slave)
        self.closed = False
        self.buffer = ""
        self.seen = ""

    def __enter__(self) -> Terminal:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)
        self._close_master()

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
        """Wait for the process to end by itself; its exit code."""
        try:
            return self.proc.wait(timeout=30)
        finally:
            self._close_master()

    def quit(self) -> int:
        """Leave the REPL with Ctrl+D at its prompt; the exit code."""
        self.send("\x04")
        return self.close()

    def _close_master(self) -> None:
        if not self.closed:
            self.closed = True
            os.close(self.master)


class PlainTerminal(Terminal):
    """A Terminal whose expect() ignores escape sequences (prompt-toolkit redraws the prompt between writes)."""

    def screen(self, raw: str) -> str:
        return ANSI.sub("", raw)


class PanelTerminal(Terminal):
    """`mnemara run` opening the panel (MNEMARA_NO_TUI is off for this process)."""

    ENV = {"MNEMARA_NO_TUI": "0", "TERM": "xterm-256color", "COLUMNS": "100", "LINES": "30"}
