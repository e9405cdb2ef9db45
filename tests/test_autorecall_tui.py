"""The context viewer shows what auto-recall injected into the last turn, and why."""
from __future__ import annotations

from typing import Any

import pytest

from mnemara.config import update_config
from mnemara.memory.notes import append_note
from mnemara.memory.status import all_atoms, chunk_id
from mnemara.testing import reply
from mnemara.ui.tui.screens.context_viewer import ContextViewer
from tests.tui_support import instance, make_app, type_text, wait_for  # noqa: F401  (fixtures)

pytestmark = pytest.mark.e2e
SIZE = (110, 34)


async def _send_and_finish(pilot: Any, app: Any, text: str) -> None:
    app.chat_input.focus()
    await type_text(pilot, text)
    await pilot.press("ctrl+s")
    await wait_for(pilot, lambda: app._turn is not None and not app.turn_running, what="the turn to end")
    await pilot.pause()


async def _viewer(pilot: Any, app: Any) -> ContextViewer:
    app.chat_input.focus()
    await type_text(pilot, "/context")
    await pilot.press("ctrl+s")
    return await wait_for(pilot, lambda: isinstance(app.screen, ContextViewer) and app.screen, what="viewer")


async def test_recall_tab_shows_injection_and_scores(scripted_api, make_app, instance):
    append_note(instance.memory_dir, "The lease manager timeout is 30 seconds.", "insight")
    append_note(instance.memory_dir, "Deploys to staging run every Tuesday.", "fact")
    update_config(instance.config_path, auto_recall=True, rag_embedder="ollama", rag_embed_url="http://127.0.0.1:9/api/embed")
    scripted_api.push(reply("30 seconds."))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await _send_and_finish(pilot, app, "what is the lease manager timeout")
        viewer = await _viewer(pilot, app)
        text = str(viewer.query_one("#recall-text").render())
        atom = all_atoms(instance.memory_dir)[0]
        assert f"INJECTED {chunk_id(atom)}" in text and "keyword coverage 1.00" in text
        assert "The lease manager timeout is 30 seconds." in text
    assert "<recalled_memory" in "\n".join(b.get("text", "") for b in scripted_api.last.blocks("user"))


async def test_no_recall_tab_while_auto_recall_is_off(make_app, instance):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        viewer = await _viewer(pilot, app)
        assert not viewer.query("#recall-text")
