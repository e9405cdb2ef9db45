"""The terminal REPL's key watcher: while a turn runs, Ctrl+C stops it and typing is kept.

:class:`InterruptWatcher` puts the terminal in a raw mode for the length of a turn and
reads the keys itself (see its docstring); the REPL (:mod:`mnemara.ui.repl.app`) sends the
lines it queued when the turn ends and starts its next prompt with the unfinished rest.
"""
from __future__ import annotations

import re
import sys
import threading
import time
from typing import Any, Callable

_ESCAPES = re.compile(r"\x1b(\[[0-9;?]*[ -/]*[@-~]|O.|.)?")
_PASTE_START, _PASTE_END = "\x1b[200~", "\x1b[201~"  # a terminal's bracketed paste wraps pasted text in these
_PASTE_MARKS = re.compile(r"(\x1b\[20[01]~)")


class InterruptWatcher:
    """While a turn runs on a terminal, Ctrl+C stops the turn instead of signalling.

    A terminal's Ctrl+C normally sends SIGINT to the whole foreground process
    group, which would also kill the CLI processes (the one serving the turn and
    the spare). So during a turn the terminal's ISIG and ICANON flags are cleared
    and this thread reads keys itself: ``\x03`` calls ``on_interrupt``; other
    keys are kept as :meth:`typed_ahead` text, which the next prompt starts with
    (so typing while the answer streams is not lost). :meth:`paused` hands the
    terminal back in line mode (still without signals) for a permission question.
    """

    def __init__(self, on_interrupt: Callable[[], Any], fd: int | None = None,
                 on_queued: Callable[[str], Any] | None = None) -> None:
        self.on_interrupt = on_interrupt
        self.on_queued = on_queued
        self.interrupted = False
        self.fd = sys.stdin.fileno() if fd is None else fd
        self._saved: list | None = None
        self._running = threading.Event()
        self._typed = bytearray()
        self._pause = threading.Event()
        self._thread: threading.Thread | None = None

    def _mode(self, line_mode: bool) -> None:
        import termios

        assert self._saved is not None
        attrs = list(self._saved)
        attrs[6] = list(attrs[6])
        attrs[3] &= ~termios.ISIG
        if not line_mode:
            attrs[3] &= ~(termios.ICANON | termios.ECHO)
            attrs[6][termios.VMIN], attrs[6][termios.VTIME] = 0, 0
        termios.tcsetattr(self.fd, termios.TCSANOW, attrs)

    def __enter__(self) -> "InterruptWatcher":
        import termios

        try:
            self._saved = termios.tcgetattr(self.fd)
        except (termios.error, OSError):
            return self  # not a terminal: nothing to watch
        self._mode(line_mode=False)
        _bracketed_paste(True)
        self._running.set()
        self._thread = threading.Thread(target=self._watch, name="mnemara-ctrl-c", daemon=True)
        self._thread.start()
        return self

    def _watch(self) -> None:
        import os
        import select

        while self._running.is_set():
            if self._pause.is_set():
                time.sleep(0.05)
                continue
            ready, _, _ = select.select([self.fd], [], [], 0.1)
            if ready and not self._pause.is_set() and self._running.is_set():
                self._take(os.read(self.fd, 64))

    def _take(self, data: bytes) -> None:
        """Keys read from the terminal: Ctrl+C interrupts, the rest is typed-ahead text (lines queued)."""
        if b"\x03" in data:
            self.interrupted = True
            self.on_interrupt()
        before = len(self.typed_lines()[0])
        self._typed += data.replace(b"\x03", b"")
        lines = self.typed_lines()[0]
        if self.on_queued is not None:
            for line in lines[before:]:
                self.on_queued(line)

    def drain(self) -> None:
        """Take the keys typed but not read yet (the watcher reads every 0.1 s). Called before a
        permission question: left in the terminal they would silently start its answer line
        (typed with echo off, they never show): a ``y`` typed a moment before the question and
        an Enter meant to refuse it would answer yes."""
        import os
        import select

        if self._saved is None:
            return
        while True:
            ready, _, _ = select.select([self.fd], [], [], 0)
            data = os.read(self.fd, 1024) if ready else b""
            if not data:
                return
            self._take(data)

    def typed_lines(self) -> tuple[list[str], str]:
        """Lines typed during the turn and ended with Enter (queued), and the unfinished rest.

        Backspace is applied; arrows and other control keys are dropped (tabs are kept); blank lines
        are not queued. A bracketed paste is one piece of text: its line breaks stay in it (as at
        the prompt) instead of queueing each pasted line as a message of its own.
        """
        lines: list[str] = []
        out: list[str] = []
        pasting = False
        for piece in _PASTE_MARKS.split(self._typed.decode("utf-8", "replace")):
            if piece in (_PASTE_START, _PASTE_END):
                pasting = piece == _PASTE_START
                continue
            text = _ESCAPES.sub("", piece)
            if pasting:
                text = text.replace("\r\n", "\n").replace("\r", "\n")
            for ch in text:
                if ch in "\r\n" and pasting:
                    out.append("\n")
                elif ch in "\r\n":
                    if "".join(out).strip():
                        lines.append("".join(out))
                    out = []
                elif ch in "\x7f\x08":
                    if out:
                        out.pop()
                elif ch.isprintable() or ch == "\t":
                    out.append(ch)
        return lines, "".join(out)

    def typed_ahead(self) -> str:
        """The unfinished text typed during the turn (the next prompt starts with it)."""
        return self.typed_lines()[1]

    def paused(self) -> "_Paused":
        return _Paused(self)

    def __exit__(self, *exc: object) -> None:
        import termios

        self._running.clear()
        if self._thread is not None:
            self._thread.join(timeout=1)
        if self._saved is not None:
            _bracketed_paste(False)
            termios.tcsetattr(self.fd, termios.TCSANOW, self._saved)


def _bracketed_paste(on: bool) -> None:
    """Ask the terminal to mark pasted text (so a multi-line paste during a turn stays one message)."""
    out = sys.__stdout__
    try:
        if out is not None and out.isatty():
            out.write("\x1b[?2004h" if on else "\x1b[?2004l")
            out.flush()
    except (OSError, ValueError):
        pass


class _Paused:
    def __init__(self, watcher: InterruptWatcher) -> None:
        self.watcher = watcher

    def __enter__(self) -> None:
        self.watcher._pause.set()
        if self.watcher._saved is not None:
            self.watcher.drain()  # keys typed before the question are typed-ahead text, not its answer
            _bracketed_paste(False)  # input() reads the answer: no paste marks in it
            self.watcher._mode(line_mode=True)

    def __exit__(self, *exc: object) -> None:
        if self.watcher._saved is not None and self.watcher._running.is_set():
            self.watcher._mode(line_mode=False)
            _bracketed_paste(True)
        self.watcher._pause.clear()
