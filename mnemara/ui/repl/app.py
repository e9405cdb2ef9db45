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
import os
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, TextIO

from mnemara.core import events as ev
from mnemara.commands import CommandResult, dispatch, is_command
from mnemara.commands.mentions import prepare_message
from mnemara.commands.payloads import Confirm, CopyText, HelpColumns, SendTurn
from mnemara.commands.shell_escape import ShellRun, question, shell_command
from mnemara.core.errors import UsageError
from mnemara.core.display import terminal_safe
from mnemara.guard.budget import question as budget_question
from mnemara.ui.text.readable import preview_lines, readable_result
from mnemara.ui.repl.inbox import ReplInbox
from mnemara.ui.repl.keys import InterruptWatcher
from mnemara.ui.repl.inbox import stdout as repl_stdout

if TYPE_CHECKING:
    from prompt_toolkit import PromptSession

    from mnemara.guard.request import PermissionRequest
    from mnemara.commands.session_api import SessionAPI

PREVIEW = 160


def _short(value: object, limit: int = PREVIEW) -> str:
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
    """Writes a turn's events: assistant text to ``out``, everything else to ``info``.

    With ``markdown`` (the terminal REPL) assistant text is drawn as Markdown,
    block by block as it completes (:class:`mnemara.ui.repl.markdown.MarkdownStream`);
    piped output stays the raw text. ``ask`` answers yes/no questions (e.g. /compress).
    ``code_blocks`` collects the code blocks drawn, numbered across the session (``/copy N``).
    """

    def __init__(self, out: TextIO, info: TextIO, assistant_name: str = "", stream: bool = True,
                 markdown: bool = False, ask: Callable[[str], str | None] | None = None,
                 code_blocks: list[str] | None = None) -> None:
        self.out, self.info = out, info
        self.code_blocks = code_blocks if code_blocks is not None else []
        self.turns = 0  # turns drawn to the end, and how many of them ended in an error (the exit code)
        self.failed_turns = 0
        self.assistant_name = assistant_name
        self.stream = stream  # False: print each message whole (inbox turns above a live prompt)
        self.markdown = markdown
        self.ask = ask
        self._md: Any = None
        self._streamed = False  # deltas printed since the last complete message
        self._line_open = False
        #: A line refused before it was sent (an @mention that cannot be attached), or a !command's output: the
        #: prompt offers it next.
        self.given_back = ""
        self.shell_run: ShellRun | None = None  # a !command running (Ctrl+C stops it)

    def refused(self, line: str, why: str) -> None:
        """A message refused before it was sent: say why in one line and keep it to give back."""
        self.given_back = line
        self.failed_turns += 1  # a script must see it (the exit code), as a message that got no answer
        self.info.write(terminal_safe(f"error: {why}") + "\n")
        self.info.flush()

    def _markdown(self, text: str, final: bool) -> None:
        if self._md is None:
            import shutil

            from mnemara.ui.repl.markdown import MarkdownStream

            self._md = MarkdownStream(self.out, shutil.get_terminal_size().columns, self.code_blocks)
        self._md.feed(text)
        if final:
            self._md.flush()
            self._md = None
        self.out.flush()

    def command_result(self, result: CommandResult) -> None:
        """A slash command's answer: /help in two columns at this width, copies, confirmations."""
        text = result.text
        if result.ok and isinstance(result.payload, HelpColumns) and result.payload.rows and self.markdown:
            import shutil

            from mnemara.commands.core import columns_text

            text = columns_text(list(result.payload.rows), shutil.get_terminal_size().columns)
        if isinstance(result.payload, CopyText):
            from mnemara.ui.tui.clipboard import ClipboardUnavailable, copy_text

            try:
                copy_text(result.payload.text)
            except ClipboardUnavailable as exc:
                result = CommandResult(str(exc), ok=False)
                text = result.text
        if text:  # a command may show what the agent wrote (/proposals N, /context): never obeyed as controls
            (self.out if result.ok else self.info).write(terminal_safe(text) + "\n")
            (self.out if result.ok else self.info).flush()

    def _end_line(self) -> None:
        if self._line_open:
            self.out.write("\n")
            self.out.flush()
            self._line_open = False

    def _note(self, text: str) -> None:
        self._end_line()
        self.info.write(terminal_safe(text) + "\n")
        self.info.flush()

    def __call__(self, event: ev.Event) -> None:
        """Draw one event. Text from the model or a tool is written through :func:`terminal_safe`:
        its control characters are shown, never obeyed by the terminal."""
        if isinstance(event, ev.TextDelta):
            if not self.stream:
                return
            self._streamed = True
            if self.markdown:
                self._markdown(terminal_safe(event.text), final=False)
                return
            self.out.write(terminal_safe(event.text))
            self.out.flush()
            self._line_open = True
        elif isinstance(event, ev.AssistantText):
            if self.markdown:
                self._markdown("" if self._streamed else terminal_safe(event.text), final=True)
                self._streamed = False
                return
            if not self._streamed and event.text:
                self.out.write(terminal_safe(event.text))
                self._line_open = True
            self._streamed = False
            self._end_line()
        elif isinstance(event, ev.ThinkingBlock):
            self._note(f"· thinking: {_short(event.thinking)}")
        elif isinstance(event, ev.ToolUse):
            self._note(f"· tool: {event.name} {_short(event.input)}")
        elif isinstance(event, ev.ToolResult):
            text = preview_lines(readable_result(event.content), lines=3, width=PREVIEW)
            self._note(f"· result{' (error)' if event.is_error else ''}: " + text.replace("\n", "\n    "))
        elif isinstance(event, ev.Halt):
            self._end_line()
            self.out.write(f"{terminal_safe(event.reason)}\n")
            self.out.flush()
        elif isinstance(event, ev.Notice):
            self._note(f"{event.level}: {event.message}")
        elif isinstance(event, ev.ErrorEvent):
            self._note(f"error: {event.message}")
        elif isinstance(event, ev.TurnDone):
            self.turns += 1
            self.failed_turns += event.error is not None
            self._end_line()
            self._streamed = False
            if event.interrupted:
                self._note("(turn interrupted)")


def has_colour(stream: TextIO) -> bool:
    """Whether ``stream`` is a terminal that takes colour (not when NO_COLOR is set or TERM is dumb)."""
    if os.environ.get("NO_COLOR") or os.environ.get("TERM", "") == "dumb":
        return False
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _permission_answer_line(request: PermissionRequest, color: bool = False) -> str:
    """The question: target whole (escaped, with its line count), an Edit's or Write's diff (coloured with
    ``color``), answer keys last so they stay on screen."""
    question = getattr(request, "question", None)
    if callable(question):
        return str(question(color=True)) if color else str(question())
    return f"permission: allow {request}? [y]es / [n]o / [a]lways / [s]ession: "


def line_prompt(lines: LineSource, info: TextIO) -> Callable[[Any], str | None]:
    """A permission prompt that reads the answer from the next input line (EOF = deny).

    A next line that is not an answer (y/n/a/s, yes/no/always/session) denies the call; it is
    not sent as a message either (a mistyped answer must not start a turn), and one line says so,
    naming it, so a script that lost a message to a question it did not expect can tell.
    """
    from mnemara.guard.gate import ANSWERS

    def prompt(request: PermissionRequest) -> str | None:
        info.write(_permission_answer_line(request, has_colour(info)) + "\n")
        info.flush()
        answer = lines.next()
        if answer is None:
            info.write("(end of input: denied)\n")
        elif answer.strip().lower() not in ANSWERS:
            info.write(f"(the answer line {json.dumps(_short(answer, 80), ensure_ascii=False)} is not y/n/a/s: "
                       "denied; that line is not sent as a message)\n")
            info.flush()
        return answer

    return prompt


def tty_prompt_for(watcher_ref: list) -> Callable[[Any], str | None]:
    """A permission prompt on the terminal (runs in the session's thread while the REPL waits)."""

    def prompt(request: PermissionRequest) -> str | None:
        watcher = watcher_ref[0] if watcher_ref else None
        try:
            if watcher is None:
                return input(_permission_answer_line(request, has_colour(sys.stdout)))
            with watcher.paused():
                answer = input(_permission_answer_line(request, has_colour(sys.stdout)))
            return None if "\x03" in answer else answer
        except EOFError:
            return None

    return prompt


def handle_line(session: SessionAPI, line: str, render: Renderer, inbox: ReplInbox | None = None) -> bool:
    """Run one input line (message or slash command). Returns False when the REPL should end.

    With a peer ``inbox`` (:class:`mnemara.ui.repl.inbox.ReplInbox`) no inbox turn starts
    while the line is handled, and a running one is waited for first.
    """
    if inbox is None or not line.strip():
        return _handle_line(session, line, render)
    with inbox.user_line():
        return _handle_line(session, line, render)


def _handle_line(session: SessionAPI, line: str, render: Renderer) -> bool:
    text = line.strip()
    if not text:
        return True
    if _shell_escape(session, line, render):
        return True
    if is_command(text):
        result = dispatch(session, text)
        render.command_result(result)
        if isinstance(result.payload, Confirm):
            answer = render.ask("apply? [y/N] ") if render.ask else None
            if (answer or "").strip().lower() in ("y", "yes"):
                render.command_result(dispatch(session, result.payload.command))
            else:
                render.info.write("cancelled: nothing was changed\n" if answer is not None
                                  else f"to apply: {result.payload.command}\n")
                render.info.flush()
            return True
        if result.action == "quit":
            return False
        if result.action == "stop":
            session.request_stop()
        if not isinstance(result.payload, SendTurn) or not result.payload.text:
            return True
        text = result.payload.text  # e.g. /compress smart: the command's turn goes to the agent
    elif text.startswith(("//", "!!")):  # "//x" sends "/x", "!!x" "!x" as a message
        text = text[1:]
    if not is_command(line.strip()):  # a message typed as such (not a command's turn): attach its @files
        try:
            prepared = prepare_message(text, session.gate, session.cwd)
        except UsageError as exc:
            render.refused(line, str(exc))
            return True
        for attachment in prepared.attachments:
            render.info.write(terminal_safe(attachment.summary()) + "\n")
        render.info.flush()
        text = prepared.text
    try:
        session.turn(text, on_event=render)
    except KeyboardInterrupt:
        session.request_stop()
        render.info.write("\n(stopping…)\n")
        deadline = time.monotonic() + 30
        while session.busy and time.monotonic() < deadline:  # let the stop land before the next line
            time.sleep(0.05)
    _cost_line(session, render)
    return True


def _shell_escape(session: SessionAPI, line: str, render: Renderer) -> bool:
    """A ``!command`` line (True): asked, run on yes, its output offered at the next prompt (printed when piped)."""
    try:
        command = shell_command(line)
    except UsageError as exc:
        render.refused(line, str(exc))
        return True
    if command is None:
        return False
    answer = render.ask(question(command, session.cwd) + "\nrun it? [y/N] ") if render.ask else None
    if (answer or "").strip().lower() not in ("y", "yes"):
        render.info.write("not run\n")
        render.info.flush()
        render.given_back = line
        return True
    run = render.shell_run = ShellRun(command, session.cwd)
    try:
        run.run()
    finally:
        render.shell_run = None
    render.info.write(terminal_safe(run.summary()) + "\n")
    render.info.flush()
    if render.markdown:  # a terminal: the output is the next prompt's text, to edit and send
        render.given_back = run.for_input()
    else:
        render.out.write(run.for_input())
        render.out.flush()
    return True


def _cost_line(session: SessionAPI, render: Renderer) -> None:
    """The REPL's status line after a turn that spent something: what it and the session cost (the spend
    ledger). A turn that cost nothing (refused before any token, a missing key) keeps its one error line."""
    try:
        view = session.spend.view()
    except Exception:  # a damaged spend.sqlite never ends the REPL; /cost says what is wrong
        return
    if not view.last_turn_usd:
        return
    forms = view.status_forms()
    render.info.write(f"· {forms[0]}\n")
    render.info.flush()


def run_piped(session: SessionAPI, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    """The non-terminal REPL: one line per message, exit at end of input.

    Bytes that are not UTF-8 do not end the REPL: they reach the session as surrogate
    escapes, which it stores and sends as U+FFFD (and says so).
    """
    if getattr(stdin, "errors", None) == "strict" and hasattr(stdin, "reconfigure"):
        stdin.reconfigure(errors="surrogateescape")
    lines = LineSource(stdin)
    session.warn_to_stderr = False  # the renderer prints Notice events to stderr itself
    name = session.config.display_name

    def ask(question: str) -> str | None:
        """A yes/no question (e.g. /compress) answered by the next line; one that is neither is said
        not to be sent as a message."""
        stderr.write(question + "\n")
        stderr.flush()
        answer = lines.next()
        if answer is not None and answer.strip().lower() not in ("y", "yes", "n", "no", ""):
            stderr.write(f"(the answer line {json.dumps(_short(answer, 80), ensure_ascii=False)} is not y/n: taken as "
                         "no; that line is not sent as a message)\n")
            stderr.flush()
        return answer

    render = Renderer(stdout, stderr, name, ask=ask)
    inbox = ReplInbox.attach(session, lambda: Renderer(stdout, stderr, name), lambda: stderr)
    prompt = line_prompt(lines, stderr)
    session.set_permission_prompt(inbox.guard_prompt(prompt) if inbox else prompt)
    session.spend.prompt = lambda cap: _yes(ask(budget_question(cap)))
    if inbox is not None:
        inbox.settle()  # the first fixed point waits for the transport (NATS) to be connected
        stderr.write(inbox.banner() + " (delivered before each input line, while waiting for input and at "
                     "end of input)\n")
        inbox.start()  # messages that arrive while the REPL waits for a line go out then
    try:
        while True:
            if inbox is not None:
                inbox.step()  # peer rows pending now are delivered between input lines
            line = lines.next()
            if line is None:
                if inbox is not None:
                    inbox.settle()  # end of input: what is waiting (on the server too) goes out before the exit
                    inbox.step()
                break
            if not handle_line(session, line, render, inbox):
                break
    finally:
        if inbox is not None:
            inbox.close()
    return 1 if render.failed_turns else 0  # a script must see that a message got no answer (its error said why)


def _yes(answer: str | None) -> bool:
    """A y/n answer: only y or yes is yes (end of input, Ctrl+C or anything else: no)."""
    return (answer or "").strip().lower() in ("y", "yes")


def _history(path: Path) -> Any:
    """The prompt history file, or a history kept in memory when that file is a link (prompt-toolkit
    appends through links: a planted .prompt_history -> ~/.bashrc would get every line typed)."""
    from prompt_toolkit.history import FileHistory, InMemoryHistory

    from mnemara.core.fsutil import LinkRefused, check_no_links
    from mnemara.ui.prompt_history import append_entry

    try:
        check_no_links(path)
    except LinkRefused as exc:
        print(f"mnemara: {terminal_safe(str(exc))}; the prompt history is kept in memory only", file=sys.stderr)
        return InMemoryHistory()

    class KeptHistory(FileHistory):
        """prompt-toolkit's file history, written as the panel writes it: each entry cut at 64 KB with
        a note, never through a link planted after start (prompt-toolkit's own append follows one)."""

        def store_string(self, string: str) -> None:
            try:
                append_entry(path, string)
            except OSError as exc:
                print(f"mnemara: {terminal_safe(str(exc))}; this entry is kept in memory only", file=sys.stderr)

    return KeptHistory(str(path))


def run_tty(session: SessionAPI, banner: str = "") -> int:
    """The interactive REPL on a terminal (prompt-toolkit, history in .prompt_history)."""
    from prompt_toolkit import PromptSession

    watcher_ref: list[InterruptWatcher] = []
    session.warn_to_stderr = False
    name = session.config.display_name
    inbox = ReplInbox.attach(session, lambda: Renderer(repl_stdout(), repl_stdout(), name, stream=False),
                              repl_stdout)
    ask = tty_prompt_for(watcher_ref)
    session.set_permission_prompt(inbox.guard_prompt(ask) if inbox else ask)
    session.spend.prompt = lambda cap: _yes(confirm(budget_question(cap) + " "))
    from mnemara.ui.repl.completion import SlashCompleter

    prompt: PromptSession[str] = PromptSession(history=_history(session.instance.prompt_history_path),
                                               completer=SlashCompleter(session), complete_while_typing=False)
    if banner:
        print(banner)

    def confirm(question: str) -> str | None:
        """A yes/no question during a command (the key watcher hands the terminal back in line mode)."""
        watcher = watcher_ref[0] if watcher_ref else None
        try:
            if watcher is None:
                return input(question)
            with watcher.paused():
                return input(question)
        except EOFError:
            return None

    codes: list[str] = []  # code blocks drawn, numbered across the session: /copy N takes block N
    session.shown_code_blocks = codes
    if inbox is None:
        return _tty_loop(session, prompt, Renderer(sys.stdout, sys.stdout, name, markdown=True, ask=confirm,
                                                   code_blocks=codes),
                         watcher_ref, None)
    from prompt_toolkit.patch_stdout import patch_stdout

    print(inbox.banner())
    try:
        with patch_stdout(raw=True):  # inbox turns print above the prompt while you type
            inbox.start()
            return _tty_loop(session, prompt, Renderer(repl_stdout(), repl_stdout(), name, markdown=True, ask=confirm,
                                                       code_blocks=codes),
                             watcher_ref, inbox)
    finally:
        inbox.close()


def _tty_loop(session: SessionAPI, prompt: PromptSession[str], render: Renderer, watcher_ref: list[InterruptWatcher],
              inbox: ReplInbox | None) -> int:
    from mnemara.store.unsent import UnsentMessages

    # Queued lines live in unsent.json until they are sent, or are back at a prompt that took them
    # (accepted or cleared): a terminal closed meanwhile loses nothing; the next REPL offers them.
    unsent = UnsentMessages(session.instance.root)
    back, problem = unsent.read()
    if problem:
        render.info.write(f"warning: {problem}\n")
    if back:
        render.info.write(f"{len(back)} message(s) queued but not sent when the REPL last closed are back at the "
                          "prompt\n")
    render.info.flush()
    typed = " ".join(back)
    queued: list[str] = []  # lines typed and entered while a turn ran: sent one by one when it ends

    def keep(texts: list[str]) -> None:
        failed = unsent.keep(texts)
        if failed:
            render.info.write(f"\r\nwarning: {failed}\r\n")
            render.info.flush()

    while True:
        if queued:
            line = queued.pop(0)
            keep(queued)
            _remember(prompt, line)  # in the history like a line entered at the prompt (Up recalls it)
            render.info.write(f"you> {line}   (queued, sending now)\n")
            render.info.flush()
        else:
            try:
                line = prompt.prompt("you> ", default=typed)
            except KeyboardInterrupt:
                if inbox is not None:
                    inbox.stop_running_turn()
                continue
            except EOFError:  # Ctrl+D on an empty line: what was given back was cleared on purpose
                if typed:
                    keep([])
                return 0
            if typed:
                keep([])  # the text given back is the line just accepted (as edited)

        def interrupt() -> None:
            if render.shell_run is not None:
                render.shell_run.stop()
                return
            if session.request_stop():
                render.info.write("\r\n(stopping…)\r\n")
                render.info.flush()

        def on_queued(text: str) -> None:
            pending.append(text)
            keep([*queued, *pending])
            render.info.write(f"\r\n(queued: {text!r}; sent when this turn ends, Ctrl+C cancels)\r\n")
            render.info.flush()

        pending: list[str] = []
        with InterruptWatcher(interrupt, on_queued=on_queued) as watcher:
            watcher_ref[:] = [watcher]
            try:
                keep_going = handle_line(session, line, render, inbox)
            finally:
                watcher_ref.clear()
        new_lines, typed = watcher.typed_lines()
        if render.given_back:  # refused before it was sent: back at the prompt, before what was typed since
            typed, render.given_back = " ".join(filter(None, [render.given_back.strip(), typed])), ""
        if watcher.interrupted:  # a stopped turn does not fire the queue: the lines come back to the prompt
            typed = " ".join([*queued, *new_lines, typed]).strip()
            queued = []
            keep([typed] if typed else [])
        else:
            queued += new_lines
            keep(queued)
        if not keep_going:
            return 0


def _remember(prompt: PromptSession[str], line: str) -> None:
    """Add a line that did not come through the prompt (a queued one) to its history file."""
    try:
        prompt.history.append_string(line)
    except (OSError, AttributeError):
        pass


def run_repl(session: SessionAPI, *, stdin: TextIO | None = None, stdout: TextIO | None = None,
             stderr: TextIO | None = None, banner: str = "") -> int:
    """Pick the terminal or the piped REPL for ``stdin``; returns an exit code."""
    stdin = stdin or sys.stdin
    session.prewarm()  # the first turn's CLI starts while the user types
    waiting = session.spooled_rows() if hasattr(session, "spooled_rows") else 0
    if waiting:
        (stderr or sys.stderr).write(f"{waiting} row(s) wait in spool.jsonl (turns.sqlite could not take them when "
                                     "they were sent): they are stored with your next message\n")
    if stdin.isatty() and (stdout or sys.stdout).isatty():
        return run_tty(session, banner)
    return run_piped(session, stdin, stdout or sys.stdout, stderr or sys.stderr)
