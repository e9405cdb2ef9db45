"""Text from the model, a tool or a file is shown on the terminal, never obeyed (audit 4: tools and permissions).

Reproduction (before the fix): the REPL wrote the model's text and tool results raw, so a file the agent
Read holding ``ESC[8m`` (conceal) made the next permission question invisible on the terminal, ``ESC(0``
turned its letters into line-drawing glyphs and ``ESC]52;c;...BEL`` set the user's clipboard.
"""
from __future__ import annotations

import io
import re

import pytest

from mnemara.core import events as ev
from mnemara.commands import CommandResult
from mnemara.guard.gate import PermissionRequest
from mnemara.core.display import terminal_safe
from mnemara.ui.repl.app import Renderer
from tests.tui_support import instance, make_app  # noqa: F401  (fixtures)

ATTACK = "notes\x1b[8m\x1b(0\x1b]52;c;cm0gLXJmIH4=\x07\r\x9b2Jdone"
#: What must never reach the terminal: ESC or C1 CSI from the attack, BEL, a carriage return.
RAW = re.compile("\x1b\\[8m|\x1b\\(|\x1b\\]|\x07|\r|\x9b")


def test_terminal_safe_shows_controls_and_keeps_text() -> None:
    assert terminal_safe(ATTACK) == "notes\\x1b[8m\\x1b(0\\x1b]52;c;cm0gLXJmIH4=\\x07\\x9b2Jdone"
    assert terminal_safe("line one\r\nline\ttwo ✓\n") == "line one\nline\ttwo ✓\n"


@pytest.mark.parametrize("markdown", [False, True], ids=["piped", "terminal-markdown"])
def test_the_models_text_cannot_drive_the_terminal(markdown: bool) -> None:
    out, info = io.StringIO(), io.StringIO()
    render = Renderer(out, info, markdown=markdown)
    render(ev.TextDelta(text=ATTACK + "\n\n"))
    render(ev.AssistantText(text=ATTACK))
    render(ev.TurnDone())
    written = out.getvalue() + info.getvalue()
    assert not RAW.search(written), repr(written)
    assert "\\x1b[8m" in written and "done" in written


def test_tool_calls_results_halts_and_command_output_cannot_drive_the_terminal() -> None:
    out, info = io.StringIO(), io.StringIO()
    render = Renderer(out, info)
    render(ev.ToolUse(id="t1", name="Read", input={"file_path": "/home/u/README\x9b8m.md"}))
    render(ev.ToolResult(tool_use_id="t1", content=[{"type": "text", "text": ATTACK}]))
    render(ev.ToolResult(tool_use_id="t2", content=ATTACK, is_error=True))
    render(ev.Halt(reason="halted after " + ATTACK))
    render(ev.Notice(message=ATTACK))
    render.command_result(CommandResult("# Role amendment: be brief\n" + ATTACK))
    written = out.getvalue() + info.getvalue()
    assert not RAW.search(written), repr(written)
    assert written.count("\\x1b[8m") == 5


def test_the_permission_question_after_a_poisoned_result_is_plain_text() -> None:
    """The sequence of the attack: a Read result, then the question; nothing in between obeys a control."""
    out, info = io.StringIO(), io.StringIO()
    render = Renderer(out, info)
    render(ev.ToolResult(tool_use_id="t1", content=ATTACK))
    info.write(PermissionRequest("Bash", "Bash", "rm -rf ~/work", {"command": "rm -rf ~/work"}).question())
    assert "\x1b" not in info.getvalue() and "rm -rf ~/work" in info.getvalue()


@pytest.mark.parametrize("kind, text", [
    ("assistant", "plain " + ATTACK),
    ("assistant", "# Heading\n\n- item " + ATTACK + "\n\n```\ncode " + ATTACK + "\n```\n"),  # drawn as Markdown
    ("result", "line one\n" + ATTACK),
    ("tool", "Read " + ATTACK),
])
async def test_the_panel_never_hands_a_control_character_to_the_terminal(kind: str, text: str) -> None:
    """The panel's chat log drew the model's text with its ESC sequences (checked in tmux: the model set
    the terminal's title and colours); every segment it draws is now free of them."""
    from textual.app import App, ComposeResult

    from mnemara.ui.tui.widgets.chat_log import ChatLog, LogEntry

    class LogApp(App[None]):
        def compose(self) -> ComposeResult:
            yield ChatLog(id="log")

    app = LogApp()
    async with app.run_test(size=(80, 30)) as pilot:
        log = app.query_one(ChatLog)
        log.append(LogEntry(kind, kind, text, detail="more " + ATTACK, expanded=True))
        await pilot.pause()
        drawn = "".join(segment.text for strips in log._strips for strip in strips for segment in strip)
    assert drawn and not RAW.search(drawn), repr(drawn)
    assert "\\x1b[8m" in drawn


@pytest.mark.e2e
def test_the_panel_in_a_real_terminal_shows_the_sequences_and_obeys_none(scripted_api, mnemara_home) -> None:
    """In tmux: an answer carrying OSC 2 (window title) and SGR 41 (red background) left the pane's title
    set and the text red. Now the title is untouched and the sequences are shown as text."""
    import shutil

    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed on this machine")
    from mnemara.store.instance import Instance
    from mnemara.testing.scripted_api import reply
    from tests.e2e.test_tui_tmux import Tmux
    from tests.e2e.test_tui_tmux_tour import keys, start

    Instance.create("esc")
    scripted_api.push(reply("before \x1b]2;PWNED-TITLE\x07 after \x1b[41mREDBG\x1b[0m done"))
    tmux = Tmux()
    try:
        start(tmux, mnemara_home, "run", "--instance", "esc")
        tmux.wait_for("turns: 0/20")
        keys(tmux, "hi", "C-s")
        screen = tmux.wait_for("done")
        title = tmux("display", "-p", "-t", "smoke", "#{pane_title}")
        assert "PWNED" not in title, f"the model set the terminal's title: {title!r}"
        assert "\\x1b]2;PWNED-TITLE\\x07" in screen and "\\x1b[41mREDBG" in screen, screen
        styled = tmux("capture-pane", "-p", "-e", "-t", "smoke")
        assert "\x1b[41m" not in styled, "the model's SGR reached the terminal"
        tmux.wait_idle("turns: 2/20")  # the answer on screen is not the turn's end; Ctrl+C mid-turn only stops it
        keys(tmux, "C-c", "C-c")  # idle: the first clears the input, the second quits
        tmux.wait_for("PANEL-EXIT=0", timeout=30)
    finally:
        tmux.close()


async def _open_rows(pilot, app):
    """Open the context viewer from the panel; the viewer and its rows list once rows are shown."""
    from textual.widgets import OptionList

    from mnemara.ui.tui.screens.context_viewer import ContextViewer
    from tests.tui_support import wait_for

    await pilot.pause()
    await pilot.click("#context")
    viewer = await wait_for(pilot, lambda: isinstance(app.screen, ContextViewer) and app.screen, what="viewer")
    rows = viewer.query_one("#rows-list", OptionList)
    await wait_for(pilot, lambda: rows.option_count, what="the rows")
    return viewer, rows


async def test_context_viewer_rows_show_the_models_text_as_text_not_markup(make_app, instance) -> None:
    """The rows list parsed a turn's text as Textual markup: `[@click=app.quit_panel]...[/]` drew a
    clickable label that ran a panel action, `[dim]` restyled it. It is shown as typed now."""
    from textual.content import Content
    from textual.visual import visualize

    from mnemara.store.turns import TurnStore

    forged = "[@click=app.quit_panel]harmless[/] [dim]x\x1b[8m"
    with TurnStore(instance.turns_path) as store:
        store.append("assistant", forged)
    app = make_app()
    async with app.run_test(size=(120, 34)) as pilot:
        viewer, rows = await _open_rows(pilot, app)
        option = rows.get_option_at_index(0)
        shown = visualize(rows, option.prompt, markup=rows._markup)  # what the list draws for the row
    assert isinstance(shown, Content)
    assert "[@click=app.quit_panel]harmless[/] [dim]x\\x1b[8m" in shown.plain, shown.plain
    assert not any("@click" in str(span.style) for span in shown.spans)


async def test_context_viewer_detail_shows_control_characters_and_an_unedited_save_changes_nothing(
        make_app, instance) -> None:
    """The detail editor drew the stored text raw (Textual's TextArea hands ESC to the terminal)."""
    from textual.widgets import TextArea

    from mnemara.store.turns import TurnStore
    from tests.tui_support import wait_for

    with TurnStore(instance.turns_path) as store:
        row = store.append("assistant", ATTACK)
    app = make_app()
    async with app.run_test(size=(120, 34)) as pilot:
        viewer, rows = await _open_rows(pilot, app)
        rows.highlighted = rows.get_option_index(str(row))
        await wait_for(pilot, lambda: viewer.selected == row, what="the row selected")
        body = viewer.query_one("#detail-body", TextArea)
        drawn = "".join(segment.text for y in range(3) for segment in body.render_line(y))
        assert "\\x1b[8m" in body.text and not RAW.search(drawn), repr(drawn)
        viewer.action_save_edit()  # what its Save button does
        await pilot.pause()
        assert app.session.store.get(row).text == ATTACK  # the shown form was not written back
        assert "unchanged" in str(viewer.query_one("#ctx-status").render())


def test_show_and_memory_list_print_the_agents_text_without_obeying_its_controls(cli, mnemara_home) -> None:
    """`mnemara show` and `mnemara memory list` printed stored turns and notes raw to the terminal."""
    from mnemara.store.instance import Instance
    from mnemara.memory.notes import append_note
    from mnemara.store.turns import TurnStore

    inst = Instance.create("shown")
    with TurnStore(inst.turns_path) as store:
        store.append("assistant", ATTACK)
    append_note(inst.memory_dir, "remember " + ATTACK, "insight")
    for args in (("show", "--instance", "shown"), ("memory", "list", "--instance", "shown")):
        out = cli(*args).stdout
        assert "notes\\x1b[8m" in out and not RAW.search(out), (args, out)
