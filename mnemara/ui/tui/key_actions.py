"""The panel's keys for Claude Code habits (issue 27), mixed into :class:`~mnemara.ui.tui.app.MnemaraApp`.

- the input's set-up: history (``.prompt_history``), Tab completion, the send key, and on a first
  run one line saying which keys do what;
- Ctrl+C: during a turn it stops the turn and keeps the panel ("press Ctrl+C again to quit");
  idle, it clears the input (the text goes to the history: Up brings it back) and says a second one
  quits; the second quits when the input is empty or within :data:`CTRL_C_AGAIN_SECONDS`;
- End while the log says "new output below": follow again; Ctrl+R: search the earlier messages;
- a refused command comes back selected, so the next command typed replaces it.
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, cast

from textual.actions import SkipAction

from mnemara.ui.tui.widgets.chat_input import ChatInput, CompletionHint

if TYPE_CHECKING:
    from mnemara.ui.tui.app import MnemaraApp

CTRL_C_STOPS = "stopping the turn: press Ctrl+C again to quit"
CTRL_C_CLEARED = "input cleared (↑ brings it back): press Ctrl+C again to quit"
CTRL_C_AGAIN = "press Ctrl+C again to quit"
#: After an idle Ctrl+C, a second one quits within this many seconds even over new text.
CTRL_C_AGAIN_SECONDS = 2.0
FIRST_RUN_KEYS = "Keys: {keys}. ↑ recalls earlier messages, Ctrl+R searches them, Tab completes"


class PanelKeys:
    """Key handling of the panel; its state (``_ctrl_c_stopping``, ``_ctrl_c_armed_at``, ``_spare_paused``) is
    set up by the app."""

    def _set_up_input(self) -> None:
        """History, completion and the send key for the input; a first run says which keys do what."""
        from mnemara.commands.complete import complete
        from mnemara.commands.keys import describe

        app = cast("MnemaraApp", self)
        field = app.chat_input
        field.prompt_history = app.history
        field.completer = lambda before: complete(app.session, before)
        field.set_send_key(app.bridge.config.send_key)
        if app.tour is None and not app.chat_log.entries and app.history.is_empty():
            app.say(FIRST_RUN_KEYS.format(keys=describe(field.send_key)))
        app._say_history_problem()

    def _say_history_problem(self) -> None:
        app = cast("MnemaraApp", self)
        if app.history.problem:
            app.say(app.history.problem, "error", "error")
            app.history.problem = None

    def on_chat_input_completed(self, event: ChatInput.Completed) -> None:
        app = cast("MnemaraApp", self)
        app._chat_screen.query_one(CompletionHint).show(event.completion, event.current)

    def _give_back_command(self, text: str) -> None:
        """A refused command back in the input, to fix it (or // to send it as a message): selected when
        the input was empty, so the next command typed replaces it instead of being appended to it."""
        app = cast("MnemaraApp", self)
        if app.chat_input.text:
            app.chat_input.put_back(text + "\n")
        else:
            app.chat_input.offer(text)

    def _turn_starts(self) -> None:
        """A turn starts: Ctrl+C stops it again, and spare CLIs are back if a Ctrl+C paused them."""
        app = cast("MnemaraApp", self)
        app._ctrl_c_stopping = False
        app._ctrl_c_armed_at = None
        if app._spare_paused:  # the user stayed after Ctrl+C
            app.session.warm_spare, app._spare_paused = True, False

    async def action_ctrl_c(self) -> None:
        """Ctrl+C: during a turn, stop it and keep the panel (a second Ctrl+C quits); idle, clear the
        input first (as in Claude Code), and quit on a second one."""
        from mnemara.ui.tui.screens.role_editor import RoleEditor

        app = cast("MnemaraApp", self)
        if app.turn_running and not app._ctrl_c_stopping and not app._quitting:
            app._ctrl_c_stopping = True
            if getattr(app.session, "warm_spare", False):  # quitting may be next: no spare CLI for now
                app.session.warm_spare = False
                app._spare_paused = True
            app.say(CTRL_C_STOPS)
            app.notify(CTRL_C_STOPS, timeout=4)
            app._unqueue_to_input()
            app.run_worker(app.cancel_turn(), group="stop")
            return
        if app._quitting or app._ctrl_c_stopping or (isinstance(app.screen, RoleEditor) and app.screen.dirty):
            await app.action_quit_panel()  # (the role editor's first Ctrl+C over unsaved text warns: its own step)
            return
        armed, now = app._ctrl_c_armed_at, time.monotonic()
        text = app.chat_input.text
        if armed is not None and (not text.strip() or now - armed <= CTRL_C_AGAIN_SECONDS):
            await app.action_quit_panel()
            return
        app._ctrl_c_armed_at = now
        if text.strip():
            app.history.add(text)  # cleared, not lost: Up on the empty input brings it back
            app._say_history_problem()
        app.chat_input.take()
        hint = CTRL_C_CLEARED if text.strip() else CTRL_C_AGAIN
        app.say(hint)
        if app.screen is not app._chat_screen:  # a dialog hides the log: say it over the dialog too
            app.notify(hint, timeout=CTRL_C_AGAIN_SECONDS)

    def action_follow_log(self) -> None:
        """End while the log says "new output below": jump down and follow again."""
        app = cast("MnemaraApp", self)
        if not app.chat_log.marker_shown:
            raise SkipAction()
        app.chat_log.follow()

    def action_search_history(self) -> None:
        """Ctrl+R: search the earlier messages; the chosen one replaces the input."""
        from mnemara.ui.tui.screens.history_search import HistorySearch

        app = cast("MnemaraApp", self)
        def chosen(text: str | None) -> None:
            if text is not None:
                app.chat_input.recall_text(text)
            app.chat_input.focus()

        app.push_screen(HistorySearch(app.history), callback=chosen)
