"""The bare REPL: prompt-toolkit on a terminal, one message per line otherwise.

On a terminal: a ``you>`` prompt with history in the instance's
``.prompt_history``; Ctrl+C during a turn stops it (like ``/stop``), Ctrl+D or
``/quit`` leaves. Not on a terminal (a pipe, a file, a test): every input line
is one message or slash command, the assistant's text goes to stdout, tool
calls, notices and errors go to stderr, and the REPL exits at end of input.
A permission question reads its answer (y/n/a/s) from the next input line;
end of input denies.
"""
from __future__ import annotations

import json
import sys
import threading
from typing import Any, Callable, Iterator, TextIO

from mnemara import events as ev
from mnemara.commands import dispatch, is_command

PREVIEW = 160


def _short(value: Any, limit: int = PREVIEW) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = text.replace("\n", " ⏎ ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


class LineSource:
    """The lines a non-terminal REPL reads: messages and permission answers, in order."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._lock = threading.Lock()

    def next(self) -> str | None:
        """The next line without its newline, or None at end of input."""
        with self._lock:
            line = self._stream.readline()
        if not line:
            return None
        return line.rstrip("\r\n")

    def __iter__(self) -> Iterator[str]:
        while (line := self.next()) is not None:
            yield line


class Renderer:
    """Writes a turn's events: assistant text to ``out``, everything else to ``info``."""

    def __init__(self, out: TextIO, info: TextIO, assistant_name: str = "") -> None:
        self.out, self.info = out, info
        self.assistant_name = assistant_name
        self._streamed = False  # deltas printed since the last complete message
        self._line_open = False

    def _end_line(self) -> None:
        if self._line_open:
            self.out.write("\n")
            self.out.flush()
            self._line_open = False

    def _note(self, text: str) -> None:
        self._end_line()
        self.info.write(text + "\n")
        self.info.flush()

    def __call__(self, event: ev.Event) -> None:
        if isinstance(event, ev.TextDelta):
            self.out.write(event.text)
            self.out.flush()
            self._streamed = self._line_open = True
        elif isinstance(event, ev.AssistantText):
            if not self._streamed and event.text:
                self.out.write(event.text)
                self._line_open = True
            self._streamed = False
            self._end_line()
        elif isinstance(event, ev.ThinkingBlock):
            self._note(f"· thinking: {_short(event.thinking)}")
        elif isinstance(event, ev.ToolUse):
            self._note(f"· tool: {event.name} {_short(event.input)}")
        elif isinstance(event, ev.ToolResult):
            self._note(f"· result{' (error)' if event.is_error else ''}: {_short(event.text)}")
        elif isinstance(event, ev.Halt):
            self._end_line()
            self.out.write(f"{event.reason}\n")
            self.out.flush()
        elif isinstance(event, ev.Notice):
            self._note(f"{event.level}: {event.message}")
        elif isinstance(event, ev.ErrorEvent):
            self._note(f"error: {event.message}")
        elif isinstance(event, ev.TurnDone):
            self._end_line()
            self._streamed = False
            if event.interrupted:
                self._note("(turn interrupted)")


def _permission_answer_line(request: Any) -> str:
    describe = getattr(request, "describe", None)
    what = describe() if callable(describe) else str(request)
    return f"permission: allow {what}? [y]es / [n]o / [a]lways / [s]ession: "


def line_prompt(lines: LineSource, info: TextIO) -> Callable[[Any], str | None]:
    """A permission prompt that reads the answer from the next input line (EOF = deny)."""

    def prompt(request: Any) -> str | None:
        info.write(_permission_answer_line(request) + "\n")
        info.flush()
        answer = lines.next()
        if answer is None:
            info.write("(end of input: denied)\n")
        return answer

    return prompt


def tty_prompt(request: Any) -> str | None:
    """A permission prompt on the terminal (runs in the session's thread while the REPL waits)."""
    try:
        return input(_permission_answer_line(request))
    except EOFError:
        return None


def handle_line(session: Any, line: str, render: Renderer) -> bool:
    """Run one input line (message or slash command). Returns False when the REPL should end."""
    text = line.strip()
    if not text:
        return True
    if is_command(text):
        result = dispatch(session, text)
        if result.text:
            (render.out if result.ok else render.info).write(result.text + "\n")
            (render.out if result.ok else render.info).flush()
        if result.action == "quit":
            return False
        if result.action == "stop":
            session.request_stop()
        if result.action != "send" or not result.data.get("text"):
            return True
        text = str(result.data["text"])  # e.g. /compress smart: the command's turn goes to the agent
    elif text.startswith("//"):
        text = text[1:]
    try:
        session.turn(text, on_event=render)
    except KeyboardInterrupt:
        session.request_stop()
        render.info.write("\n(stopping…)\n")
    return True


def run_piped(session: Any, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    """The non-terminal REPL: one line per message, exit at end of input."""
    lines = LineSource(stdin)
    session.set_permission_prompt(line_prompt(lines, stderr))
    render = Renderer(stdout, stderr, session.config.display_name)
    for line in lines:
        if not handle_line(session, line, render):
            break
    return 0


def run_tty(session: Any, banner: str = "") -> int:
    """The interactive REPL on a terminal (prompt-toolkit, history in .prompt_history)."""
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import FileHistory

    session.set_permission_prompt(tty_prompt)
    prompt = PromptSession(history=FileHistory(str(session.instance.prompt_history_path)))
    render = Renderer(sys.stdout, sys.stdout, session.config.display_name)
    if banner:
        print(banner)
    while True:
        try:
            line = prompt.prompt("you> ")
        except KeyboardInterrupt:
            continue
        except EOFError:
            return 0
        if not _run_interruptible(session, line, render):
            return 0


def _run_interruptible(session: Any, line: str, render: Renderer) -> bool:
    """Like :func:`handle_line`, but a Ctrl+C while the turn runs stops the turn, not the REPL."""
    done = threading.Event()
    outcome: list[bool] = [True]

    def work() -> None:
        try:
            outcome[0] = handle_line(session, line, render)
        except Exception as exc:  # keep the REPL alive; the message is stored already
            render.info.write(f"error: {exc}\n")
        finally:
            done.set()

    worker = threading.Thread(target=work, name="mnemara-repl-turn", daemon=True)
    worker.start()
    while not done.is_set():
        try:
            done.wait(0.1)
        except KeyboardInterrupt:
            if session.request_stop():
                render.info.write("\n(stopping…)\n")
    worker.join()
    return outcome[0]


def run_repl(session: Any, *, stdin: TextIO | None = None, stdout: TextIO | None = None,
             stderr: TextIO | None = None, banner: str = "") -> int:
    """Pick the terminal or the piped REPL for ``stdin``; returns an exit code."""
    stdin = stdin or sys.stdin
    if stdin.isatty() and (stdout or sys.stdout).isatty():
        return run_tty(session, banner)
    return run_piped(session, stdin, stdout or sys.stdout, stderr or sys.stderr)
