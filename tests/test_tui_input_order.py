"""Ctrl+S sends everything typed before it, even when the keys arrive in one burst.

A terminal delivers a pasted or quickly typed line and the Ctrl+S after it in
one read; the panel must not send a prefix and leave the rest in the input.
"""
from __future__ import annotations

from typing import Any

import pytest
from textual import events

from mnemara.testing import reply

from tests.tui_support import instance, make_app, wait_for  # noqa: F401  (fixtures)

pytestmark = pytest.mark.e2e
SIZE = (110, 34)


def burst(app: Any, text: str) -> None:
    """Queue every key and then Ctrl+S at once, as the terminal driver does (no pauses between them)."""
    for char in text:
        key = "space" if char == " " else char
        app.post_message(events.Key(key, char))
    app.post_message(events.Key("ctrl+s", None))


async def test_a_slash_command_typed_in_a_burst_runs_whole(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.chat_input.focus()
        burst(app, "/models")
        await wait_for(pilot, lambda: "haiku" in app.chat_log.plain_text(), timeout=20, what="the /models answer")
        assert app.chat_input.text == ""
        assert "you: /models" in app.chat_log.plain_text()


async def test_role_editor_ctrl_s_right_after_a_burst_saves_the_whole_text(make_app, instance):
    from mnemara.ui.tui.screens.role_editor import RoleEditor

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.chat_input.focus()
        burst(app, "/role_doc")
        editor = await wait_for(pilot, lambda: isinstance(app.screen, RoleEditor) and app.screen, 20, "editor")
        await pilot.pause()
        burst(app, "Be terse and check your work twice.")
        await wait_for(pilot, lambda: instance.role_copy_path.exists(), 20, "the saved role doc")
        assert editor.editor.text == "Be terse and check your work twice."
    assert instance.role_copy_path.read_text(encoding="utf-8") == "Be terse and check your work twice."


async def test_a_burst_then_ctrl_s_sends_the_whole_text_and_text_sent_during_a_turn_waits_for_it(
        scripted_api, make_app):
    """Three behaviours through one CLI (kept between the clean turns), each phase's assertions named:

    1. Ctrl+S right after a burst of keys sends the whole text;
    2. text sent while a turn runs is queued, and sent when the turn ends;
    3. Escape cancels the running turn and puts the queued text back in the input, unsent.
    """
    message = "hello, what can you do? " * 4
    scripted_api.push(reply("I can do several things."),
                      reply("slow " * 20, delay=0.1, chunk_size=5), reply("answer to the queued one"),
                      reply("slow " * 40, delay=0.2, chunk_size=5))
    app = make_app()
    history = app.session.store.history

    def user_rows() -> list[str]:
        return [r.text for r in history() if r.role == "user"]

    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.chat_input.focus()
        burst(app, message)
        await wait_for(pilot, lambda: app._turn is not None and not app.turn_running, timeout=20, what="the turn to end")
        assert app.chat_input.text == "", "the burst left text in the input"
        assert scripted_api.last.user_text().endswith(message), "the burst's request lost text"
        assert user_rows() == [message], "the burst's stored message lost text"

        burst(app, "first")
        await wait_for(pilot, lambda: app.chat_log.entries[-1].kind == "assistant"
                       and app.chat_log.entries[-1].text.startswith("slow"), 20, "the slow turn's first delta")
        burst(app, "queued one")
        await pilot.pause()
        assert app.turn_running and "queued: queued one" in app.chat_log.plain_text(), "text sent mid-turn is queued"
        await wait_for(pilot, lambda: "answer to the queued one" in app.chat_log.plain_text(), 40, "the queued turn")
        await wait_for(pilot, lambda: not app.turn_running, 20, "the queued turn to end")
        log = app.chat_log.plain_text()
        assert "queued:" not in log and log.index("you: first") < log.index("you: queued one"), \
            "the queued message was sent after the turn it waited for"
        assert user_rows() == [message, "first", "queued one"]

        requests = len(scripted_api.message_requests())
        burst(app, "third")
        await wait_for(pilot, lambda: app.chat_log.entries[-1].kind == "assistant"
                       and app.chat_log.entries[-1].text.startswith("slow"), 20, "the slow turn's first delta")
        burst(app, "second")
        await wait_for(pilot, lambda: "queued: second" in app.chat_log.plain_text(), 20, "the queued message")
        assert app.chat_input.text == "" and user_rows()[-1] == "third", "text sent mid-turn waits (not sent)"
        await pilot.press("escape")  # cancel the slow turn: the queued message is not sent
        await wait_for(pilot, lambda: not app.turn_running, 20, "the cancelled turn to end")
        await wait_for(pilot, lambda: app.chat_input.text.strip() == "second", 20, "Esc to put the queued text back")
        await pilot.pause()  # what runs after a turn (a queued message would be sent here) has run
        assert not app._queued and not app.turn_running and user_rows()[-1] == "third", "the queued text was sent"
        assert "queued: (back in the input, not sent)" in app.chat_log.plain_text()
        assert len(scripted_api.message_requests()) == requests + 1, "the queued text was not sent after Esc"
