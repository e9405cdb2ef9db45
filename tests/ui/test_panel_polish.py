"""Issue 17's panel and REPL polish, piece by piece: Markdown, /copy, /help and /show layout,
readable tool results, one-line errors, interrupted turns on reopen, /role_doc copies, Ctrl+V."""
from __future__ import annotations

import io
from pathlib import Path

from textual.app import App, ComposeResult

from mnemara.core import events as ev
from mnemara.commands import dispatch
from mnemara.core.config import update_config
from mnemara.store.instance import Instance
from mnemara.core.markdown_blocks import code_blocks, looks_like_markdown, split_parts
from mnemara.store.turns import TurnStore
from mnemara.ui.text.readable import readable_result
from mnemara.ui.repl.app import Renderer
from mnemara.ui.repl.markdown import MarkdownStream
from mnemara.ui.tui.transcript_view import entries_for, error_entry, result_entry
from mnemara.ui.tui.widgets.chat_log import ChatLog, LogEntry
from tests.ui.test_tui_widgets import fake_wayland_clipboard
from tests.tui_support import wait_for, instance, make_app  # noqa: F401  (fixtures)

ANSWER = """Here is the **fix**:

- check the lease
- then retry

```python
def lease() -> int:
    return 30
```

And in the shell:

```bash
echo done
```
"""


class LogApp(App[None]):
    def compose(self) -> ComposeResult:
        yield ChatLog(id="log")


def screen_text(log: ChatLog, height: int) -> str:
    return "\n".join(log.render_line(y).text.rstrip() for y in range(height))


def test_fences_split_prose_and_code_even_while_streaming():
    parts = split_parts(ANSWER)
    assert [p.lang for p in parts] == [None, "python", None, "bash"]
    assert parts[1].text == "def lease() -> int:\n    return 30"
    open_block = split_parts("text\n```py\nx = 1")
    assert open_block[-1].lang == "py" and not open_block[-1].closed and open_block[-1].text == "x = 1"
    assert [b.text for b in code_blocks(ANSWER)] == ["def lease() -> int:\n    return 30", "echo done"]
    assert looks_like_markdown(ANSWER) and not looks_like_markdown("just a plain answer, 3 * 4 = 12.")


async def test_assistant_markdown_renders_formatted_and_a_click_copies_a_code_block(monkeypatch, tmp_path):
    clip = fake_wayland_clipboard(monkeypatch, tmp_path)
    app = LogApp()
    async with app.run_test(size=(70, 30)) as pilot:
        log = app.query_one(ChatLog)
        log.append(LogEntry("assistant", "assistant", ANSWER))
        await pilot.pause()
        shown = screen_text(log, 30)
        assert "**fix**" not in shown and "Here is the fix:" in shown  # bold drawn, not raw
        assert "• check the lease" in shown and "```" not in shown
        assert "python · block 1 · click or /copy 1 to copy" in shown
        code_line = next(y for y in range(30) if "return 30" in log.render_line(y).text)
        assert log.code_at_line(code_line) == "def lease() -> int:\n    return 30"
        await pilot.click(ChatLog, offset=(5, code_line))
        await pilot.pause()
        assert clip.read_text(encoding="utf-8") == "def lease() -> int:\n    return 30"


async def test_plain_answers_take_the_fast_path_and_streaming_redraws_one_entry():
    app = LogApp()
    async with app.run_test(size=(60, 20)) as pilot:
        log = app.query_one(ChatLog)
        log.append(LogEntry("assistant", "assistant", "plain words only"))
        await pilot.pause()
        assert "assistant: plain words only" in screen_text(log, 3)  # inline, no Markdown layout
        index = log.append(LogEntry("assistant", "assistant", ""))
        before = log.renders
        text = ""
        for piece in ANSWER.split(" "):  # a Markdown answer streaming in, delta by delta
            text += piece + " "
            log.update_entry(index, text=text)
        await wait_for(pilot, lambda: "• check the lease" in screen_text(log, 20), 10, "the streamed answer on screen")
        await pilot.pause()
        assert log.renders - before <= 3  # coalesced into a frame or two, not one per delta


async def test_help_columns_wrap_under_the_description_at_80_columns():
    result = dispatch(None, "/help")
    app = LogApp()
    async with app.run_test(size=(80, 120)) as pilot:  # the whole listing on one screen (with Claude Code's names)
        log = app.query_one(ChatLog)
        log.append(LogEntry("info", "mnemara", result.text, columns=result.payload.rows))
        log.scroll_home(animate=False)
        await pilot.pause()
        lines = [log.render_line(y).text for y in range(log.virtual_size.height)]
        start = lines[1].index(result.payload.rows[0][1][:10])  # the description column
        wrapped = [line for line in lines[2:] if line[:start].strip() == "" and line.strip()]
        assert wrapped, "some description should wrap at 80 columns"
        assert all(line[start - 1] == " " and line[start] != " " for line in wrapped)


async def test_multi_line_command_output_starts_under_its_label():
    app = LogApp()
    async with app.run_test(size=(60, 10)) as pilot:
        log = app.query_one(ChatLog)
        log.append(LogEntry("info", "mnemara", "[1] user: hello\n[2] assistant: hi"))
        await pilot.pause()
        assert [log.render_line(y).text.rstrip() for y in range(3)] == [
            "mnemara:", "  [1] user: hello", "  [2] assistant: hi"]


def test_tool_results_read_as_pretty_json_first_lines_then_all_on_click():
    nested = '[{"type": "text", "text": "{\\"ok\\": true, \\"hits\\": [\\"a\\", \\"b\\", \\"c\\"]}"}]'
    assert readable_result(nested).startswith('{\n  "ok": true,')
    entry = result_entry(nested)
    assert '\\"' not in entry.text and entry.text.startswith('{\n  "ok": true,\n  "hits": [')
    assert "more line(s), click to expand" in entry.text and entry.collapsible and '"c"' in entry.detail
    short = result_entry("short")
    assert short.text == short.detail == "short"  # shown whole; the click view is the same text


def test_an_error_is_one_line_with_the_rest_a_click_away():
    entry = error_entry("authentication failed: the API rejected the key\nstatus 401\nrequest id x")
    assert entry.text == "authentication failed: the API rejected the key" and "status 401" in entry.detail


def test_an_interrupted_answer_is_marked_when_the_panel_reopens(mnemara_home):
    inst = Instance.create("cut")
    with TurnStore(inst.turns_path) as store:
        store.append("user", "go")
        store.append("assistant", "half an ans", {"interrupted": True})
        rows = store.history()
    shown = [e.plain() for row in rows for e in entries_for(row, "assistant")]
    assert shown[-1] == "stopped: this answer was interrupted; what arrived before the stop is kept"


def test_copy_command_finds_code_blocks_of_the_last_answer(session_factory):
    ctx = session_factory("copy")
    store = ctx.store
    assert not dispatch(ctx, "/copy").ok  # no answer yet
    store.append("assistant", ANSWER)
    assert dispatch(ctx, "/copy").payload.text == "echo done"
    first = dispatch(ctx, "/copy 1")
    assert first.action == "copy" and first.payload.text.startswith("def lease")
    assert dispatch(ctx, "/copy all").payload.text == ANSWER
    assert not dispatch(ctx, "/copy 3").ok and not dispatch(ctx, "/copy x").ok


def test_role_doc_in_the_repo_examples_is_offered_as_a_copy(session_factory, tmp_path):
    example = tmp_path / "checkout" / "examples" / "roles" / "coder.md"
    example.parent.mkdir(parents=True)
    example.write_text("You write code.", encoding="utf-8")
    ctx = session_factory("roles")
    inst = ctx.instance
    ctx.update_config(role_doc_path=str(example))
    offer = dispatch(ctx, "/role_doc")
    assert offer.action == "offer_role_copy" and "/role_doc copy" in offer.text
    done = dispatch(ctx, "/role_doc copy")
    assert done.ok and done.action == "open_role_editor"
    assert Path(ctx.config.role_doc_path) == inst.root / "role.md"
    assert (inst.root / "role.md").read_text(encoding="utf-8") == "You write code."
    assert dispatch(ctx, "/role_doc").action == "open_role_editor"  # the copy is edited without asking
    assert example.read_text(encoding="utf-8") == "You write code."
    assert not dispatch(ctx, "/role_doc twice").ok


def test_repl_markdown_stream_draws_each_block_once_when_complete():
    out = io.StringIO()
    md = MarkdownStream(out, width=60)
    for piece in ANSWER.split(" "):
        md.feed(piece + " ")
    drawn_before_end = md.blocks
    md.flush()
    text = out.getvalue()
    assert drawn_before_end >= 3 and "**" not in text and "```" not in text
    assert "def" in text and "lease" in text and "check the lease" in text


def test_repl_renderer_markdown_on_a_terminal_raw_text_in_a_pipe():
    piped, info = io.StringIO(), io.StringIO()
    plain = Renderer(piped, info)
    for event in (ev.TextDelta("**hi**"), ev.AssistantText("**hi**"), ev.TurnDone()):
        plain(event)
    assert piped.getvalue() == "**hi**\n"
    tty = io.StringIO()
    fancy = Renderer(tty, info, markdown=True)
    for event in (ev.TextDelta("**hi** there"), ev.AssistantText("**hi** there"), ev.TurnDone()):
        fancy(event)
    assert "**" not in tty.getvalue() and "hi" in tty.getvalue()


async def test_ctrl_v_pastes_the_system_clipboard_into_the_input(monkeypatch, tmp_path):
    from mnemara.ui.tui.widgets.chat_input import ChatInput

    clip = fake_wayland_clipboard(monkeypatch, tmp_path)
    clip.write_text("pasted ✓", encoding="utf-8")

    class InputApp(App[None]):
        def compose(self) -> ComposeResult:
            yield ChatInput(id="input")

    app = InputApp()
    async with app.run_test(size=(60, 8)) as pilot:
        app.query_one(ChatInput).focus()
        await pilot.press("a", "ctrl+v")
        assert app.query_one(ChatInput).text == "apasted ✓"


async def test_status_line_and_context_viewer_say_what_they_count_and_agree(make_app, instance):
    from textual.widgets import Static

    from mnemara.ui.tui.screens.context_viewer import ContextViewer
    from tests.tui_support import wait_for

    with TurnStore(instance.turns_path) as store:
        store.append("user", "hello " * 200)
        store.append("assistant", "hi")
    app = make_app()
    async with app.run_test(size=(120, 34)) as pilot:
        await pilot.pause()
        status = app._chat_screen.query_one("#status").status.line()
        window = app.bridge.window().tokens
        assert f"window tokens: {window}/200K" in status
        await pilot.click("#context")
        viewer = await wait_for(pilot, lambda: isinstance(app.screen, ContextViewer) and app.screen, what="viewer")
        title = await wait_for(pilot, lambda: str(viewer.query_one("#ctx-title", Static).render()), what="the title")
        assert f"window tokens {window}/200K as in the status line" in title
        assert "next request ~" in title and "(tools, role doc, manifest, window)" in title


async def test_the_panel_reopens_with_an_interrupted_answer_marked(make_app, instance):
    with TurnStore(instance.turns_path) as store:
        store.append("user", "go on")
        store.append("assistant", "half an ans", {"interrupted": True})
    app = make_app()
    async with app.run_test(size=(100, 20)) as pilot:
        await pilot.pause()
        assert app.chat_log.plain_text().endswith(
            "assistant: half an ans\nstopped: this answer was interrupted; what arrived before the stop is kept")


async def test_role_button_on_an_example_role_doc_offers_a_copy_first(make_app, instance, tmp_path):
    from mnemara.ui.tui.screens.confirm import ConfirmScreen
    from mnemara.ui.tui.screens.role_editor import RoleEditor
    from tests.tui_support import wait_for

    example = tmp_path / "clone" / "examples" / "roles" / "reviewer.md"
    example.parent.mkdir(parents=True)
    example.write_text("You review code.", encoding="utf-8")
    update_config(instance.config_path, role_doc_path=str(example))
    app = make_app()
    async with app.run_test(size=(110, 34)) as pilot:
        await pilot.click("#role")
        modal = await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen) and app.screen, what="the offer")
        assert str(example) in str(modal.query_one("#confirm-question").render())
        await pilot.press("y")
        editor = await wait_for(pilot, lambda: isinstance(app.screen, RoleEditor) and app.screen, what="the editor")
        assert editor.path == instance.root / "role.md" and editor.editor.text == "You review code."
        editor.editor.text = "You review code, tersely."
        await pilot.press("ctrl+s")
        await pilot.pause()
    assert example.read_text(encoding="utf-8") == "You review code."  # the checkout is untouched
    assert (instance.root / "role.md").read_text(encoding="utf-8") == "You review code, tersely."


def test_repl_shows_tool_results_readably():
    out, info = io.StringIO(), io.StringIO()
    Renderer(out, info)(ev.ToolResult("t1", [{"type": "text", "text": '{"ok": true, "hits": ["a", "b"]}'}]))
    assert info.getvalue().startswith('· result: {\n      "ok": true,\n      "hits": [\n    … 4 more line(s)')
