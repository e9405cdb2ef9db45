"""Issue 39's bug list in the real panel (pilot, real session and store; no turn runs here): an idle Ctrl+C
clears first, refused lines come back, Ctrl+V with no clipboard, the Send button after /keys enter, a
send while scrolled up, /tokens 10 asks, Enter on an offered message, a file tool's question."""
from __future__ import annotations

import pytest
from textual.widgets import Button, Static

from mnemara.commands.payloads import Confirm
from mnemara.core.config import Config
from mnemara.guard.request import PermissionRequest
from mnemara.ui.tui.key_actions import CTRL_C_AGAIN, CTRL_C_CLEARED
from mnemara.ui.tui.screens.confirm import ConfirmScreen
from mnemara.ui.tui.screens.permission import PermissionScreen
from mnemara.ui.tui.widgets.chat_input import OFFER_ENTER
from mnemara.ui.tui.widgets.chat_log import LogEntry
from tests.tui_support import instance, make_app, type_text, wait_for  # noqa: F401  (fixtures)

SIZE = (100, 30)


async def test_an_idle_ctrl_c_clears_the_input_and_the_next_on_an_empty_input_quits(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await type_text(pilot, "half a thought")
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.chat_input.text == "" and app.is_running and not app._quitting
        assert app.chat_log.plain_text().rstrip().endswith(CTRL_C_CLEARED)
        assert not app._notifications, "one line in the log, no toast over the input"
        await pilot.press("up")  # cleared, not lost
        assert app.chat_input.text == "half a thought"
        app._ctrl_c_armed_at -= 60  # long after the first Ctrl+C: over text, it clears again
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.chat_input.text == "" and app.is_running and not app._quitting
        await pilot.press("ctrl+c")  # on the empty input: quits
        await wait_for(pilot, lambda: app.session._closed, 20, "the panel to quit")
    assert app.return_code == 0


async def test_a_second_ctrl_c_within_the_window_quits_even_over_new_text_and_a_send_disarms(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.chat_log.plain_text().rstrip().endswith(CTRL_C_AGAIN) and app.is_running
        await type_text(pilot, "/keys")
        await pilot.press("ctrl+s")  # a line sent: the Ctrl+C before it no longer counts
        await pilot.pause()
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.is_running and not app._quitting, "one Ctrl+C after a send does not quit"
        await type_text(pilot, "x")
        await pilot.press("ctrl+c")  # at once, over new text: the second of two quits
        await wait_for(pilot, lambda: app.session._closed, 20, "the panel to quit")


async def test_every_refused_line_comes_back_in_the_input(make_app):
    """`/copy 9` with two code blocks was refused by the command (not the dispatcher) and the line was lost."""
    app = make_app()
    app.session.store.append("user", "show me")
    app.session.store.append("assistant", "one\n```\na = 1\n```\ntwo\n```\nb = 2\n```\n")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await type_text(pilot, "/copy 9")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert "the last answer has 2 code block(s), not 9" in app.chat_log.plain_text()
        assert app.chat_input.text == "/copy 9" and app.chat_input.selected_text == "/copy 9"
        await type_text(pilot, "/resume")  # typing replaces it; a Claude Code name answers what to use
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert "/resume is Claude Code's; Mnemara has none" in app.chat_log.plain_text()
        assert app.chat_input.text == ""


async def test_ctrl_v_with_no_clipboard_says_so_in_one_line_of_the_log(make_app, monkeypatch: pytest.MonkeyPatch):
    import pyperclip

    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setattr(pyperclip, "paste", pyperclip.lazy_load_stub_paste)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+v")
        await pilot.pause()
        said = app.chat_log.entries[-1]
        assert said.kind == "error" and "\n" not in said.text and "http" not in said.text
        assert said.text == ("Ctrl+V: no clipboard available on this system (install xclip, xsel or wl-clipboard); "
                             "paste with your terminal's key instead")
        assert not app._notifications, "no toast over the input"
        assert app.chat_input.text == ""


async def test_the_send_button_names_the_send_key(make_app, instance):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        send = app._chat_screen.query_one("#send", Button)
        assert str(send.label) == "Send ⌃S"
        await type_text(pilot, "/keys enter")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert str(send.label) == "Send ⏎" and Config.load(instance.config_path).send_key == "enter"
        await type_text(pilot, "/keys ctrl+s")
        await pilot.press("enter")
        await pilot.pause()
        assert str(send.label) == "Send ⌃S"


async def test_sending_while_scrolled_up_jumps_to_the_bottom(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        for n in range(80):
            app.chat_log.append(LogEntry("info", "mnemara", f"line {n}"))
        await pilot.pause()
        await pilot.press("pageup", "pageup")
        await pilot.pause()
        log = app.chat_log
        assert not log.following and log.scroll_y < log.max_scroll_y
        await type_text(pilot, "/keys")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert log.following and log.scroll_y == log.max_scroll_y
        assert "the panel's send key" in log.plain_text().splitlines()[-1]


async def test_tokens_10_asks_in_the_panel_and_no_keeps_config_json(make_app, instance):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await type_text(pilot, "/tokens 10")
        await pilot.press("ctrl+s")
        screen = await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen) and app.screen, 10, "the question")
        assert screen is not None
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, ConfirmScreen), 10, "the question to close")
        assert "cancelled: nothing was changed" in app.chat_log.plain_text()
        assert Config.load(instance.config_path).max_window_tokens == 200_000
        assert app.session.config.max_window_tokens == 200_000


def test_the_tokens_question_is_a_confirm_of_the_same_line_with_yes(session_factory):
    from mnemara.commands import dispatch

    result = dispatch(session_factory("tq"), "/tokens 10 --temp")
    assert isinstance(result.payload, Confirm) and result.payload.title == "Set a tiny window?"


async def test_enter_on_an_offered_message_keeps_it_and_says_ctrl_s_sends(make_app):
    """Demo step 1: Enter on the pre-filled, selected "Run date in the shell for me" blanked the line."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.chat_input.offer("Run date in the shell for me")
        await pilot.press("enter")
        await pilot.pause()
        assert app.chat_input.text == "Run date in the shell for me"
        assert app.chat_input.cursor_location == app.chat_input.document.end
        assert app.chat_log.plain_text().rstrip().endswith(OFFER_ENTER)
        await pilot.press("enter")  # no longer selected: Enter is a newline again, as the hint says
        assert app.chat_input.text == "Run date in the shell for me\n"


async def test_a_file_tools_question_shows_the_path_as_the_file_and_a_bash_description_as_words(make_app):
    app = make_app()
    app.permission_screen_options = {"arm_seconds": 0}
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        read = PermissionRequest("Read", "Read", "/home/u/notes/today.txt", {"file_path": "/home/u/notes/today.txt"})
        app.run_worker(app.ask_permission(read))
        modal = await wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen) and app.screen, 10, "the modal")
        assert str(modal.query_one("#permission-summary", Static).render()) == "policy: Read · file"
        assert str(modal.query_one("#permission-target", Static).render()) == "/home/u/notes/today.txt"
        await pilot.press("n")
        await wait_for(pilot, lambda: not isinstance(app.screen, PermissionScreen), 10, "the modal to close")
        bash = PermissionRequest("Bash", "Bash", "ls -la\nrm x", {"command": "ls -la\nrm x", "description": "List project"})
        app.run_worker(app.ask_permission(bash))
        modal = await wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen) and app.screen, 10, "the modal")
        summary = str(modal.query_one("#permission-summary", Static).render())
        assert summary.startswith("policy: Bash · command (2 lines, 11 characters; shown escaped")
        assert str(modal.query_one("#permission-input", Static).render()) == "description: List project"
        await pilot.press("n")
