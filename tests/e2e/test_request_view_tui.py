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
        assert str(viewer.query_one("#detail-header").render()) == "select a row"
        await pilot.click("#--content-tab-tab-request")
        await pilot.pause()
        assert "--call 1 --full|--json" in str(viewer.query_one("#request-text").render())
        blocks = viewer.query_one("#request-blocks")
        labels = [str(blocks.get_option_at_index(n).prompt) for n in range(blocks.option_count)]
        assert any(label.startswith("[message ] your message") for label in labels), labels
        assert any("CLI addition: environment reminder" in label for label in labels)
        assert "tool schemas" in labels[-1]
        # issue 39: the right pane was an empty "select a row" box on this tab: it shows the first block, whole
        header, body = str(viewer.query_one("#detail-header").render()), viewer.query_one("#detail-body")
        assert header.startswith(f"request block 1 of {len(labels)} (read-only) · {labels[0]}")
        assert body.read_only and body.text == viewer.request_blocks[0][1] and body.text
        message = next(n for n, label in enumerate(labels) if label.startswith("[message ] your message"))
        blocks.highlighted = message
        await pilot.pause()
        assert "what does the model see?" in viewer.query_one("#detail-body").text
        await pilot.click("#--content-tab-tab-rows")
        await pilot.pause()
        assert not viewer.query_one("#detail-body").read_only, "a row's body is editable again"


async def _open(pilot, app: MnemaraApp) -> ContextViewer:
    app.chat_input.focus()
    await type_text(pilot, "/context")
    await pilot.press("ctrl+s")
    return await wait_for(pilot, lambda: isinstance(app.screen, ContextViewer) and app.screen, what="viewer")
