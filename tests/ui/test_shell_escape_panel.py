"""``!command`` in the real panel (issue 39): asked with the whole command shown, run only on yes, its output
put into the input with a line in the log; no gives the line back; Escape stops a running one."""
from __future__ import annotations

import time
from pathlib import Path

from textual.widgets import Static

from mnemara.ui.tui.screens.confirm import ConfirmScreen
from tests.tui_support import instance, make_app, type_text, wait_for  # noqa: F401  (fixtures)


async def test_bang_command_is_asked_run_on_yes_and_its_output_goes_into_the_input(make_app, tmp_path: Path):
    app = make_app()
    app.session.cwd = str(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        app.chat_input.focus()
        await type_text(pilot, "!echo hello; ls")
        (tmp_path / "seen.txt").write_text("x")
        await pilot.press("ctrl+s")
        modal = await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen) and app.screen, 10, "the question")
        shown = str(modal.query_one("#confirm-question", Static).render())
        assert "  echo hello; ls\n" in shown and f"in {tmp_path}" in shown
        assert app.session.store.history() == []  # nothing reached the model or the window
        await pilot.press("y")
        await wait_for(pilot, lambda: "I ran this" in app.chat_input.text, 20, "the output in the input")
        assert app.chat_input.text == ("I ran this command in my shell (exit 0):\n$ echo hello; ls\n```\n"
                                       "hello\nseen.txt\n```\n")
        assert "ran by you: echo hello; ls (exit 0, 2 lines of output); the output is in your input" \
            in app.chat_log.plain_text()
        assert app.session.store.history() == [], "the output waits for the user to send it"

        app.chat_input.clear()
        await type_text(pilot, "!touch made.txt")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), 10, "the question")
        await pilot.press("n")
        await pilot.pause()
        assert app.chat_input.text == "!touch made.txt" and not (tmp_path / "made.txt").exists()
        assert "not run: the command is back in the input" in app.chat_log.plain_text()

        app.chat_input.clear()
        await type_text(pilot, "!sleep 30")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), 10, "the question")
        await pilot.press("y")
        await wait_for(pilot, lambda: app._shell_run is not None and app._shell_run._process is not None, 10, "start")
        started = time.monotonic()
        await pilot.press("escape")
        await wait_for(pilot, lambda: app._shell_run is None, 10, "the stopped command")
        assert time.monotonic() - started < 10
        assert "(stopped by you)" in app.chat_input.text and "ran by you: sleep 30 (stopped by you" \
            in app.chat_log.plain_text()

        app.chat_input.clear()
        await type_text(pilot, "!")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.chat_input.text == "!" and "! needs a command" in app.chat_log.plain_text()
