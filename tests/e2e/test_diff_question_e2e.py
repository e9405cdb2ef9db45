"""Issue 27 end to end: an Edit asked in the real panel shows its diff and runs on y; the piped REPL
of `mnemara run --dir FOLDER` edits a file in a project folder outside $HOME after showing the diff.
Real session, SDK and Claude CLI; only the model is scripted (the CLI's Edit needs a Read first)."""
from __future__ import annotations

from pathlib import Path

import pytest

from mnemara.core.config import Config
from mnemara.store.instance import Instance
from mnemara.session.agent import AgentSession
from mnemara.testing.scripted_api import reply, tool_use
from mnemara.ui.tui.app import MnemaraApp
from mnemara.ui.tui.screens.permission import PermissionScreen
from mnemara.ui.tui.widgets.diff_view import DiffView

from tests.tui_support import instance, type_text, wait_for  # noqa: F401  (fixtures)

pytestmark = pytest.mark.e2e


def _read_then_edit(api, path: Path, old: str, new: str) -> None:
    api.push(reply(tool_use("Read", {"file_path": str(path)})),
             reply(tool_use("Edit", {"file_path": str(path), "old_string": old, "new_string": new})),
             reply("edited"))


async def test_the_panel_asks_an_edit_with_its_diff(scripted_api, instance: Instance, isolated_home: Path) -> None:
    target = isolated_home / "hello.txt"
    target.write_text("hello world\n", encoding="utf-8")
    _read_then_edit(scripted_api, target, "hello world", "goodbye world\nsecond line")
    session = AgentSession(instance, cwd=isolated_home, warm_spare=False)
    app = MnemaraApp(instance, session=session)
    try:
        async with app.run_test(size=(100, 34)) as pilot:
            app.chat_input.focus()
            await type_text(pilot, "change the greeting")
            await pilot.press("ctrl+s")
            modal = await wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen) and app.screen.armed
                                   and app.screen.query("#permission-diff") and app.screen, what="the Edit question")
            diff = modal.query_one("#permission-diff", DiffView).plain_text
            assert "-hello world" in diff and "+goodbye world" in diff and "+second line" in diff
            assert not modal.query("#permission-input")  # no raw JSON under the diff
            assert "1 line removed, 2 added" in str(modal.query_one("#permission-summary").render())
            await pilot.press("y")
            await wait_for(pilot, lambda: app._turn is not None and not app.turn_running, what="the turn's end")
    finally:
        await session.aclose()
    assert target.read_text(encoding="utf-8") == "goodbye world\nsecond line\n"


def test_run_dir_edits_a_project_outside_home_after_the_repl_shows_the_diff(
        scripted_api, cli, mnemara_home: Path, tmp_path: Path) -> None:
    project = tmp_path / "srv" / "proj"
    project.mkdir(parents=True)
    source = project / "app.py"
    source.write_text("def main():\n    return 1\n", encoding="utf-8")
    Instance.create("proj")
    _read_then_edit(scripted_api, source, "return 1", "return 2")
    result = cli("run", "-i", "proj", "--no-tui", "--dir", str(project), input="bump the return value\ny\n")
    assert result.returncode == 0, result.stderr
    assert "    -    return 1" in result.stderr and "    +    return 2" in result.stderr, result.stderr
    assert "\x1b[" not in result.stderr  # not a terminal: no colour codes
    assert source.read_text(encoding="utf-8") == "def main():\n    return 2\n"
    assert Config.load(mnemara_home / "proj" / "config.json").file_tool_roots == []  # --dir is not saved
