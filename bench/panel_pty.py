"""A Mnemara panel (or any command) on a fresh 100x30 pseudo-terminal, for the benches that time it:
read what it draws, type into it, quit it, and time each step from its start."""
from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import termios
import time
from collections.abc import Callable


class PanelPty:
    """A ``mnemara run`` (or 0.18's) on a fresh 100x30 pty: read its output, type into it."""

    def __init__(self, cmd: list[str], env: dict[str, str], timeout: float = 120.0, label: str | None = None) -> None:
        self.cmd = cmd
        self.label = label or " ".join(cmd[:5])  # what an invalid run names
        self.timeout = timeout
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(cmd, stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True)
        os.close(slave)
        self.seen = b""

    def pump(self, until: Callable[[], bool], what: str) -> None:
        """Read the output until ``until()``; an exit or the timeout first is an invalid measurement."""
        while not until():
            # the process may exit between until() and poll(): ask until() again before calling the run invalid
            if (time.perf_counter() - self.started > self.timeout or self.proc.poll() is not None) and not until():
                raise SystemExit(f"INVALID: {self.label}: {what} did not happen (exit code "
                                 f"{self.proc.poll()}); last output: {self.seen[-600:]!r}")
            if select.select([self.master], [], [], 0.005)[0]:
                try:
                    self.seen = (self.seen + os.read(self.master, 65536))[-8192:]
                except OSError:
                    pass

    def wait(self, seconds: float, what: str) -> None:
        end = time.perf_counter() + seconds
        self.pump(lambda: time.perf_counter() >= end, what)

    def type(self, text: str) -> None:
        for char in text.encode():
            os.write(self.master, bytes([char]))
        self.wait(0.3, "typing")

    def send(self) -> None:
        os.write(self.master, b"\x13")  # Ctrl+S

    def quit(self) -> float:
        """Ctrl+C; seconds until the process is gone."""
        os.write(self.master, b"\x03\x03")  # idle, the first Ctrl+C clears the input, the second quits
        quit_at = time.perf_counter()
        self.proc.wait(timeout=60)
        return time.perf_counter() - quit_at

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        os.close(self.master)


def on_pty(cmd: list[str], env: dict[str, str], mark: bytes | None, timeout: float = 60.0) -> tuple[float, float]:
    """Run ``cmd`` on a :class:`PanelPty`: (seconds until ``mark`` was printed, seconds until it exited). With
    a ``mark`` the program is quit (Ctrl+C twice) once it was printed, and a program that never prints it is an
    invalid measurement; without one, both figures are the time to its own exit."""
    panel = PanelPty(cmd, env, timeout)
    try:
        if mark is None:
            panel.pump(lambda: panel.proc.poll() is not None, "its exit")
            ended = time.perf_counter() - panel.started
            return ended, ended
        panel.pump(lambda: mark in panel.seen, f"the panel drawing ({mark!r} printed)")
        ready = time.perf_counter() - panel.started
        panel.quit()
        return ready, time.perf_counter() - panel.started
    finally:
        panel.close()
