"""Ctrl+S acts on everything typed before it, even when the keys arrive in one burst.

A terminal delivers a pasted or quickly typed line and the Ctrl+S after it in
one read; the panel must not act on a prefix and leave the rest in the input.
A message sent that way goes through the CLI, so it is one phase of
tests/e2e/test_tui_panel.py's chatting test (with the queueing of text sent during a turn).
"""
from __future__ import annotations

from tests.tui_support import burst, instance, make_app, wait_for  # noqa: F401  (fixtures)

SIZE = (110, 34)


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
