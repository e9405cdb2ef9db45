"""The chat panel: ``mnemara run`` opens this Textual app over one ``AgentSession``.

The app only presents. Turns run through ``session.aturn`` in a Textual worker
(so the screen keeps drawing and the input stays usable), slash commands run
through :func:`mnemara.commands.dispatch`, and permission questions from the
session's gate are answered in a modal. The main screen holds the keys
(priority bindings there do not leak into the modal screens).
"""
from __future__ import annotations

import asyncio
import contextlib
import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Button
from textual.worker import Worker, WorkerState

from mnemara.core import events as ev
from mnemara.commands import CommandResult, dispatch, is_command
from mnemara.commands.mentions import PreparedMessage, prepare_message
from mnemara.commands.payloads import Confirm, CopyText, FileShown, HelpColumns, RefusedInput, SendTurn
from mnemara.core.debuglog import log_event
from mnemara.core.errors import UsageError
from mnemara.store.instance import Instance
from mnemara.store.unsent import UnsentMessages
from mnemara.ui.tui.bridge import PanelBridge
from mnemara.ui.tui.screens.permission import PermissionScreen
from mnemara.ui.tui.screens.role_editor import RoleEditor
from mnemara.ui.tui.terminal_input import decode_alt_enter, tolerate_bad_bytes
from mnemara.ui.tui.transcript_view import TurnView, entries_for, error_entry
from mnemara.ui.tui.widgets.button_bar import ButtonBar
from mnemara.ui.prompt_history import PromptHistory
from mnemara.ui.tui.key_actions import PanelKeys
from mnemara.ui.tui.shell_runs import PanelShell
from mnemara.ui.tui.widgets.chat_input import ChatInput, CompletionHint
from mnemara.ui.tui.widgets.chat_log import ChatLog, LogEntry
from mnemara.ui.tui.widgets.panel_header import PanelHeader
from mnemara.ui.tui.widgets.status_line import StatusLine

if TYPE_CHECKING:
    from mnemara.demo.script import Tour
    from mnemara.guard.request import PermissionRequest
    from mnemara.guard.budget import CapState
    from mnemara.commands.session_api import SessionAPI

STOP_GRACE_SECONDS = 5.0
BUSY = "a turn is running: wait, or press Esc (or /stop) to cancel it"
QUEUED = "queued: sent when the current turn ends (Esc cancels the turn and puts it back in the input)"
SessionFactory = Callable[..., Any]


class ChatScreen(Screen):
    """Header, log, status, input, buttons; the panel's keys live here."""

    AUTO_FOCUS = "#input"  # at once, so keys typed as the panel opens land there (the log takes focus too)

    BINDINGS = [
        Binding("ctrl+s", "app.send", "Send"),  # the input binds it too; see ChatInput
        Binding("ctrl+l", "app.clear_log", "Clear log", priority=True),
        Binding("pageup", "app.scroll_log(-1)", "Page up", priority=True, show=False),
        Binding("pagedown", "app.scroll_log(1)", "Page down", priority=True, show=False),
        Binding("escape", "app.escape", "Clear / cancel"),
        Binding("ctrl+r", "app.search_history", "Search earlier messages", show=False),
        # End jumps down only while the log says "new output below" (else it is the input's End)
        Binding("end", "app.follow_log", "Follow the log", priority=True, show=False),
    ]

    def compose(self) -> ComposeResult:
        yield PanelHeader(id="header")
        yield ChatLog(id="log")
        yield StatusLine(id="status")
        yield CompletionHint(id="completions")
        yield ChatInput(id="input")
        yield ButtonBar(id="buttons")


class MnemaraApp(PanelKeys, PanelShell, App[None]):
    #: The screens' style sheets too (each screen still names its own, for use on its own): a screen
    #: whose sheet the app has not read makes Textual re-parse every sheet and restyle every widget
    #: the first time it opens (about 0.1 s of CPU for each of the four dialogs).
    CSS_PATH = ["styles/app.tcss", "styles/dialogs.tcss", "styles/context_viewer.tcss", "styles/permission.tcss",
                "styles/role_editor.tcss"]
    ENABLE_COMMAND_PALETTE = False
    BINDINGS = [Binding("ctrl+c", "ctrl_c", "Quit", show=False, priority=True)]  # from every screen

    def __init__(self, instance: Instance, *, session: SessionAPI | None = None, session_factory: SessionFactory | None = None,
                 tour: Tour | None = None) -> None:
        tolerate_bad_bytes()  # a byte that is not UTF-8 must not kill the keyboard (see terminal_input)
        decode_alt_enter()  # Alt+Enter is a newline key of its own, not Enter (send_key: enter)
        super().__init__()
        self.instance = instance
        self.tour = tour  # mnemara demo: a mnemara.demo.script.Tour that leads the user step by step
        self._last_sent = ""
        self.history = PromptHistory(instance.prompt_history_path)  # the REPL's .prompt_history
        self._ctrl_c_stopping = False  # Ctrl+C stopped the running turn: the next one quits (PanelKeys)
        self._ctrl_c_armed_at: float | None = None  # an idle Ctrl+C cleared the input: when (PanelKeys)
        self._spare_paused = False  # Ctrl+C stopped a turn: no spare CLI started until the next turn
        self._tour_prefill = ""
        self._owns_session = False
        if session is None:
            factory = session_factory
            if factory is None:
                from mnemara.session.agent import AgentSession  # heavy: only when the panel opens

                factory = AgentSession
            session = factory(instance, permission_prompt=self.ask_permission)
            self._owns_session = True
        elif hasattr(session, "set_permission_prompt"):
            session.set_permission_prompt(self.ask_permission)
        self.session: SessionAPI = session
        if getattr(session, "spend", None) is not None:
            session.spend.prompt = self.ask_past_cap  # "continue this turn past the cap? (y once / n)"
        self.bridge = PanelBridge(session)
        self._turn: Worker | None = None
        self._queued: list[tuple[str, int]] = []  # (message, its log entry) typed while a turn ran
        self.unsent = UnsentMessages(instance.root)  # the queue on disk: a panel closed early gives it back
        self._quitting = False
        self._shell_run = None  # a !command running
        self.permission_screen_options: dict[str, Any] = {}  # e.g. arm_seconds (tests)
        self.title = f"mnemara: {instance.name}"

    # -- widgets ---------------------------------------------------------------------
    def get_default_screen(self) -> ChatScreen:
        self._chat_screen = ChatScreen(id="chat")
        return self._chat_screen

    @property
    def chat_log(self) -> ChatLog:
        return self._chat_screen.query_one(ChatLog)

    @property
    def chat_input(self) -> ChatInput:
        return self._chat_screen.query_one(ChatInput)

    def on_mount(self) -> None:
        self.call_after_refresh(self._load)
        self.call_after_refresh(self._start_prewarm)

    def _start_prewarm(self) -> None:
        # the coroutine is made when the worker starts: a panel closed before that leaves none unawaited
        self.prewarm_worker: Worker[None] = self.run_worker(self._prewarm, group="prewarm")

    async def _prewarm(self) -> None:
        """Start the first turn's CLI as the REPL does, once the panel is drawn: the SDK import
        (about 1.5 s of CPU) runs in a thread, then the process is launched on this loop, where
        the turns run."""
        prewarm = getattr(self.session, "aprewarm", None)
        if prewarm is None or not getattr(self.session, "warm_spare", False):
            return
        try:
            await asyncio.to_thread(importlib.import_module, "claude_agent_sdk")
            await prewarm()
        except Exception as exc:  # the first turn then starts its own CLI
            log_event(self.instance.debug_log_path, "prewarm_failed", level="warning", error=repr(exc))

    # -- peer inbox ----------------------------------------------------------------------
    def _start_inbox(self) -> None:
        """Run the peer inbox beside the session when peer poll is configured (the ⚡ Inbox button)."""
        cfg = self.bridge.config
        configured = cfg.peer_db_path or cfg.peer_transport == "nats"
        if not (cfg.peer_poll_enabled and configured) or getattr(self.session, "peer_inbox", None):
            return
        from mnemara.peer import attach_inbox

        # The same wiring as the REPL's: the session wakes the inbox after every turn.
        inbox = attach_inbox(self.session, deliver=self._deliver_peer_turn, is_idle=lambda: not self.turn_running,
                             on_change=lambda _inbox: self.refresh_panel(), on_notice=self.say)
        if inbox is not None:
            inbox.start()

    async def _deliver_peer_turn(self, text: str) -> None:
        """The inbox's deliver(): run the batched peer turn in the panel; raise if it did not complete."""
        if not await self.start_turn(text, who="⚡ inbox").wait():
            raise RuntimeError("the inbox turn did not complete")

    def _load(self) -> None:
        if self._quitting:
            return
        log = self._chat_screen.query_one(ChatLog)
        name = self.bridge.assistant_name
        window = self.bridge.window()
        for turn in [*window.pinned, *window.rows]:
            for entry in entries_for(turn, name):
                log.append(entry)
        waiting = self.bridge.spooled_rows()
        if waiting:
            self.say(f"{waiting} row(s) wait in spool.jsonl (turns.sqlite could not take them when they were sent): "
                     "they are stored, and shown here, with your next message")
        if self.bridge.store_problem:
            self.say(f"cannot show the conversation: {self.bridge.store_problem}. What you send now is kept in "
                     "spool.jsonl and stored once turns.sqlite works again", "error", "error")
        self._set_up_input()
        self.refresh_panel()
        self.chat_input.focus()
        self._restore_unsent()
        # Only now: a peer turn started before the history was drawn would be drawn twice (its user
        # row, stored when the turn starts, read back as history).
        self._start_inbox()
        if self.tour is not None:
            self._show_tour(*self.tour.start())

    def _restore_unsent(self) -> None:
        """Messages queued but never sent when a panel on this instance last closed: back in the input."""
        texts, problem = self.unsent.take()
        if problem:
            self.say(problem, "error", "error")
        if texts:
            self.chat_input.put_back("\n".join(texts) + ("\n" if self.chat_input.text else ""))
            self.say(f"{len(texts)} message(s) not sent when the panel last closed (queued, or left in the input) "
                     "are back in the input (Ctrl+S sends them)")

    def _keep_unsent(self) -> None:
        """Write the queue to unsent.json (every change of it), so no way of closing loses it."""
        problem = self.unsent.keep([text for text, _ in self._queued])
        if problem:
            log_event(self.instance.debug_log_path, "unsent_not_kept", level="warning", error=problem)
            self.say(f"{problem}: the queued message(s) live only in this panel", "error", "error")

    def _show_tour(self, lines: list[str], prefill: str) -> None:
        """The tour's lines, and its step's message in the input, selected: Ctrl+S sends it, typing
        (a /command) replaces it, and it comes back after the command."""
        for line in lines:
            self.say(line, "info", "tour")
        self._tour_prefill = prefill
        self._offer_tour_message()

    def _offer_tour_message(self) -> None:
        if self.tour is not None and self._tour_prefill and not self.tour.done and not self.chat_input.text.strip():
            self.chat_input.offer(self._tour_prefill)

    def refresh_panel(self) -> None:
        """Header, status line and buttons from the current config and store."""
        if self._quitting:
            return
        cfg = self.bridge.config
        screen = self._chat_screen
        screen.query_one(PanelHeader).show(self.instance.name, cfg.model, cfg.role_doc_path)
        screen.query_one(StatusLine).show_status(self.bridge.status(busy=self.turn_running))
        if cfg.send_key != self.chat_input.send_key:
            self.chat_input.set_send_key(cfg.send_key)
        bar = screen.query_one(ButtonBar)
        bar.set_send_key(self.chat_input.send_key)
        bar.set_inbox(self.bridge.inbox_state())

    def say(self, text: str, kind: str = "info", who: str = "mnemara") -> None:
        self.chat_log.append(LogEntry(kind, who, text))

    # -- sending ---------------------------------------------------------------------
    @property
    def turn_running(self) -> bool:
        return self._turn is not None and self._turn.state in (WorkerState.PENDING, WorkerState.RUNNING)

    def action_send(self) -> None:
        """Ctrl+S while the input is not focused: submit through the input, after its pending keys."""
        self.chat_input.submit_in_order()

    @on(ChatInput.Notice)
    def _input_notice(self, event: ChatInput.Notice) -> None:
        if event.error:
            self.say(event.text, "error", "error")
        else:
            self.say(event.text)

    @on(ChatInput.Submitted)
    def _submitted(self, event: ChatInput.Submitted) -> None:
        self._ctrl_c_armed_at = None  # a Ctrl+C before this line no longer counts as the first of two
        self.chat_log.follow()  # sent while scrolled up: the log jumps down to what was sent and its answer
        self.history.add(event.text)
        self._say_history_problem()
        self.send_text(event.text)

    def send_text(self, text: str) -> None:
        """Run a slash command, or start a turn; text refused while a turn runs goes back to the input."""
        if not text.strip() or self.shell_escape(text):
            return
        if is_command(text.strip()):
            busy = self.turn_running
            result = self.run_command(text.strip())
            payload = result.payload
            # every refused line comes back to be fixed: a bad argument, an unknown name, a command's own
            # refusal (/copy 9 with two code blocks), a turn's command while one runs
            if not result.ok or isinstance(payload, RefusedInput) or (busy and isinstance(payload, SendTurn) and payload.text):
                self._give_back_command(text)
            elif self.tour is not None:
                self._offer_tour_message()
            return
        message = text[1:] if text.startswith(("//", "!!")) else text  # "//x" sends "/x", "!!x" "!x" as a message
        prepared = self._prepared(message, text)
        if prepared is None:
            return
        if self.turn_running:
            self.queue_message(message)  # its files are read when it is sent
            return
        self.start_turn(prepared.text, shown=prepared.shown())

    def _prepared(self, message: str, typed: str) -> PreparedMessage | None:
        """``message`` with the files it @mentions attached; a refused one goes back to the input (None)."""
        try:
            return prepare_message(message, self.session.gate, self.session.cwd)
        except UsageError as exc:
            self.chat_input.put_back(typed + ("\n" if self.chat_input.text else ""))
            self.say(f"{exc} (it is back in the input)", "error", "error")
            return None

    def queue_message(self, text: str) -> None:
        """Hold a message typed during a turn; it is sent when the turn ends (shown as queued meanwhile)."""
        index = self.chat_log.append(LogEntry("queued", "queued", text))
        self._queued.append((text, index))
        self._keep_unsent()
        self.notify(QUEUED, timeout=3)
        self.refresh_panel()

    def _send_queued(self) -> None:
        """After a turn: the oldest queued message starts the next turn (its log entry becomes the message)."""
        if not self._queued or self.turn_running or self._quitting:
            return
        text, index = self._queued.pop(0)
        self._keep_unsent()
        prepared = self._prepared(text, text)
        if prepared is None:
            self.chat_log.update_entry(index, text="(back in the input, not sent)")
            self.call_later(self._send_queued)
            return
        self.start_turn(prepared.text, entry=index, shown=prepared.shown())

    def _unqueue_to_input(self) -> None:
        """Esc / stop: queued messages go back into the input, not to the model."""
        if not self._queued:
            return
        texts = [text for text, _ in self._queued]
        for _, index in self._queued:
            self.chat_log.update_entry(index, text="(back in the input, not sent)")
        self._queued.clear()
        self._keep_unsent()
        self.chat_input.put_back("\n".join(texts) + ("\n" if self.chat_input.text else ""))

    def start_turn(self, text: str, who: str = "you", entry: int | None = None, shown: str | None = None) -> Worker:
        """Send ``text``; the log shows ``shown`` for it when given (the message as typed, its attachments
        as one line each)."""
        self._last_sent = text
        self._turn_starts()
        self._turn = self._run_turn(text, who, entry, shown)
        self.refresh_panel()
        return self._turn

    @work(group="turn", exclusive=True, exit_on_error=False)
    async def _run_turn(self, text: str, who: str = "you", entry: int | None = None, shown: str | None = None) -> bool:
        """One turn rendered as it streams; returns True when it completed without error."""
        log = self.chat_log
        queued = log.entry_at(entry) if entry is not None else None
        if entry is None or queued is None:  # a new message (or a queued one whose entry Ctrl+L cleared)
            log.append(LogEntry("user", who, shown or text))
        else:  # a queued message: its entry turns into the sent message
            queued.kind, queued.who = "user", who
            log.update_entry(entry, text=shown or text)
        view = TurnView(log, self.bridge.assistant_name)
        try:
            # aclosing: the session's turn generator is finished here (its `busy` flag cleared) before
            # the worker ends, so the status line drawn on the worker's state change is already idle.
            async with contextlib.aclosing(self.session.aturn(text)) as events:
                async for event in events:
                    view.feed(event)
                    if isinstance(event, ev.ErrorEvent) and event.kind == "unsaved_message" and who == "you":
                        self._give_back(text)  # (an inbox turn's rows stay pending in the peer db instead)
                    if isinstance(event, ev.TurnDone):
                        break
        except asyncio.CancelledError:
            log.append(LogEntry("info", "stopped", "the turn was cancelled"))
            raise
        except Exception as exc:  # the panel must survive whatever the session raises
            log_event(self.instance.debug_log_path, "tui_turn_error", level="error", error=repr(exc))
            log.append(error_entry(f"{type(exc).__name__}: {exc}"))
            return False
        return view.completed

    def _give_back(self, text: str) -> None:
        """A message neither turns.sqlite nor the spool could save goes back to the front of the input,
        and the messages queued after it follow it there (sending them would fail the same way)."""
        self._unqueue_to_input()
        self.chat_input.put_back(text + ("\n" if self.chat_input.text else ""))
        self.say("your message is back in the input (it was not saved): send it again when the disk is writable",
                 "error", "error")

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "turn":
            self.refresh_panel()
            if event.state in (WorkerState.SUCCESS, WorkerState.ERROR):
                if self.tour is not None and event.state == WorkerState.SUCCESS:
                    self._show_tour(*self.tour.after_turn(self._last_sent))
                self.call_later(self._send_queued)

    async def cancel_turn(self) -> bool:
        """Ask the session to stop the running turn; force-cancel the worker if it does not end."""
        worker = self._turn
        if worker is None or not self.turn_running:
            return False
        if isinstance(self.screen, PermissionScreen):
            self.screen.dismiss("n")  # a question nobody will answer now: deny it
        stop = getattr(self.session, "stop", None)
        if stop is not None:
            result = stop()
            if asyncio.iscoroutine(result):
                await result
        try:
            await asyncio.wait_for(asyncio.shield(worker.wait()), STOP_GRACE_SECONDS)
        except Exception:
            worker.cancel()
        return True

    # -- slash commands --------------------------------------------------------------------
    def run_command(self, line: str) -> CommandResult:
        self.chat_log.append(LogEntry("user", "you", line))
        result = dispatch(self.session, line)
        self.handle_result(result)
        self.refresh_panel()
        return result

    def handle_result(self, result: CommandResult) -> None:
        action, payload = result.action, result.payload
        if isinstance(payload, Confirm):
            self._confirm(result.text, payload)
            return
        if action == "offer_role_copy" and isinstance(payload, FileShown):
            self._offer_role_copy(result.text, payload)
            return
        if isinstance(payload, CopyText):
            self._copy(result.text, payload)
            return
        if isinstance(payload, HelpColumns) and payload.rows:
            self.chat_log.append(LogEntry("info", "mnemara", result.text, columns=list(payload.rows)))
            return
        if action == "open_role_editor":
            self.action_open_role()
        elif action == "open_context":
            self.action_open_context()
        elif action == "quit":
            self.run_worker(self.action_quit_panel(), group="quit")
        elif action == "stop":
            self.run_worker(self._stop_from_command(), group="stop")
        elif action == "clear_log":
            self.action_clear_log()
        elif isinstance(payload, SendTurn) and payload.text:
            if self.turn_running:  # not queued: the command decides its turn's text when it runs
                self.say(BUSY, "error", "error")
                return
            if result.text:
                self.say(result.text)
            self.start_turn(payload.text)
            return
        if result.text and action not in ("open_role_editor", "open_context"):
            self.say(result.text, "info" if result.ok else "error", "mnemara" if result.ok else "error")

    def _confirm(self, text: str, confirm: Confirm) -> None:
        """Show what a command would do and run its confirming command on yes (e.g. /compress)."""
        from mnemara.ui.tui.screens.confirm import ConfirmScreen

        command = confirm.command
        self.say(text)

        def answered(choice: str | None) -> None:
            if choice == "yes":
                self.run_command(command)
            else:
                self.say("cancelled: nothing was changed")
            self.chat_input.focus()

        self.push_screen(ConfirmScreen(confirm.title, confirm.question or text, [("yes", confirm.yes_label)]),
                         callback=answered)

    def _offer_role_copy(self, text: str, example: FileShown) -> None:
        from mnemara.ui.tui.screens.confirm import ConfirmScreen

        self.say(text)

        def answered(choice: str | None) -> None:
            if choice == "copy":
                self.run_command("/role_doc copy")
            elif choice == "edit":
                self.action_open_role()
            else:
                self.chat_input.focus()

        question = (f"{example.path}\nis one of the repository's example role docs: editing it changes your "
                    "checkout. Save a copy into this instance and edit the copy?")
        self.push_screen(ConfirmScreen("Edit an example role doc?", question,
                                       [("copy", "Copy into instance, edit it (y)"), ("edit", "Edit the original")]),
                         callback=answered)

    def _copy(self, text: str, copy: CopyText) -> None:
        """/copy: the system clipboard, else the terminal's (OSC 52); the user asked for this copy."""
        from mnemara.ui.tui.clipboard import copy_for_user

        self.say(text + copy_for_user(self, copy.text))

    async def _stop_from_command(self) -> None:
        self._unqueue_to_input()
        if not await self.cancel_turn():
            self.say("no turn is running")

    # -- keys and buttons --------------------------------------------------------------------
    def action_escape(self) -> None:
        if self.stop_shell():
            return
        if self.turn_running:
            self._unqueue_to_input()
            self.run_worker(self.cancel_turn(), group="stop")
        else:
            self.chat_input.clear()

    def action_clear_log(self) -> None:
        self.chat_log.clear()
        self.notify("screen cleared (the stored turns are untouched)", timeout=2)

    def action_scroll_log(self, direction: int) -> None:
        if direction < 0:
            self.chat_log.stop_following()
            self.chat_log.scroll_page_up(animate=False)
        else:
            self.chat_log.scroll_page_down(animate=False)

    def action_open_role(self) -> None:
        self.push_screen(RoleEditor(Path(self.bridge.role_path())))

    def action_open_context(self) -> None:
        from mnemara.ui.tui.screens.context_viewer import ContextViewer  # tabs, lists: loaded when first opened

        self.push_screen(ContextViewer(self.bridge), callback=lambda _: self.refresh_panel())

    async def action_quit_panel(self) -> None:
        """Stop a running turn (its partial answer is stored), stop the inbox, close the session, exit."""
        if self._quitting:
            return
        if isinstance(self.screen, RoleEditor) and not self.screen.confirm_quit():
            return
        self._quitting = True
        self.stop_shell()
        inbox = getattr(self.session, "peer_inbox", None)
        if inbox is not None:
            await inbox.aclose()
        if self.turn_running:
            if getattr(self.session, "warm_spare", False):
                self.session.warm_spare = False  # no next turn: the stopped one must not start a CLI for it
            await self.cancel_turn()
        # Queued messages (and what Escape put back in the input, or was typed there) wait for the next
        # panel. Kept before the session closes, which can take seconds: a window closed meanwhile loses nothing.
        draft = self.chat_input.text
        unsent = [text for text, _ in self._queued] + ([draft] if draft.strip() else [])
        problem = self.unsent.keep(unsent)
        await self._close_session()
        message = (f"{len(unsent)} unsent message(s) (queued, or left in the input) are kept in {self.unsent.path} "
                   "and put back in the input when the panel opens again") if unsent else None
        if unsent and problem:
            message = f"{problem}: {len(unsent)} unsent message(s) could not be kept:\n\n" + "\n\n".join(unsent)
        self.exit(message=Text(message) if message else None)

    async def _close_session(self) -> None:
        """Close the session on this loop (its CLI processes live here)."""
        close = getattr(self.session, "aclose", None) or getattr(self.session, "close", None)
        if close is None:
            return
        try:
            result = close()
            if asyncio.iscoroutine(result):
                await result
        except Exception as exc:
            log_event(self.instance.debug_log_path, "tui_close_error", level="error", error=repr(exc))

    async def on_unmount(self) -> None:
        """However the app ends, a session it made itself is closed and the inbox stopped."""
        inbox = getattr(self.session, "peer_inbox", None)
        if inbox is not None:
            await inbox.aclose()
        if self._owns_session:
            await self._close_session()

    @on(Button.Pressed, "#buttons Button")
    def _refocus_input(self) -> None:
        """After any button of the bar the input has the focus again (typing is never lost on a button)."""
        self.chat_input.focus()

    @on(Button.Pressed, "#send")
    def _send_button(self) -> None:
        self.chat_input.submit_in_order()

    @on(Button.Pressed, "#role")
    def _role_button(self) -> None:
        self.run_command("/role_doc")

    @on(Button.Pressed, "#context")
    def _context_button(self) -> None:
        self.run_command("/context")

    @on(Button.Pressed, "#compress")
    def _compress_button(self) -> None:
        self.run_command("/compress")

    @on(Button.Pressed, "#inbox")
    def _inbox_button(self) -> None:
        self.run_command("/inbox")

    @on(Button.Pressed, "#quit")
    async def _quit_button(self) -> None:
        await self.action_quit_panel()

    @on(RoleEditor.Saved)
    def _role_saved(self, event: RoleEditor.Saved) -> None:
        if self.bridge.config.role_doc_path != str(event.path):
            self.session.update_config(role_doc_path=str(event.path))
        self.bridge.log("role_doc_saved", path=str(event.path))
        self.refresh_panel()

    # -- permission prompt (called by the session's gate) ------------------------------------
    async def ask_permission(self, request: PermissionRequest) -> str:
        """Show the modal and wait for y/n/a/s; safe to call from the app's loop or another thread."""
        loop = self._loop
        if loop is not None and asyncio.get_running_loop() is not loop:
            future = asyncio.run_coroutine_threadsafe(self._ask(request), loop)
            return await asyncio.wrap_future(future)
        return await self._ask(request)

    async def ask_past_cap(self, cap: CapState) -> bool:
        """A spend cap was reached mid-turn: ask whether one more request may go (Esc / n: no)."""
        loop = self._loop
        if loop is not None and asyncio.get_running_loop() is not loop:
            future = asyncio.run_coroutine_threadsafe(self._ask_past_cap(cap), loop)
            return await asyncio.wrap_future(future)
        return await self._ask_past_cap(cap)

    async def _ask_past_cap(self, cap: CapState) -> bool:
        from mnemara.guard.budget import question
        from mnemara.ui.tui.screens.confirm import ConfirmScreen

        answer: asyncio.Future[bool] = asyncio.get_running_loop().create_future()

        def done(choice: str | None) -> None:
            if not answer.done():
                answer.set_result(choice == "once")

        self.push_screen(ConfirmScreen("Spend cap reached", question(cap), [("once", "Continue once (y)")]),
                         callback=done)
        return await answer

    async def _ask(self, request: PermissionRequest) -> str:
        answer: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        screen = PermissionScreen(request, **self.permission_screen_options)

        def done(choice: str | None) -> None:
            if screen.held_keys:  # typed into a message as the question appeared: back where they were going
                self.chat_input.insert("".join(screen.held_keys))
                self.notify("the keys typed as the permission question appeared are back in the input", timeout=3)
            if not answer.done():
                answer.set_result(choice or "n")

        self.push_screen(screen, callback=done)
        return await answer
