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


async def test_ctrl_s_right_after_a_burst_of_keys_sends_the_whole_text(scripted_api, make_app):
    scripted_api.push(reply("I can do several things."))
    message = "hello, what can you do? " * 4
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.chat_input.focus()
        burst(app, message)
        await wait_for(pilot, lambda: app._turn is not None and not app.turn_running, timeout=20, what="the turn to end")
        assert app.chat_input.text == ""
        assert scripted_api.last.user_text().endswith(message)
        assert app.session.store.history()[0].text == message


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


async def test_text_sent_while_a_turn_runs_is_queued_and_esc_puts_it_back_in_the_input(scripted_api, make_app):
    scripted_api.push(reply("slow " * 40, delay=0.2, chunk_size=5))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.chat_input.focus()
        burst(app, "first")
        await wait_for(pilot, lambda: any(e.kind == "assistant" for e in app.chat_log.entries), 20, "first delta")
        burst(app, "second")
        await pilot.pause(0.3)
        assert app.chat_input.text == "" and len(app.session.store.history()) == 1
        assert "queued: second" in app.chat_log.plain_text()
        await pilot.press("escape")  # cancel the slow turn: the queued message is not sent
        await wait_for(pilot, lambda: not app.turn_running, 20, "the cancelled turn to end")
        await pilot.pause(0.3)
        assert app.chat_input.text.strip() == "second" and not app._queued
        assert "queued: (back in the input, not sent)" in app.chat_log.plain_text()
        assert len(scripted_api.message_requests()) == 1


async def test_a_queued_message_is_sent_when_the_turn_ends(scripted_api, make_app):
    scripted_api.push(reply("slow " * 20, delay=0.1, chunk_size=5), reply("answer to the queued one"))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.chat_input.focus()
        burst(app, "first")
        await wait_for(pilot, lambda: any(e.kind == "assistant" for e in app.chat_log.entries), 20, "first delta")
        burst(app, "queued one")
        await pilot.pause()
        assert app.turn_running and "queued: queued one" in app.chat_log.plain_text()
        await wait_for(pilot, lambda: "answer to the queued one" in app.chat_log.plain_text(), 40, "the queued turn")
        await wait_for(pilot, lambda: not app.turn_running, 20, "the second turn to end")
        log = app.chat_log.plain_text()
        assert "queued:" not in log and log.index("you: first") < log.index("you: queued one")
        assert [r.text for r in app.session.store.history() if r.role == "user"] == ["first", "queued one"]
