"""Issue 27: the keys a Claude Code user expects, through the real panel (pilot, real session and store).

No turn runs here (no CLI): history, Ctrl+R, Tab completion, /keys, the log's keyboard
focus and its "new output below" marker, /copy over OSC 52, the status line's width,
refused commands, tour step 5 and Ctrl+End in the role editor. The turns (Enter
sending, Ctrl+C mid-turn, the busy status at 80 columns) are in test_panel_keys_e2e.py.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from textual import events

from mnemara.commands import dispatch
from mnemara.commands.complete import complete, parse_usage
from mnemara.commands.payloads import RefusedInput
from mnemara.core.config import Config, update_config
from mnemara.core.errors import ConfigError
from mnemara.store.instance import Instance
from mnemara.store.turns import TurnStore
from mnemara.ui.prompt_history import PromptHistory
from mnemara.ui.tui.app import MnemaraApp
from mnemara.ui.tui.screens.history_search import HistorySearch
from mnemara.ui.tui.screens.role_editor import RoleEditor
from mnemara.ui.tui.widgets.chat_log import MARKER, LogEntry
from mnemara.ui.tui.widgets.status_line import BUSY_SHORT, Status, StatusPart, fit
from tests.tui_support import instance, make_app, type_text, wait_for  # noqa: F401  (fixtures)

SIZE = (100, 30)


# -- /keys and send_key in config.json ------------------------------------------------------


def test_keys_command_shows_sets_and_refuses(session_factory):
    ctx = session_factory("keys")
    assert dispatch(ctx, "/keys").text.startswith("the panel's send key: ctrl+s. Ctrl+S sends")
    result = dispatch(ctx, "/keys enter")
    assert result.ok and ctx.config.send_key == "enter"
    assert Config.load(ctx.instance.config_path).send_key == "enter"
    refused = dispatch(ctx, "/keys space")
    assert not refused.ok and isinstance(refused.payload, RefusedInput) and refused.text.splitlines()[0] == (
        "/keys: unknown send key 'space': use ctrl+s or enter")
    assert Config.load(ctx.instance.config_path).send_key == "enter", "a refused value changes nothing"


def test_keys_in_the_repl_is_the_same_command(session_factory):
    import io

    from mnemara.ui.repl.app import run_piped

    ctx = session_factory("repl-keys")
    out, err = io.StringIO(), io.StringIO()
    run_piped(ctx, io.StringIO("/keys enter\n/keys nope\n"), out, err)
    said = out.getvalue() + err.getvalue()
    assert "the panel's send key: enter (saved in config.json)" in said
    assert "/keys: unknown send key 'nope': use ctrl+s or enter" in said
    assert Config.load(ctx.instance.config_path).send_key == "enter"


def test_a_hand_edited_send_key_is_refused_in_one_line(tmp_path: Path):
    path = tmp_path / "config.json"
    path.write_text('{"send_key": "space"}', encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        Config.load(path)
    assert "send_key" in caught.value.message and "\n" not in caught.value.message
    assert Config().send_key == "ctrl+s", "the spec's default"


# -- the status line ----------------------------------------------------------------------


def test_status_line_fits_every_width_and_keeps_the_busy_state():
    status = Status(turns=12, max_turns=100, tokens=14_200, max_tokens=200_000, model="claude-sonnet-4-6",
                    inbox="⚡ Inbox: OFF", busy=True)
    assert status.line(200) == status.line()
    for width in range(18, 140):
        line = status.line(width)
        assert len(line) <= width and BUSY_SHORT.split()[0] in line and "Esc" in line, (width, line)
    assert "working… (Esc or /stop cancels)" in status.line(140)
    at_80 = status.line(78)  # 80 columns less the line's padding
    assert "turns: 12/100" in at_80 and "14K/200K" in at_80 and at_80.endswith(BUSY_SHORT)
    idle = Status(12, 100, 14_200, 200_000, "claude-sonnet-4-6", "⚡ Inbox: n/a")
    assert "Inbox: n/a" not in idle.line(60) and "turns: 12/100" in idle.line(60)
    # another piece of status is one more part: the cheapest change goes first
    parts = [StatusPart("aaaa", 10, ("a",)), StatusPart("bbbb", 90, ("b",)), StatusPart("keep", 0, (), keep=True)]
    assert fit(parts, 20) == "aaaa | bbbb | keep"
    assert fit(parts, 15) == "a | bbbb | keep"
    assert fit(parts, 12) == "a | b | keep"
    assert fit(parts, 8) == "b | keep"
    assert fit(parts, 3) == "ke…"


async def test_status_line_is_fitted_to_the_panel_width(make_app, instance):
    update_config(instance.config_path, model="claude-sonnet-4-6")
    app = make_app()
    async with app.run_test(size=(60, 20)) as pilot:
        await pilot.pause()
        status = app._chat_screen.query_one("#status")
        shown = status.render().plain
        assert len(shown) <= 58 and shown.startswith("turns: 0/20")


# -- Up/Down and Ctrl+R: the REPL's .prompt_history ----------------------------------------


def write_repl_history(instance: Instance, *entries: str) -> None:
    from prompt_toolkit.history import FileHistory

    history = FileHistory(str(instance.prompt_history_path))
    for entry in entries:
        history.store_string(entry)


async def test_up_and_down_recall_the_repl_history_and_sent_lines_are_shared(make_app, instance):
    write_repl_history(instance, "alpha one", "beta\ntwo lines", "gamma three")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        field = app.chat_input
        await type_text(pilot, "draft")
        await pilot.press("up")
        assert field.text == "gamma three"
        await pilot.press("up")
        assert field.text == "beta\ntwo lines" and field.cursor_location == (1, 9)
        await pilot.press("up")  # on the second line: the cursor moves up first
        assert field.text == "beta\ntwo lines" and field.cursor_location[0] == 0
        await pilot.press("up")
        assert field.text == "alpha one"
        await pilot.press("up")
        assert field.text == "alpha one", "the oldest stays"
        for expected in ("beta\ntwo lines", "gamma three", "draft"):
            await pilot.press("down")
            assert field.text == expected
        field.clear()
        await type_text(pilot, "/keys")
        await pilot.press("ctrl+s")
        await pilot.pause()
    from prompt_toolkit.history import FileHistory

    assert list(FileHistory(str(instance.prompt_history_path)).load_history_strings())[:2] == ["/keys", "gamma three"]


async def test_ctrl_r_searches_earlier_messages(make_app, instance):
    write_repl_history(instance, "deploy the lease fix", "beta\ntwo lines", "deploy docs", "other")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await type_text(pilot, "kept")
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: isinstance(app.screen, HistorySearch), 5, "the history search")
        await type_text(pilot, "DEPLOY")
        assert app.screen.matches == ["deploy docs", "deploy the lease fix"]
        await pilot.press("ctrl+r")  # the next older match
        await pilot.press("enter")
        await wait_for(pilot, lambda: not isinstance(app.screen, HistorySearch), 5, "the search to close")
        assert app.chat_input.text == "deploy the lease fix"
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: isinstance(app.screen, HistorySearch), 5, "the history search")
        await type_text(pilot, "zzz")
        assert app.screen.matches == []
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, HistorySearch), 5, "the search to close")
        assert app.chat_input.text == "deploy the lease fix", "Esc leaves the input as it was"


def test_history_file_shared_with_prompt_toolkit_both_ways(tmp_path: Path):
    from prompt_toolkit.history import FileHistory

    path = tmp_path / ".prompt_history"
    FileHistory(str(path)).store_string("from the repl\nsecond line")
    ours = PromptHistory(path)
    assert not ours.is_empty() and ours._entries is None, "a first run is told from the size, nothing read"
    assert ours.entries == ["from the repl\nsecond line"]
    ours.add("from the panel")
    assert list(FileHistory(str(path)).load_history_strings()) == ["from the panel", "from the repl\nsecond line"]
    assert PromptHistory(tmp_path / "missing").entries == []


async def test_a_linked_history_file_is_neither_read_nor_written(make_app, instance, isolated_home):
    victim = isolated_home / ".bashrc"
    victim.write_text("\n# t\n+export SECRET=1\n", encoding="utf-8")
    instance.prompt_history_path.unlink(missing_ok=True)
    instance.prompt_history_path.symlink_to(victim)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        shown = app.chat_log.plain_text()
        assert "symbolic link" in shown and "kept in memory only" in shown
        assert "SECRET" not in shown
        await type_text(pilot, "/keys")
        await pilot.press("ctrl+s")
        await pilot.pause()
        await pilot.press("up")
        assert app.chat_input.text == "/keys", "this panel's messages are still recalled (from memory)"
        assert app.chat_log.plain_text().count("symbolic link") == 1, "said once"
    assert victim.read_text(encoding="utf-8") == "\n# t\n+export SECRET=1\n"


# -- Tab completion ----------------------------------------------------------------------


def test_usage_strings_give_the_argument_kinds():
    slots, flags = parse_usage("/swap <opus|sonnet|haiku|latest|mini|n|claude-...> [--temp] [--force]")
    assert [s.kinds for s in slots] == [("model",)] and flags == ["--temp", "--force"]
    assert slots[0].words == ("opus", "sonnet", "haiku", "latest", "mini")
    slots, _ = parse_usage("/unevict last|<row_id>...")
    assert slots[0].words == ("last",) and slots[0].kinds == ("row_id",) and slots[0].repeats
    slots, _ = parse_usage("/export [N] <path>")
    assert [s.kinds for s in slots] == [(), ("path",)] and slots[0].optional


def test_complete_commands_arguments_and_paths(session_factory, isolated_home):
    ctx = session_factory("comp")
    ctx.store.append("user", "remember the lease")
    (isolated_home / "roles").mkdir()
    (isolated_home / "roles" / "coder.md").write_text("x", encoding="utf-8")
    assert complete(ctx, "/co").values == ["/compress", "/context", "/copy", "/cost"]
    assert complete(ctx, "/swap so").values == ["sonnet"]
    assert "claude-haiku-4-5" in complete(ctx, "/swap claude-").values
    assert complete(ctx, "/swap sonnet --t").values == ["--temp"]
    pin = complete(ctx, "/pin ")
    assert pin.values == [str(ctx.store.history()[-1].id)] and "remember the lease" in pin.candidates[0].hint
    assert complete(ctx, "/role ~/rol").values == ["~/roles/"]
    assert complete(ctx, "/role ~/roles/c").values == ["~/roles/coder.md"]
    assert complete(ctx, f"see {isolated_home}/roles/co").values == [f"{isolated_home}/roles/coder.md"]
    assert complete(ctx, "/inbox o").values == ["on", "off"], "in the order of the usage"
    (isolated_home / "roles" / "co\x1b]52;c;bad\x07.md").write_text("x", encoding="utf-8")
    assert complete(ctx, "/role ~/roles/c").values == ["~/roles/coder.md"], "a name with control characters"
    assert complete(ctx, "/nosuch x").values == [], "an unknown command completes nothing (and says so)"
    assert complete(ctx, "a plain message") is None


async def test_tab_completes_in_the_panel_and_lists_the_choices(make_app, instance, isolated_home):
    with TurnStore(instance.turns_path) as store:
        store.append("user", "the first row")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        field = app.chat_input
        hint = app._chat_screen.query_one("#completions")
        await type_text(pilot, "/sw")
        await pilot.press("tab")
        assert field.text == "/swap " and not hint.display
        await type_text(pilot, "ha")
        await pilot.press("tab")
        assert field.text == "/swap haiku "
        field.clear()
        await type_text(pilot, "/co")
        await pilot.press("tab")
        await pilot.pause()
        assert field.text == "/compress" and hint.display
        assert "[/compress]" in str(hint.render()) and "/context" in str(hint.render())
        assert "— shrink the window" in str(hint.render()), "the help of the command in the input"
        await pilot.press("tab")
        assert field.text == "/context"
        await pilot.press("tab")
        assert field.text == "/copy"
        await pilot.press("space")  # any other key ends the choice
        await pilot.pause()
        assert not hint.display and field.text == "/copy "
        assert app.focused is field, "Tab completed: the focus stayed in the input"
        field.clear()
        await type_text(pilot, "just words")
        await pilot.press("tab")
        assert app.focused is field and field.text == "just words", "nothing to complete: Tab does nothing"
        await pilot.click("#log")
        assert app.focused is field, "a click on the log leaves the typing in the input"


async def test_row_ids_complete_with_their_words_shown_not_obeyed(make_app, instance):
    with TurnStore(instance.turns_path) as store:
        first = store.append("user", "the first row")
        second = store.append("assistant", "\x1b[8mconcealed by the model")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await type_text(pilot, "/pin ")
        await pilot.press("tab")
        await pilot.pause()
        shown = str(app._chat_screen.query_one("#completions").render())
        assert app.chat_input.text in (f"/pin {first}", f"/pin {second}")
        assert "user: the first row" in shown and "\\x1b[8m" in shown and "\x1b" not in shown


# -- the log: following, the marker, End, keyboard focus -----------------------------------


async def test_log_follows_until_scrolled_up_then_shows_the_marker_and_end_jumps_down(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        log = app.chat_log
        for n in range(60):
            app.say(f"line {n}")
        await pilot.pause()
        assert log.following and log.scroll_y == log.max_scroll_y, "at the bottom, new output scrolls into view"
        await pilot.press("pageup")
        await pilot.pause()
        assert not log.following and not log.marker_shown, "scrolled up, nothing new yet"
        top = log.scroll_y
        app.say("something new")
        await pilot.pause()
        assert log.scroll_y == top, "scrolled up: the view stays where the user put it"
        assert log.marker_shown
        last_row = log.render_line(log.scrollable_content_region.height - 1).text
        assert MARKER.strip() in last_row
        await type_text(pilot, "abc")
        await pilot.press("end")
        await pilot.pause()
        assert log.following and not log.marker_shown and log.scroll_y == log.max_scroll_y
        assert "something new" in log.render_line(log.scrollable_content_region.height - 1).text
        app.chat_input.move_cursor((0, 0))
        await pilot.press("end")  # no marker: End is the input's own key again
        assert app.chat_input.cursor_location == (0, 3) and app.chat_input.text == "abc"


async def test_pageup_right_after_new_output_is_not_undone_by_the_follow_scroll(make_app):
    """A scroll down queued by new output used to run after a PageUp pressed at once, taking the view
    back down (and following again): seen in tmux with an answer streaming."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        log = app.chat_log
        for n in range(60):
            app.say(f"line {n}")
        await pilot.pause()
        for n in range(5):
            app.say(f"streamed {n}")  # queues the follow scroll
            app.action_scroll_log(-1)  # PageUp before that scroll ran
            await pilot.pause()
            assert not log.following and log.scroll_y < log.max_scroll_y - 1, n
            app.action_scroll_log(1)
            app.action_scroll_log(1)
            app.action_scroll_log(1)
            await pilot.pause()
            assert log.following, "PageDown to the bottom follows again"
        app.action_scroll_log(-1)
        await pilot.pause()
        app.say("more")
        await pilot.pause()
        assert log.marker_shown


async def test_the_log_takes_the_keyboard_expands_a_result_and_copies_it(make_app, monkeypatch, tmp_path):
    from tests.ui.test_tui_widgets import fake_wayland_clipboard

    clip = fake_wayland_clipboard(monkeypatch, tmp_path)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        log = app.chat_log
        app.say("before")
        log.append(LogEntry("result", "result", "line 1, click to expand", "line 1\nline 2\nline 3\nline 4",
                            expand_replaces=True))
        app.say("after")
        last = len(log.entries) - 1
        await pilot.press("shift+tab")
        assert app.focused is log and log.selected == last
        await pilot.press("up")
        assert log.selected == last - 1
        await pilot.press("enter")
        assert log.entries[last - 1].expanded
        await pilot.press("c")
        await pilot.pause(0.3)
        assert clip.read_text(encoding="utf-8") == "line 1\nline 2\nline 3\nline 4"
        await pilot.press("enter")
        assert not log.entries[last - 1].expanded
        await pilot.press("escape")
        assert app.focused is app.chat_input


# -- /copy over SSH: OSC 52 ----------------------------------------------------------------


def no_clipboard_tool(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import pyperclip

    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.setattr(pyperclip, "copy", pyperclip.lazy_load_stub_copy)
    monkeypatch.setattr(pyperclip, "paste", pyperclip.lazy_load_stub_paste)


async def test_copy_falls_back_to_osc_52_without_a_clipboard_tool(make_app, instance, monkeypatch, tmp_path):
    import base64

    with TurnStore(instance.turns_path) as store:
        store.append("user", "show me")
        store.append("assistant", "Here:\n\n```python\nprint('hi')\n```\n")
    no_clipboard_tool(monkeypatch, tmp_path)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        written: list[str] = []
        monkeypatch.setattr(app._driver, "write", written.append)
        await type_text(pilot, "/copy 1")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.clipboard == "print('hi')"
        encoded = base64.b64encode("print('hi')".encode()).decode()
        assert f"\x1b]52;c;{encoded}\a" in written
        assert "through the terminal (OSC 52" in app.chat_log.plain_text()


async def test_only_the_last_answers_captions_offer_copy_n_and_it_copies_the_block_named(
        make_app, instance, monkeypatch, tmp_path):
    """The panel numbers code blocks per answer and /copy N reads the last answer: an older answer's
    caption saying "/copy 1" would name a block that /copy 1 does not take."""
    with TurnStore(instance.turns_path) as store:
        store.append("user", "first?")
        store.append("assistant", "Old:\n\n```python\nprint('old')\n```\n")
        store.append("user", "second?")
        store.append("assistant", "New:\n\n```sh\necho new\n```\n")
    no_clipboard_tool(monkeypatch, tmp_path)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        log = app.chat_log
        shown = "\n".join(log.render_line(y).text for y in range(log.virtual_size.height))
        assert "python · block 1 · click to copy" in shown, shown
        assert "sh · block 1 · click or /copy 1 to copy" in shown, shown
        await type_text(pilot, "/copy 1")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.clipboard == "echo new"
        log.append(LogEntry("assistant", "assistant", "plain, no code"))  # a newer answer with no block
        await pilot.pause()
        shown = "\n".join(log.render_line(y).text for y in range(log.virtual_size.height))
        assert "or /copy 1" not in shown and shown.count("click to copy") == 2, shown


# -- refused commands, the tour's step 5, Ctrl+End in the role editor -----------------------


async def test_a_refused_command_is_given_back_selected_so_the_next_one_replaces_it(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await type_text(pilot, "/swap gpt-4")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.chat_input.text == "/swap gpt-4" and app.chat_input.selected_text == "/swap gpt-4"
        assert "unknown model 'gpt-4'" in app.chat_log.plain_text()
        await type_text(pilot, "/tokens 500")
        assert app.chat_input.text == "/tokens 500", "the next command replaces the refused one"


async def test_tour_step_5_by_keyboard_and_ctrl_end_in_the_role_editor(mnemara_home):
    from mnemara.demo.tour import Demo
    from mnemara.demo.script import STEPS, Tour

    with Demo() as demo:
        app = MnemaraApp(demo.instance, tour=Tour())
        try:
            async with app.run_test(size=(110, 36)) as pilot:
                await wait_for(pilot, lambda: app.chat_input.text == STEPS[0].message, 10, "the tour's start")
                app.tour.index = len(STEPS) - 1  # at step 5, as after four turns
                app.chat_input.clear()
                app._show_tour([STEPS[-1].intro], STEPS[-1].message)
                await wait_for(pilot, lambda: app.chat_input.text == STEPS[-1].message, 10, "step 5's message")
                await type_text(pilot, "/role_doc")
                await pilot.press("ctrl+s")
                await wait_for(pilot, lambda: isinstance(app.screen, RoleEditor), 10, "the role editor")
                editor = app.screen.editor
                editor.move_cursor((0, 0))
                await pilot.press("ctrl+end")
                assert editor.cursor_location == editor.document.end
                await pilot.press("ctrl+home")
                assert editor.cursor_location == (0, 0)
                await pilot.press("escape")
                await wait_for(pilot, lambda: not isinstance(app.screen, RoleEditor), 10, "the editor to close")
                assert app.chat_input.text == STEPS[-1].message, "the step's message is back after the command"
                assert "says/role_doc" not in app.chat_log.plain_text()
        finally:
            app.session.close()


async def test_a_first_run_offers_the_enter_key(make_app, instance):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert "/keys enter" in app.chat_log.plain_text()
    app2 = make_app()
    (instance.prompt_history_path).write_text("\n# t\n+hello\n", encoding="utf-8")
    async with app2.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert "/keys enter" not in app2.chat_log.plain_text(), "only on a first run"


async def test_keys_enter_changes_the_panel_live_and_enter_runs_a_command(make_app, instance):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await type_text(pilot, "/keys enter")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.chat_input.send_key == "enter" and "Enter: send" in app.chat_input.placeholder
        app.post_message(events.Paste("pasted\nlines\n"))  # a paste keeps its newlines: nothing is sent
        await pilot.pause()
        assert app.chat_input.text == "pasted\nlines\n" and app._turn is None
        app.chat_input.clear()
        await type_text(pilot, "/keys ctrl+s")
        await pilot.press("enter")
        await pilot.pause()
        assert app.chat_input.send_key == "ctrl+s" and app.chat_input.text == ""
        assert Config.load(instance.config_path).send_key == "ctrl+s"
        await type_text(pilot, "a")
        await pilot.press("enter")
        assert app.chat_input.text == "a\n", "with ctrl+s, Enter is a newline again"


def test_the_repl_tab_completes_the_same_way(session_factory):
    from prompt_toolkit.completion import CompleteEvent
    from prompt_toolkit.document import Document

    from mnemara.ui.repl.completion import SlashCompleter

    completer = SlashCompleter(session_factory("repl-tab"))
    found = list(completer.get_completions(Document("/swap ha"), CompleteEvent(completion_requested=True)))
    assert [(c.text, c.start_position) for c in found] == [("haiku", -2)]
    assert [c.text for c in completer.get_completions(Document("/co"), CompleteEvent())] == [
        "/compress", "/context", "/copy", "/cost"]
    assert list(completer.get_completions(Document("plain words"), CompleteEvent())) == []
