"""Issue 27's keys during turns: the real panel, session, SDK and Claude CLI; only the model is scripted.

- with ``send_key: "enter"`` Enter sends; Alt+Enter, Ctrl+J and a trailing backslash make newlines;
- Ctrl+C during a turn stops it and keeps the panel ("press Ctrl+C again to quit"); idle, it quits;
- at 80 columns the status line shows "working… Esc stops" while the turn runs.
"""
from __future__ import annotations

import pytest

from mnemara.core.config import update_config
from mnemara.testing.scripted_api import reply
from mnemara.ui.tui.widgets.status_line import BUSY_SHORT
from tests.tui_support import burst, instance, make_app, type_text, wait_for  # noqa: F401  (fixtures)

pytestmark = pytest.mark.e2e


def last_user_text(api) -> str:
    message = api.message_requests()[-1].messages[-1]
    content = message["content"]
    return content if isinstance(content, str) else "\n".join(b.get("text", "") for b in content
                                                               if b.get("type") == "text")


async def test_enter_sends_and_alt_enter_ctrl_j_and_backslash_make_newlines(scripted_api, make_app, instance):
    scripted_api.push(reply("got your three lines"))
    update_config(instance.config_path, send_key="enter")
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await type_text(pilot, "one")
        await pilot.press("alt+enter")
        await type_text(pilot, "two")
        await pilot.press("ctrl+j")
        await type_text(pilot, "three\\")
        await pilot.press("enter")  # a trailing backslash: a newline, the backslash gone
        await type_text(pilot, "four")
        assert app.chat_input.text == "one\ntwo\nthree\nfour" and app._turn is None
        await pilot.press("enter")
        assert app.chat_input.text == ""
        await wait_for(pilot, lambda: app._turn is not None and not app.turn_running, what="the turn to end")
        assert "one\ntwo\nthree\nfour" in last_user_text(scripted_api)
        assert "got your three lines" in app.chat_log.plain_text()


async def test_ctrl_c_stops_a_turn_keeps_the_panel_and_the_busy_state_shows_at_80_columns(
        scripted_api, make_app, instance):
    scripted_api.push(reply("slow " * 200, delay=0.1, chunk_size=5), reply("second answer"))
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await type_text(pilot, "tell me a long story")
        await pilot.press("ctrl+s")
        status = app._chat_screen.query_one("#status")
        await wait_for(pilot, lambda: "slow" in app.chat_log.plain_text(), what="the answer streaming")
        shown = status.render().plain
        assert shown.endswith(BUSY_SHORT) and len(shown) <= 78, shown
        burst(app, "asked while it ran")
        await wait_for(pilot, lambda: len(app._queued) == 1, 20, "the queued message")
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: not app.turn_running, 30, "the turn to stop")
        assert not app._quitting and app.is_running, "the panel stays open"
        assert "press Ctrl+C again to quit" in app.chat_log.plain_text()
        assert "the turn was cancelled" in app.chat_log.plain_text()
        assert app.chat_input.text == "asked while it ran", "the queue is back in the input, as Esc does"
        assert len(scripted_api.message_requests()) == 1
        await pilot.pause()
        assert BUSY_SHORT not in status.render().plain
        await pilot.press("ctrl+c")  # idle: quits, as the spec says
        await wait_for(pilot, lambda: app._quitting, 10, "the panel to quit")
