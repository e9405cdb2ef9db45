"""A permission target is shown whole and unambiguous (issue 13 item 2): the shared formatter,
the REPL question, debug.log and the panel's modal (Textual pilot). The real-terminal REPL test
is tests/test_repl_tty.py::test_spoofed_multiline_command_is_shown_whole_at_80x30."""
from __future__ import annotations

import asyncio
import html
import re
from pathlib import Path

import pytest
from textual.app import App
from textual.widgets import Button, Static

from mnemara.config import Config
from mnemara.debuglog import read_events
from mnemara.instance import Instance
from mnemara.permissions import PermissionGate, PermissionRequest
from mnemara.target_text import show_target
from mnemara.ui.tui.screens.permission import PermissionScreen

SPOOF = "touch X" + "\n" * 60 + "ls -la"


@pytest.mark.parametrize("target, shown, escaped", [
    ("echo hi", "echo hi", False),
    (r"grep 'a\.b' f", r"grep 'a\.b' f", False),  # nothing to escape: shown as typed
    ("a\nb", "a\\nb", True),
    ("a\\nb\nc", "a\\\\nb\\nc", True),  # a typed backslash-n cannot pass for a newline
    ("ok\rrm -rf ~", "ok\\rrm -rf ~", True),
    ("\x1b[2Jls", "\\x1b[2Jls", True),
    ("ls \u202etxt.exe", "ls \\u202etxt.exe", True),
    ("ls\u2028rm", "ls\\u2028rm", True),
    ("ls\u00a0-la", "ls\\xa0-la", True),
    ("zero\u200bwidth", "zero\\u200bwidth", True),
    ("tab\there", "tab\\there", True),
    ("café ✓", "café ✓", False),
])
def test_show_target_escapes_everything_that_could_hide_text(target: str, shown: str, escaped: bool) -> None:
    result = show_target(target)
    assert result.text == shown and result.escaped is escaped
    assert "\n" not in result.text and all(ch.isprintable() for ch in result.text)
    assert ("escaped" in result.summary) is escaped


def test_summary_counts_lines_and_characters() -> None:
    shown = show_target(SPOOF)
    assert shown.lines == 61 and shown.chars == len(SPOOF)
    assert shown.summary.startswith("61 lines, 73 characters")
    assert show_target("ls").summary == "1 line, 2 characters"


def test_repl_question_shows_the_whole_target_then_the_keys() -> None:
    question = PermissionRequest("Bash", "Bash", SPOOF, {"command": SPOOF}).question()
    lines = question.split("\n")
    assert len(lines) == 3
    assert lines[0].startswith("permission: allow Bash? target (61 lines")
    assert lines[1] == "  touch X" + "\\n" * 60 + "ls -la"
    assert lines[2].startswith("[y]es once / [n]o / [a]lways") and lines[2].endswith(": ")


def test_debug_log_records_the_escaped_target_and_its_size(mnemara_home: Path) -> None:
    inst = Instance.create("disp")
    gate = PermissionGate(Config(), inst, prompt=lambda request: "n")
    asyncio.run(gate.ask_decision("Bash", {"command": SPOOF}))
    record = [e for e in read_events(inst.debug_log_path) if e["event"] == "permission_answer"][-1]
    assert record["target"] == show_target(SPOOF).text and record["target_lines"] == 61


class ModalApp(App[None]):
    def __init__(self, request: PermissionRequest) -> None:
        super().__init__()
        self.request = request
        self.answer: str | None = None

    def on_mount(self) -> None:
        self.push_screen(PermissionScreen(self.request), callback=self._done)

    def _done(self, answer: str | None) -> None:
        self.answer = answer


def _inside_screen(app: App, widget) -> bool:
    region, screen = widget.region, app.screen.region
    return region.height > 0 and screen.contains_region(region)


@pytest.mark.parametrize("target", [SPOOF, "echo " + "A" * 6000, "\n".join(f"echo line {i}" for i in range(300))])
async def test_modal_shows_whole_target_scrollable_with_buttons_on_screen(target: str) -> None:
    app = ModalApp(PermissionRequest("Bash", "Bash", target, {"command": target, "description": "list files"}))
    async with app.run_test(size=(80, 30)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, PermissionScreen)
        shown = show_target(target)
        assert str(screen.query_one("#permission-target", Static).render()) == shown.text
        assert f"{shown.lines} line" in str(screen.query_one("#permission-summary", Static).render())
        box = screen.query_one("#permission-box").region
        for button in screen.query(Button):
            assert _inside_screen(app, button) and box.contains_region(button.region), button.id
        scroll = screen.query_one("#permission-scroll")
        assert _inside_screen(app, scroll)
        scroll.scroll_end(animate=False)
        await pilot.pause()
        for button in screen.query(Button):
            assert _inside_screen(app, button), button.id
        if scroll.max_scroll_y:
            assert scroll.scroll_y == scroll.max_scroll_y  # the end of the target can be reached
        await pilot.press("n")
        await pilot.pause()
    assert app.answer == "n"


async def test_modal_spoof_shows_both_commands_on_the_visible_screen() -> None:
    app = ModalApp(PermissionRequest("Bash", "Bash", SPOOF, {"command": SPOOF}))
    async with app.run_test(size=(80, 30)) as pilot:
        await pilot.pause()
        svg = app.export_screenshot()
    text = html.unescape(re.sub(r"<[^>]+>", "", svg)).replace("\xa0", " ")
    assert "touch" in text and "ls -la" in text and "61 lines" in text
    for label in ("y: once", "n: deny", "a: always this target", "s: session"):
        assert label in text
