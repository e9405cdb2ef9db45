"""``!command`` in the panel (issue 39), mixed into :class:`~mnemara.ui.tui.app.MnemaraApp`.

The command is shown whole and escaped in a question; on the user's yes it runs off the UI thread
(:class:`mnemara.commands.shell_escape.ShellRun`), Escape stops it (its whole process group), and its
output lands in the input, with a line in the log saying so. On no, the line comes back to the input.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, cast

from mnemara.commands.shell_escape import ShellRun, question, shell_command
from mnemara.core.errors import UsageError
from mnemara.ui.tui.widgets.chat_log import LogEntry

if TYPE_CHECKING:
    from mnemara.ui.tui.app import MnemaraApp


class PanelShell:
    """``!command`` handling; the app sets ``_shell_run`` (the command running, or None) up."""

    _shell_run: ShellRun | None

    def shell_escape(self, text: str) -> bool:
        """Handle ``text`` when it is a ``!command`` (True), else leave it alone (False)."""
        app = cast("MnemaraApp", self)
        try:
            command = shell_command(text)
        except UsageError as exc:
            app.chat_input.put_back(text)
            app.say(str(exc), "error", "error")
            return True
        if command is None:
            return False
        if self._shell_run is not None:
            app.chat_input.put_back(text)
            app.say("a ! command is still running (Esc stops it); this one is back in the input", "error", "error")
            return True
        from mnemara.ui.tui.screens.confirm import ConfirmScreen

        app.chat_log.append(LogEntry("user", "you", text))
        cwd = app.session.cwd

        def answered(choice: str | None) -> None:
            app.chat_input.focus()
            if choice != "run":
                app.chat_input.put_back(text)
                app.say("not run: the command is back in the input")
                return
            run = self._shell_run = ShellRun(command, cwd)
            app.say("running in your shell (Esc stops it)…")
            app.run_worker(lambda: self._shell_done(run.run()), thread=True, group="shell")

        app.push_screen(ConfirmScreen("Run a command in your shell?", question(command, cwd), [("run", "Run (y)")]),
                        callback=answered)
        return True

    def _shell_done(self, run: ShellRun) -> None:
        cast("MnemaraApp", self).call_from_thread(self._show_shell_output, run)

    def _show_shell_output(self, run: ShellRun) -> None:
        app = cast("MnemaraApp", self)
        self._shell_run = None
        app.chat_input.put_back(run.for_input())
        app.say(run.summary(), "info" if run.exit_code == 0 and not run.stopped else "error")
        app.chat_input.focus()

    def stop_shell(self) -> bool:
        """Escape: stop the ``!command`` running (True), or there is none (False)."""
        run = self._shell_run
        if run is None:
            return False
        run.stop()
        return True
