"""Pictures of the panel (pytest-textual-snapshot): the main screen, the role editor, the context viewer.

Update them after an intended change with ``pytest tests/ui/test_tui_snapshots.py --snapshot-update``
and look at the SVGs under tests/__snapshots__/ before committing.
"""
from __future__ import annotations

import pytest
from textual.widgets import TextArea

from mnemara.core.config import update_config
from mnemara.store.instance import Instance
from mnemara.store.turns import TurnStore
from mnemara.context import breakdown

from tests.tui_support import instance, make_app, wait_for  # noqa: F401  (fixtures)

SIZE = (100, 30)


@pytest.fixture
def seeded(instance: Instance, isolated_home) -> Instance:
    role = isolated_home / "role.md"
    role.write_text("# Reviewer\n\nYou review code for the Acme repo.\nBe terse; halt and ask when unsure.\n",
                    encoding="utf-8")
    update_config(instance.config_path, role_doc_path=str(role), model="claude-opus-4-7", display_name="Mimir",
                  max_window_turns=100)
    with TurnStore(instance.turns_path) as store:
        store.upsert_slot("health", "system", "HP 73/100")
        store.append("user", "how do I check the lease timeout?")
        store.append("assistant", [
            {"type": "text", "text": "Let me look at server.py."},
            {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "server.py"}},
            {"type": "tool_result", "tool_use_id": "t1", "content": "LEASE_SECONDS = 30\nstart()"},
            {"type": "text", "text": "It is LEASE_SECONDS in server.py: 30 seconds."},
        ])
    return instance


@pytest.fixture
def fixed_tool_schemas(monkeypatch: pytest.MonkeyPatch) -> None:
    """Other tool families come and go; keep the picture about the viewer, not the tool count."""
    monkeypatch.setattr(breakdown, "tool_schema_tokens", lambda specs, native: (2400, "4 built-in + mnemara (est.)"))


async def steady_cursors(pilot) -> None:
    """A blinking cursor is drawn or not depending on when the picture is taken: hold it on."""
    for area in pilot.app.screen.query(TextArea):
        area.cursor_blink = False
    await pilot.pause()


def test_main_screen(snap_compare, seeded, make_app):
    async def settle(pilot):
        await pilot.pause()
        await steady_cursors(pilot)

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=settle)


def test_role_editor(snap_compare, seeded, make_app):
    async def open_editor(pilot):
        await pilot.pause()
        await pilot.click("#role")
        await pilot.pause()
        await steady_cursors(pilot)

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=open_editor)


def test_context_viewer(snap_compare, seeded, make_app, fixed_tool_schemas):
    async def open_viewer(pilot):
        await pilot.pause()
        await pilot.click("#context")
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=open_viewer)


def test_context_viewer_pinned_tab(snap_compare, seeded, make_app, fixed_tool_schemas):
    async def open_pinned(pilot):
        await pilot.pause()
        await pilot.click("#context")
        await pilot.pause()
        await pilot.click("#--content-tab-tab-pinned")
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=open_pinned)
