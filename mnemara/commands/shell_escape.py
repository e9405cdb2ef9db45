"""``!command``: run a command of your own in the shell and hand its output to you (issue 39); one
implementation for the panel and the REPL.

A message that starts with ``!`` is not sent to the model. The UI shows the whole command, on one line with
every control, bidi or blank-looking character escaped (:func:`mnemara.guard.target_text.show_target`), and
runs it only on the user's own yes: the agent's permission policy plays no part, since the user, not the
agent, asked. It runs as ``bash -c COMMAND`` in the session's folder, with no input, in a process group
of its own (stopping it kills the whole group), for at most :data:`SHELL_TIMEOUT_SECONDS`. Its output
(stdout and stderr together, at most :data:`MAX_OUTPUT_BYTES`, control characters escaped) is put into
the input under a line that says what it is, for the user to edit and send, or to clear. ``!!text``
sends ``!text`` as a message.
"""
from __future__ import annotations

import os
import signal
import subprocess
import threading
from dataclasses import dataclass

from mnemara.core.display import terminal_safe
from mnemara.core.errors import UsageError
from mnemara.guard.target_text import show_target

SHELL_TIMEOUT_SECONDS = 120.0
MAX_OUTPUT_BYTES = 32 * 1024


def shell_command(text: str) -> str | None:
    """The command of a ``!command`` message; None when ``text`` is not one (``!!x`` is the message ``!x``).
    Raises :class:`UsageError` for a bare ``!``."""
    stripped = text.strip()
    if not stripped.startswith("!") or stripped.startswith("!!"):
        return None
    command = stripped[1:].strip()
    if not command:
        raise UsageError("! needs a command, e.g. !git status (!!text sends !text as a message)")
    return command


def question(command: str, cwd: str) -> str:
    """What the user is asked before ``command`` runs: the command whole and escaped, where it runs."""
    shown = show_target(command)
    return (f"Run in your shell (bash -c, in {show_target(cwd).text})?\n\n  {shown.text}\n\n({shown.summary}; "
            f"stopped after {SHELL_TIMEOUT_SECONDS:.0f} s; its output goes into your input, not to the model)")


@dataclass
class ShellRun:
    """One ``!command``: start it with :meth:`run`, stop it from another thread with :meth:`stop`."""

    command: str
    cwd: str
    exit_code: int | None = None
    output: str = ""
    truncated: bool = False
    timed_out: bool = False
    stopped: bool = False
    timeout: float = SHELL_TIMEOUT_SECONDS

    def __post_init__(self) -> None:
        self._process: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()

    def run(self, timeout: float | None = None) -> ShellRun:
        """Run the command to its end (or the timeout, or :meth:`stop`); returns itself."""
        if timeout is not None:
            self.timeout = timeout
        with self._lock:
            if self.stopped:
                return self
            try:
                self._process = subprocess.Popen(["bash", "-c", self.command], cwd=self.cwd, stdin=subprocess.DEVNULL,
                                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                                 start_new_session=True)
            except OSError as exc:
                self.output, self.exit_code = f"could not start bash: {exc.strerror or exc}", 127
                return self
        try:
            data, _ = self._process.communicate(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            self.timed_out = True
            self._kill()
            data, _ = self._process.communicate()
        self.exit_code = self._process.returncode
        self.truncated = len(data) > MAX_OUTPUT_BYTES
        text = data[:MAX_OUTPUT_BYTES].decode("utf-8", "replace")
        self.output = terminal_safe(text).replace("\t", "    ")
        return self

    def stop(self) -> None:
        """End the command and everything it started (its process group)."""
        with self._lock:
            self.stopped = True
            self._kill()

    def _kill(self) -> None:
        process = self._process
        if process is not None and process.poll() is None:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except OSError:
                pass

    def status(self) -> str:
        """``exit 0``, ``exit 2``, ``stopped after 120 s``, ``stopped by you``."""
        if self.stopped:
            return "stopped by you"
        if self.timed_out:
            return f"stopped after {self.timeout:g} s"
        return f"exit {self.exit_code}"

    def for_input(self) -> str:
        """What goes into the input for the user to send: a line saying what it is, then the output fenced."""
        fence = "```"
        while fence in self.output:
            fence += "`"
        more = f"\n(output cut at {MAX_OUTPUT_BYTES // 1024} KB)" if self.truncated else ""
        body = self.output if self.output.endswith("\n") or not self.output else self.output + "\n"
        return (f"I ran this command in my shell ({self.status()}):\n$ {terminal_safe(self.command)}\n{fence}\n{body}{fence}"
                f"{more}\n")

    def summary(self) -> str:
        """One line for the log."""
        lines = self.output.count("\n") + (1 if self.output and not self.output.endswith("\n") else 0)
        return (f"ran by you: {show_target(self.command).text} ({self.status()}, {lines} line{'' if lines == 1 else 's'} of output); "
                "the output is in your input: edit and send it, or clear it")
