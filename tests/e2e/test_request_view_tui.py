"""The context viewer's "Last request" tab shows the last API call block by block, as `mnemara context` does."""
from __future__ import annotations

import pytest

from mnemara.session.agent import AgentSession
from mnemara.testing.scripted_api import reply
from mnemara.ui.tui.app import MnemaraApp
from mnemara.ui.tui.screens.context_viewer import ContextViewer
from tests.tui_support import instance, make_app, type_text, wait_for  # noqa: F401  (fixtures)

pytestmark = pytest.mark.e2e


async def test_last_request_tab_shows_the_recorded_call(scripted_api, make_app, instance):  # noqa: F811
    app = make_app()
    async with app.run_test(size=(110, 34)) as pilot:
        viewer = await _open(pilot, app)
        assert "no API call recorded yet" in str(viewer.query_one("#request-text").render())
        await pilot.press("escape")
    with AgentSession(instance) as session:
        scripted_api.push(reply("recorded"))
        session.turn("what does the model see?")
    app = make_app()
    async with app.run_test(size=(110, 34)) as pilot:
        viewer = await _open(pilot, app)
        await pilot.click("#--content-tab-tab-request")
        await pilot.pause()
        shown = str(viewer.query_one("#request-text").render())
        assert "[message ] your message" in shown and "what does the model see?" in shown
        assert "CLI addition: environment reminder" in shown and "tool schemas" in shown


async def _open(pilot, app: MnemaraApp) -> ContextViewer:
    app.chat_input.focus()
    await type_text(pilot, "/context")
    await pilot.press("ctrl+s")
    return await wait_for(pilot, lambda: isinstance(app.screen, ContextViewer) and app.screen, what="viewer")
