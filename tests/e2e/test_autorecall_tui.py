"""The context viewer after a turn: what auto-recall injected into it, and why; the file-stat manifest's bar."""
from __future__ import annotations

from typing import Any

import pytest

from mnemara.core.config import update_config
from mnemara.memory.notes import append_note
from mnemara.memory.status import all_atoms, chunk_id
from mnemara.testing.scripted_api import reply, tool_use
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


async def test_recall_tab_shows_injection_and_scores_and_the_manifest_bar_counts_the_files_read(
        scripted_api, make_app, instance, isolated_home):
    """One turn that recalls a note and reads a file; the viewer then shows both (assertions named)."""
    append_note(instance.memory_dir, "The lease manager timeout is 30 seconds.", "insight")
    append_note(instance.memory_dir, "Deploys to staging run every Tuesday.", "fact")
    notes = isolated_home / "notes.txt"
    notes.write_text("the lease timeout is 30 seconds\n" * 20, encoding="utf-8")
    update_config(instance.config_path, auto_recall=True, rag_embedder="ollama", rag_embed_url="http://127.0.0.1:9/api/embed",
                  file_stat_manifest_enabled=True)
    scripted_api.push(reply(tool_use("Read", {"file_path": str(notes)})), reply("30 seconds."))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await _send_and_finish(pilot, app, "what is the lease manager timeout")
        viewer = await _viewer(pilot, app)
        text = str(viewer.query_one("#recall-text").render())
        atom = all_atoms(instance.memory_dir)[0]
        assert f"INJECTED {chunk_id(atom)}" in text and "keyword coverage 1.00" in text, f"recall tab: {text}"
        assert "The lease manager timeout is 30 seconds." in text, f"recall tab: {text}"
        manifest = {p.name: p for p in viewer.query_one("#ctx-bars").breakdown.parts}["manifest"]
        assert manifest.tokens > 0 and manifest.note == "", f"the manifest bar counts the file read: {manifest}"
        assert "notes.txt" in app.bridge.manifest_text(), "the manifest lists the file read"
    first = scripted_api.message_requests()[0]
    assert "<recalled_memory" in "\n".join(b.get("text", "") for b in first.blocks("user")), "the recall was injected"


async def test_no_recall_tab_while_auto_recall_is_off(make_app, instance):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        viewer = await _viewer(pilot, app)
        assert not viewer.query("#recall-text")
