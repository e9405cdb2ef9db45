"""Messages sent in the panel while a turn runs are queued; closing the panel before they are sent
(Ctrl+C, or the window closing / the process killed) must not lose them.

The turn has to be really running while the messages queue, so the real CLI serves it (slowly,
from the scripted API); everything else is in process.
"""
from __future__ import annotations

import json

import pytest

from mnemara.store.turns import TurnStore
from mnemara.testing.scripted_api import reply
from mnemara.ui.tui.app import MnemaraApp
from tests.tui_support import burst, instance, make_app, type_text, wait_for  # noqa: F401  (fixtures)

pytestmark = pytest.mark.e2e
SIZE = (110, 34)


async def test_queued_messages_survive_the_panel_closing_and_come_back_in_the_input(scripted_api, make_app,
                                                                                       instance):
    scripted_api.push(reply("slow " * 200, delay=0.1, chunk_size=5))
    unsent = instance.root / "unsent.json"
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.chat_input.focus()
        await type_text(pilot, "first")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: "slow" in app.chat_log.plain_text(), 60, "the slow answer to stream")
        await type_text(pilot, "second")
        await pilot.press("enter")
        burst(app, "line two")
        await wait_for(pilot, lambda: len(app._queued) == 1, 20, "the first queued message")
        burst(app, "third")
        await wait_for(pilot, lambda: len(app._queued) == 2, 20, "the second queued message")
        # on disk as soon as queued: a window closed (the process killed) now loses nothing
        assert json.loads(unsent.read_text(encoding="utf-8")) == ["second\nline two", "third"]
        await type_text(pilot, "a draft")  # typed, never sent: kept too
        await pilot.click("#quit")  # (Ctrl+C would stop the turn first, its queue back in the input, as Esc does)
        await pilot.pause()
    assert app.return_code == 0 and app.session._closed
    assert json.loads(unsent.read_text(encoding="utf-8")) == ["second\nline two", "third", "a draft"]
    with TurnStore(instance.turns_path) as store:
        user_rows = [r.text for r in store.history() if r.role == "user"]
    assert user_rows == ["first"], "a queued message was sent although the panel was closing"

    again = MnemaraApp(instance)
    try:
        async with again.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: again.chat_input.text, 20, "the unsent messages in the input")
            assert again.chat_input.text == "second\nline two\nthird\na draft"
            assert "3 message(s) not sent when the panel last closed (queued, or left in the input) are back" in \
                again.chat_log.plain_text()
            assert not unsent.exists(), "given back once, not every time the panel opens"
    finally:
        again.session.close()
    assert len(scripted_api.message_requests()) == 1, "an unsent message reached the model"


async def test_ctrl_l_while_an_answer_streams_keeps_the_turn_going(scripted_api, make_app, instance):
    """Ctrl+L clears the screen, "turns.sqlite is not touched". The streaming answer's log entry was
    named by its index: the next delta looked it up after the clear, the panel caught the IndexError
    and ended the turn there, so the answer was never stored."""
    answer = "word " * 60
    scripted_api.push(reply(answer, delay=0.05, chunk_size=5))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.chat_input.focus()
        await type_text(pilot, "talk to me")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: "word" in app.chat_log.plain_text(), 60, "the answer to stream")
        await pilot.press("ctrl+l")
        await wait_for(pilot, lambda: app._turn is not None and not app.turn_running, 60, "the turn to end")
        assert "Error" not in app.chat_log.plain_text(), app.chat_log.plain_text()
        rows = app.session.store.history()
        assert [r.role for r in rows] == ["user", "assistant"] and rows[1].text.strip() == answer.strip()
        assert not rows[1].meta.get("interrupted")
