"""The chat panel driven by Textual's pilot against the real session, SDK and Claude CLI.

Only the model is scripted (mnemara.testing.scripted_api.ScriptedAPI on 127.0.0.1); the
store, the role doc file, the permission gate and the CLI are real.
"""
from __future__ import annotations

from typing import Any

import pytest

from mnemara.commands import specs
from mnemara.core.config import update_config
from mnemara.store.instance import Instance
from mnemara.testing.scripted_api import reply, tool_use
from mnemara.ui.tui.app import MnemaraApp
from mnemara.ui.tui.screens.context_viewer import ContextViewer
from mnemara.ui.tui.screens.permission import PermissionScreen
from mnemara.ui.tui.screens.role_editor import RoleEditor
from mnemara.ui.tui.screens.text_prompt import TextPrompt

from tests.tui_support import burst, instance, make_app, type_text, wait_for  # noqa: F401  (fixtures)

pytestmark = pytest.mark.e2e
SIZE = (110, 34)


@pytest.fixture
def api(scripted_api):
    return scripted_api


async def send(pilot: Any, app: MnemaraApp, text: str) -> None:
    app.chat_input.focus()
    await type_text(pilot, text)
    await pilot.press("ctrl+s")


async def finish_turn(pilot: Any, app: MnemaraApp) -> None:
    await wait_for(pilot, lambda: app._turn is not None and not app.turn_running, what="the turn to end")
    await pilot.pause()


# -- chatting ------------------------------------------------------------------------------


async def test_ctrl_s_streams_answers_sends_bursts_whole_queues_text_sent_mid_turn_and_escape_cancels(
        api, make_app, instance):
    """One panel and one CLI (kept between turns) for six turns; each phase's assertions name it.

    1. Ctrl+S sends the whole input (Enter is a newline); the answer streams in under the display name.
    2. The status line stops saying "working…" as soon as an answer is complete, on the fresh CLI and on the
       kept one. (It used to keep the busy notice until something else redrew it: the panel redrew on the
       turn worker's end while the session's turn generator, left unfinished by a ``break``, still had
       ``busy`` set.)
    3. Ctrl+S right after a burst of keys (a terminal delivers a paste or fast typing in one read) sends
       the whole text, not a prefix (tests/ui/test_tui_input_order.py has the slash-command and editor cases).
    4. Text sent while a turn runs is queued, and sent when that turn ends.
    5. Escape cancels a running turn: the queued text goes back into the input unsent, before what was
       typed since, which Escape leaves alone; with nothing running, Escape clears the input.
    """
    answer = "The lease timeout lives in server.py as LEASE_SECONDS, read at start-up."
    burst_text = "hello, what can you do? " * 4
    api.push(reply(answer, delay=0.03, chunk_size=6), reply("ANSWER-2 is complete."),
             reply("I can do several things."),
             reply("slow " * 20, delay=0.1, chunk_size=5), reply("answer to the queued one"),
             reply("slow " * 60, delay=0.2, chunk_size=5))
    update_config(instance.config_path, display_name="Mimir")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        status = app._chat_screen.query_one("#status")
        await pilot.pause()
        app.chat_input.focus()
        await type_text(pilot, "where is")
        await pilot.press("enter")  # Enter is a newline, not send
        await type_text(pilot, "the timeout?")
        assert app.chat_input.text == "where is\nthe timeout?" and app._turn is None, "Enter must not send"
        await pilot.press("ctrl+s")
        assert app.chat_input.text == "", "Ctrl+S sends and empties the input"
        seen: set[str] = set()

        def streamed() -> bool:
            for entry in app.chat_log.entries:
                if entry.kind == "assistant":
                    seen.add(entry.text)
            return answer in app.chat_log.plain_text()

        await wait_for(pilot, streamed, what="the streamed answer")
        await wait_for(pilot, lambda: "working…" not in status.status.line(), 5, "the status line to go idle")
        assert not app.session.busy and "turns: 2/20" in status.status.line(), "idle status after the first turn"
        log = app.chat_log.plain_text()
        assert "you: where is\nthe timeout?" in log
        assert f"Mimir: {answer}" in log and "assistant:" not in log, "the answer is under the display name"
        assert any(0 < len(s) < len(answer) and answer.startswith(s) for s in seen), seen  # arrived in pieces
        assert api.last.user_text().endswith("where is\nthe timeout?")
        rows = app.session.store.history()
        assert [r.role for r in rows] == ["user", "assistant"] and rows[1].text == answer

        # 2. a second answer, through the kept CLI: the busy notice goes as soon as it is shown
        await send(pilot, app, "question 2")
        # A turn through a kept CLI can end between two polls, so the busy notice may come and go unseen.
        await wait_for(pilot, lambda: "ANSWER-2 is complete." in app.chat_log.plain_text(), 30, "the second answer")
        await wait_for(pilot, lambda: "working…" not in status.status.line(), 5, "the status line to go idle")
        assert not app.session.busy and "turns: 4/20" in status.status.line(), "idle status after the second turn"
        await finish_turn(pilot, app)

        # 3. Ctrl+S right after a burst of keys sends the whole text
        user_rows = lambda: [r.text for r in app.session.store.history() if r.role == "user"]  # noqa: E731
        app.chat_input.focus()
        burst(app, burst_text)
        await wait_for(pilot, lambda: "I can do several things." in app.chat_log.plain_text(), 30, "the burst's answer")
        await finish_turn(pilot, app)
        assert app.chat_input.text == "", "the burst left text in the input"
        assert api.last.user_text().endswith(burst_text), "the burst's request lost text"
        assert user_rows()[-1] == burst_text, "the burst's stored message lost text"

        # 4. text sent while a turn runs is queued, and sent when the turn ends
        burst(app, "first")
        await wait_for(pilot, lambda: app.chat_log.entries[-1].kind == "assistant"
                       and app.chat_log.entries[-1].text.startswith("slow"), 20, "the slow turn's first delta")
        burst(app, "queued one")
        await wait_for(pilot, lambda: "queued: queued one" in app.chat_log.plain_text(), 20, "the queued message")
        assert app.turn_running and user_rows()[-1] == "first", "text sent mid-turn waits for the turn"
        await wait_for(pilot, lambda: "answer to the queued one" in app.chat_log.plain_text(), 40, "the queued turn")
        await finish_turn(pilot, app)
        log = app.chat_log.plain_text()
        assert "queued:" not in log and log.index("you: first") < log.index("you: queued one"), \
            "the queued message was sent after the turn it waited for"
        assert user_rows()[-2:] == ["first", "queued one"]

        # 5. Escape cancels a running turn; queued text goes back to the input, typed text stays
        requests = len(api.message_requests())
        await send(pilot, app, "go slowly")
        await wait_for(pilot, lambda: app.chat_log.entries[-1].kind == "assistant"
                       and app.chat_log.entries[-1].text.startswith("slow"), what="the slow turn's first delta")
        burst(app, "second")
        await wait_for(pilot, lambda: "queued: second" in app.chat_log.plain_text(), 20, "the queued message")
        await type_text(pilot, "still typing")  # the input works while the turn runs
        assert app.chat_input.text == "still typing"
        await pilot.press("escape")
        await finish_turn(pilot, app)
        assert app.chat_input.text == "second\nstill typing", \
            "Escape put the queued text back before the typed text, and did not clear the input"
        assert "queued: (back in the input, not sent)" in app.chat_log.plain_text()
        assert not app._queued and not app.turn_running and user_rows()[-1] == "go slowly", "the queued text was sent"
        assert len(api.message_requests()) == requests + 1, "the queued text was not sent after Escape"
        await pilot.press("escape")
        assert app.chat_input.text == "", "now that nothing runs, Escape clears the input"
        last = app.session.store.history()[-1]
        assert last.meta.get("interrupted") is True, "the cancelled answer is marked"
        assert len(last.text) < len("slow " * 60), "Escape cut the answer short"


async def test_permission_modal_allows_then_denies_and_ctrl_c_while_it_is_open_denies_and_quits(api, instance):
    """Three turns through one CLI, each asking to run a command: ``y`` runs it, ``n`` denies it (the
    tool result says so), and Ctrl+C while the question is open denies it and stops the turn; Ctrl+C
    again at once quits the panel (issue 27: the first Ctrl+C of a turn stops it, the next one quits).

    The session keeps a spare CLI (as by default): the one started before the first message serves all
    three turns, and quitting during the third starts none for a next turn that will never come.
    """
    from mnemara.session.agent import AgentSession

    session = AgentSession(instance, warm_spare=True)
    launches: list[str] = []
    launch = session.launcher.launch

    def counted_launch(system_prompt: str) -> Any:  # the real launch, counted
        launches.append(system_prompt)
        return launch(system_prompt)

    session.launcher.launch = counted_launch
    for command in ("echo tui-permission-ok", "echo tui-permission-no"):
        api.push(reply(tool_use("Bash", {"command": command, "description": "Say it"})), reply("done"))
    api.push(reply(tool_use("Bash", {"command": "echo never-run"})), reply("ok"))
    app = MnemaraApp(instance, session=session)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: session.pool.spare, what="the spare CLI")
            for answer, command, allowed in (("y", "echo tui-permission-ok", True), ("n", "echo tui-permission-no", False)):
                asked = len(api.message_requests())
                await send(pilot, app, f"run {command}")
                modal = await wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen)
                                       and app.screen.query("#permission-target") and app.screen.armed
                                       and app.screen, what=f"the permission modal for {command}, keys armed")
                assert modal.request.tool_name == "Bash" and modal.request.target == command
                assert str(modal.query_one("#permission-target").render()) == command
                assert str(modal.query_one("#permission-summary").render()) == "policy: Bash · command"
                # issue 39: the description as a person reads it, not {"description": "Say it"}
                assert str(modal.query_one("#permission-input").render()) == "description: Say it"
                await pilot.press(answer)
                await finish_turn(pilot, app)
                assert not isinstance(app.screen, PermissionScreen), f"the modal closes on {answer!r}"
                results = api.message_requests()[asked + 1].new_tool_results()
                assert len(results) == 1
                text = str(results[0].get("content"))
                if allowed:
                    assert "tui-permission-ok" in text and not results[0].get("is_error"), f"'y' runs the command: {text}"
                else:
                    assert "denied" in text.lower() and results[0].get("is_error"), f"'n' denies the command: {text}"
                log = app.chat_log.plain_text()
                assert f"▸ tool: Bash command={command}" in log and "\nresult" in log.replace("▸ ", "")

            await send(pilot, app, "run it")
            await wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen), what="the third permission modal")
            await pilot.press("ctrl+c", "ctrl+c")
            await wait_for(pilot, lambda: app.session._closed, what="the session to close on Ctrl+C")
            assert "press Ctrl+C again to quit" in app.chat_log.plain_text()
    finally:
        await session.aclose()  # the processes end even when an assertion fails
    assert app.return_code == 0, "Ctrl+C with a question open quits cleanly"
    assert session.stats == {"spare_used": 1, "fresh_started": 0, "reused": 2}, session.stats
    assert len(launches) == 1, "quitting during a turn started a CLI for a next turn"
    assert all("never-run" not in str(r.get("content")) for req in api.message_requests() for r in req.tool_results()), \
        "Ctrl+C denied the open question"


async def test_history_is_shown_when_the_panel_opens_and_ctrl_l_clears_the_screen_but_not_the_store(
        make_app, instance):
    from mnemara.store.turns import TurnStore

    with TurnStore(instance.turns_path) as store:
        store.append("user", "earlier question")
        store.append("assistant", "earlier answer")
        store.upsert_slot("health", "system", "HP 73/100")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        log = app.chat_log.plain_text()
        assert "📌 00 slot: health (system): HP 73/100" in log, "the pinned slot is shown at open"
        assert "you: earlier question\nassistant: earlier answer" in log, "the history is shown at open"
        before = [(r.id, r.role, r.text) for r in app.session.store.history()]
        await pilot.press("ctrl+l")
        assert app.chat_log.entries == [], "Ctrl+L clears the screen"
        assert [(r.id, r.role, r.text) for r in app.session.store.history()] == before, "Ctrl+L keeps the store"


async def test_help_lists_every_command_and_unknown_ones_are_named(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "/help")
        await pilot.pause()
        log = app.chat_log.plain_text()
        for spec in specs():
            assert f"/{spec.name}" in log, spec.name
        await send(pilot, app, "/frobnicate now")
        await pilot.pause()
        assert "unknown command /frobnicate" in app.chat_log.plain_text()


async def test_ctrl_c_twice_quits_after_closing_the_session(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.is_running and not app._quitting and "press Ctrl+C again to quit" in app.chat_log.plain_text()
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: app.session._closed, what="the session to close")
    assert app.return_code == 0 and app.session._closed


# -- role doc editor -------------------------------------------------------------------------


async def test_a_failed_turn_shows_its_error_the_role_editor_saves_for_the_next_request_and_stop_cancels(
        api, make_app, instance, isolated_home):
    """One panel, three turns, two CLIs (a failed turn never hands its CLI on), each phase's assertions named:

    1. a turn the API fails (HTTP 500) shows its error on one line, and the panel goes on;
    2. the role editor saves the role doc and the next request's system prompt ends with the new text
       (that an edited role doc also gets a new CLI process is test_cli_reuse_e2e's);
    3. /stop cancels a running turn (on the CLI kept from the second turn).
    """
    from mnemara.testing.scripted_api import http_error

    role = isolated_home / "role.md"
    role.write_text("You are ROLE-VERSION-ONE.", encoding="utf-8")
    update_config(instance.config_path, role_doc_path=str(role))
    api.push(http_error(500), reply("second try works"), reply("slow " * 60, delay=0.2, chunk_size=5))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "first")
        await finish_turn(pilot, app)
        errors = [e for e in app.chat_log.entries if e.kind == "error"]
        assert errors and "\n" not in errors[0].text, f"a failed turn shows its error on one line: {errors}"

        await pilot.click("#role")
        editor = await wait_for(pilot, lambda: isinstance(app.screen, RoleEditor) and app.screen, what="editor")
        area = editor.editor
        assert area.text == "You are ROLE-VERSION-ONE."
        area.select_all()
        await type_text(pilot, "You are ROLE-VERSION-TWO.")
        await pilot.press("ctrl+s")
        assert role.read_text(encoding="utf-8") == "You are ROLE-VERSION-TWO.", "the role editor saves with Ctrl+S"
        await pilot.press("escape")
        assert not isinstance(app.screen, RoleEditor)
        await send(pilot, app, "second")
        await finish_turn(pilot, app)
        assert "assistant: second try works" in app.chat_log.plain_text(), "the panel goes on after a failed turn"

        await send(pilot, app, "go slowly")
        await wait_for(pilot, lambda: app.chat_log.entries[-1].kind == "assistant"
                       and app.chat_log.entries[-1].text.startswith("slow"), what="the slow turn's first delta")
        await send(pilot, app, "/stop")
        await finish_turn(pilot, app)
        assert app.session.store.history()[-1].meta.get("interrupted") is True, "/stop cancelled the running turn"
    systems = [r.system_text for r in api.message_requests()]
    assert len(systems) == 3, systems
    assert systems[0].endswith("You are ROLE-VERSION-ONE."), "the failed turn's request had the first role"
    assert systems[1].endswith("You are ROLE-VERSION-TWO."), "the request after the save uses the saved role"


async def test_role_editor_without_a_role_doc_creates_one_and_points_config_at_it(make_app, instance):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "/role_doc")
        await wait_for(pilot, lambda: isinstance(app.screen, RoleEditor), what="editor")
        await type_text(pilot, "Be terse.")
        await pilot.press("ctrl+s")
        await pilot.pause()
    assert instance.role_copy_path.read_text(encoding="utf-8") == "Be terse."
    from mnemara.core.config import Config

    assert Config.load(instance.config_path).role_doc_path == str(instance.role_copy_path)


async def test_role_editor_warns_before_discarding_unsaved_text(make_app, instance, isolated_home):
    role = isolated_home / "role.md"
    role.write_text("original", encoding="utf-8")
    update_config(instance.config_path, role_doc_path=str(role))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.click("#role")
        editor = await wait_for(pilot, lambda: isinstance(app.screen, RoleEditor) and app.screen, what="editor")
        await type_text(pilot, "draft ")
        await pilot.press("escape")
        assert app.screen is editor and "unsaved" in str(editor.query_one("#role-status").render())
        await pilot.press("escape")
        assert not isinstance(app.screen, RoleEditor)
    assert role.read_text(encoding="utf-8") == "original"


async def test_role_editor_copy_and_paste_go_through_the_clipboard(make_app, instance, isolated_home, monkeypatch, tmp_path):
    from tests.ui.test_tui_widgets import fake_wayland_clipboard

    clip = fake_wayland_clipboard(monkeypatch, tmp_path)
    role = isolated_home / "role.md"
    role.write_text("alpha", encoding="utf-8")
    update_config(instance.config_path, role_doc_path=str(role))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.click("#role")
        await wait_for(pilot, lambda: isinstance(app.screen, RoleEditor), what="editor")
        await pilot.click("#role-copy")
        assert clip.read_text(encoding="utf-8") == "alpha"
        clip.write_text(" beta", encoding="utf-8")
        app.screen.editor.move_cursor((0, 5))
        await pilot.click("#role-paste")
        assert app.screen.editor.text == "alpha beta"


async def test_role_editor_says_when_there_is_no_clipboard(make_app, monkeypatch):
    import pyperclip

    monkeypatch.setenv("PATH", "/nonexistent")
    for var in ("DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(pyperclip, "paste", pyperclip.lazy_load_stub_paste)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.click("#role")
        editor = await wait_for(pilot, lambda: isinstance(app.screen, RoleEditor) and app.screen, what="editor")
        before = editor.editor.text
        await pilot.click("#role-paste")
        assert "no clipboard available" in str(editor.query_one("#role-status").render())
        assert editor.editor.text == before


# -- context viewer ---------------------------------------------------------------------------


def seed(instance: Instance) -> dict[str, int]:
    from mnemara.store.turns import TurnStore

    with TurnStore(instance.turns_path) as store:
        ids = {
            "q": store.append("user", "question one"),
            "a": store.append("assistant", "answer one"),
            "health": store.upsert_slot("health", "system", "HP 73/100"),
            "stamina": store.upsert_slot("stamina", "system", "stamina 41/100"),
        }
    return ids


async def open_viewer(pilot: Any, app: MnemaraApp) -> ContextViewer:
    await send(pilot, app, "/context")
    return await wait_for(pilot, lambda: isinstance(app.screen, ContextViewer) and app.screen, what="viewer")


async def answer_prompt(pilot: Any, app: MnemaraApp, text: str | None) -> None:
    prompt = await wait_for(pilot, lambda: isinstance(app.screen, TextPrompt) and app.screen, what="prompt")
    field = prompt.query_one("#prompt-input")
    if text is not None:
        field.value = ""
        await type_text(pilot, text)
    await pilot.press("enter")
    await pilot.pause()


async def pick(pilot: Any, viewer: ContextViewer, tab: str, list_id: str, turn_id: int) -> None:
    await pilot.click(f"#--content-tab-{tab}")
    await pilot.pause()
    option_list = viewer.query_one(list_id)
    option_list.highlighted = option_list.get_option_index(str(turn_id))
    await pilot.pause()
    assert viewer.selected == turn_id


async def test_context_viewer_rename_move_edit_and_add_slot_change_the_store(make_app, instance):
    ids = seed(instance)
    app = make_app()
    store = app.session.store
    async with app.run_test(size=SIZE) as pilot:
        viewer = await open_viewer(pilot, app)
        await pick(pilot, viewer, "tab-pinned", "#pinned-list", ids["health"])
        assert "00  📌 slot: health" in str(viewer.query_one("#detail-header").render())

        await pilot.click("#slot-rename")
        await answer_prompt(pilot, app, "hp")
        assert [(t.pin_label, t.slot_pos, t.id) for t in store.pinned()] == [("hp", 0, ids["health"]), ("stamina", 1, ids["stamina"])]

        await pilot.click("#slot-rename")
        await answer_prompt(pilot, app, "not a slug!")
        assert "invalid slot label" in str(viewer.query_one("#ctx-status").render())
        assert [t.pin_label for t in store.pinned()] == ["hp", "stamina"]

        await pick(pilot, viewer, "tab-pinned", "#pinned-list", ids["stamina"])
        await pilot.click("#slot-move")
        await answer_prompt(pilot, app, "00")
        assert [t.pin_label for t in store.pinned()] == ["stamina", "hp"]
        option_texts = [str(o.prompt) for o in viewer.query_one("#pinned-list").options]
        assert option_texts[0].startswith("00  📌 slot: stamina") and option_texts[1].startswith("01  📌 slot: hp")

        await pick(pilot, viewer, "tab-pinned", "#pinned-list", ids["health"])
        body = viewer.query_one("#detail-body")
        await pilot.click("#detail-body")
        body.select_all()
        await type_text(pilot, "HP 99/100")
        await pilot.click("#detail-save")
        edited = store.get(ids["health"])
        assert edited.text == "HP 99/100" and edited.pin_label == "hp" and edited.slot_pos == 1

        await pilot.click("#slot-add")
        await answer_prompt(pilot, app, "mood")
        assert [(t.pin_label, t.slot_pos) for t in store.pinned()] == [("stamina", 0), ("hp", 1), ("mood", 2)]
        await pilot.click("#slot-add")
        await answer_prompt(pilot, app, "mood")
        assert "already exists" in str(viewer.query_one("#ctx-status").render())
        assert len(store.pinned()) == 3


async def test_context_viewer_pins_unpins_and_evicts_rows(make_app, instance):
    ids = seed(instance)
    app = make_app()
    store = app.session.store
    async with app.run_test(size=SIZE) as pilot:
        viewer = await open_viewer(pilot, app)
        await pick(pilot, viewer, "tab-rows", "#rows-list", ids["a"])
        await pilot.click("#row-pin")
        await answer_prompt(pilot, app, None)  # accept the suggested label
        assert store.get(ids["a"]).pin_label == f"row-{ids['a']}" and store.get(ids["a"]).slot_pos == 2

        await pick(pilot, viewer, "tab-pinned", "#pinned-list", ids["a"])
        await pilot.click("#slot-unpin")
        assert not store.get(ids["a"]).pinned

        await pick(pilot, viewer, "tab-rows", "#rows-list", ids["q"])
        await pilot.click("#row-evict")
        assert store.get(ids["q"]).evicted
        assert str(ids["q"]) not in [o.id for o in viewer.query_one("#rows-list").options]

        viewer.query_one("#role-filter").value = "assistant"
        await pilot.pause()
        assert [o.id for o in viewer.query_one("#rows-list").options] == [str(ids["a"])]
        await pilot.press("escape")
        assert not isinstance(app.screen, ContextViewer)


async def test_context_viewer_breakdown_bars(make_app, instance, isolated_home):
    seed(instance)
    role = isolated_home / "role.md"
    role.write_text("r" * 4000, encoding="utf-8")
    update_config(instance.config_path, role_doc_path=str(role), max_window_tokens=10_000)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        viewer = await open_viewer(pilot, app)
        bars = str(viewer.query_one("#ctx-bars").render())
        lines = {line.split("  ")[0].strip(): line for line in bars.splitlines() if line.strip()}
        assert set(lines) >= {"tool schemas", "role doc", "manifest", "pinned rows", "working window", "total"}
        assert "1K/10K  10.0%" in lines["role doc"] and "█" in lines["role doc"]


# -- errors, buttons, scrolling ------------------------------------------------------------


async def test_compress_button_shows_what_goes_asks_and_undo_puts_it_back(make_app, instance):
    from mnemara.store.turns import TurnStore
    from mnemara.ui.tui.screens.confirm import ConfirmScreen

    update_config(instance.config_path, max_window_tokens=8000)  # 25% of it = 2000 tokens, the floor
    with TurnStore(instance.turns_path) as store:
        for i in range(40):
            store.append("user" if i % 2 == 0 else "assistant", f"message {i} " + "lorem ipsum " * 40)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        rows = [t.id for t in app.session.store.live_rows()]
        await pilot.click("#compress")
        modal = await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen) and app.screen, what="the question")
        question = str(modal.query_one("#confirm-question").render())
        assert "25% of the 8000-token budget" in question and "take out of the window" in question
        assert [t.id for t in app.session.store.live_rows()] == rows  # nothing happened yet
        await pilot.press("n")
        await pilot.pause()
        assert "cancelled: nothing was changed" in app.chat_log.plain_text()
        assert [t.id for t in app.session.store.live_rows()] == rows
        await pilot.click("#compress")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the question again")
        await pilot.press("y")
        await pilot.pause()
        assert app.session.store.counts()["live_tokens"] <= 2000 and "/undo puts it back" in app.chat_log.plain_text()
        assert app.chat_input.has_focus  # the button did not keep the focus
        await send(pilot, app, "/undo")
        await pilot.pause()
        assert [t.id for t in app.session.store.live_rows()] == rows


async def test_compress_below_the_floor_says_so_and_keeps_the_conversation(make_app, instance):
    from mnemara.store.turns import TurnStore

    with TurnStore(instance.turns_path) as store:
        for i in range(11):
            store.append("user" if i % 2 == 0 else "assistant", f"message {i}")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.click("#compress")
        await pilot.pause()
        assert "under the floor of 2000" in app.chat_log.plain_text()
        assert len(app.session.store.live_rows()) == 11


async def test_after_a_button_click_typing_goes_to_the_input(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.click("#inbox")
        await pilot.pause()
        await type_text(pilot, "still typing")
        assert app.chat_input.text == "still typing" and app.chat_input.has_focus


async def test_inbox_button_and_status_say_one_state_explained_on_click_and_toggle_with_peer_poll(make_app, instance, tmp_path):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        button = app._chat_screen.query_one("#inbox")
        assert str(button.label) == "⚡ Inbox: n/a" and not button.disabled
        assert "| ⚡ Inbox: n/a" in app._chat_screen.query_one("#status").status.line()
        await pilot.click("#inbox")
        await pilot.pause()
        assert "peer polling is off for this panel: set peer_poll_enabled" in app.chat_log.plain_text()
    update_config(instance.config_path, peer_poll_enabled=True, peer_db_path=str(tmp_path / "peer.db"))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        button = app._chat_screen.query_one("#inbox")
        assert not button.disabled and str(button.label) == "⚡ Inbox: ON"
        await pilot.click("#inbox")
        await pilot.pause()
        assert str(button.label) == "⚡ Inbox: OFF" and not app.session.peer_inbox.enabled
        assert "⚡ Inbox: OFF" in app._chat_screen.query_one("#status").status.line()
        await pilot.press("ctrl+c")
    assert not app.session.peer_inbox.running


async def test_page_keys_scroll_the_log_while_the_input_has_focus(make_app, instance):
    from mnemara.store.turns import TurnStore

    update_config(instance.config_path, max_window_turns=200)
    with TurnStore(instance.turns_path) as store:
        store.append_many(("user" if i % 2 == 0 else "assistant", f"line {i}") for i in range(200))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        log = app.chat_log
        assert app.chat_input.has_focus and log.scroll_y == log.max_scroll_y > 0
        await pilot.press("pageup", "pageup")
        assert log.scroll_y < log.max_scroll_y
        up = log.scroll_y
        await pilot.press("pagedown")
        assert log.scroll_y > up and app.chat_input.has_focus


async def test_ctrl_c_over_unsaved_role_text_warns_once_then_quits(make_app, instance, isolated_home):
    role = isolated_home / "role.md"
    role.write_text("original", encoding="utf-8")
    update_config(instance.config_path, role_doc_path=str(role))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.click("#role")
        editor = await wait_for(pilot, lambda: isinstance(app.screen, RoleEditor) and app.screen, what="editor")
        await type_text(pilot, "draft ")
        await pilot.press("ctrl+c")
        assert app.screen is editor and "Ctrl+C again" in str(editor.query_one("#role-status").render())
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: app.session._closed, what="the session to close")
    assert app.return_code == 0 and role.read_text(encoding="utf-8") == "original"


async def test_a_peer_message_arrives_as_a_turn_and_the_panel_wakes_the_inbox_after_a_turn(
        api, make_app, instance, tmp_path):
    """Two peer deliveries through one CLI, each phase's assertions named:

    1. a message waiting in the peer db when the panel opens (peer_deliver_backlog) arrives as a turn;
    2. one that arrives while the user's turn runs goes out right after it (the session's post-turn wake,
       wired by attach_inbox as for the REPL), not at the next poll an hour later.
    """
    import sqlite3

    from mnemara.peer import db

    peer_db = tmp_path / "peer.db"
    with sqlite3.connect(peer_db) as conn:
        db.create_table(conn)
        db.insert_row(conn, "panel-b", "panel", '{"type": "task", "text": "please check the lease timeout"}')
    update_config(instance.config_path, peer_poll_enabled=True, peer_db_path=str(peer_db),
                  peer_poll_interval_seconds=3600, peer_deliver_backlog=True)
    api.push(reply("Checked: LEASE_SECONDS is 30."), reply("Looking at it."), reply("Checked the peer's lease question."))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: "Checked: LEASE_SECONDS is 30." in app.chat_log.plain_text(),
                       what="the inbox turn's answer")
        await finish_turn(pilot, app)
        inbox = app.session.peer_inbox
        inbox_entries = [e for e in app.chat_log.entries if e.who == "⚡ inbox"]
        assert len(inbox_entries) == 1 and "please check the lease timeout" in inbox_entries[0].text, \
            "the waiting peer message arrives as a turn"
        assert "please check the lease timeout" in api.last.user_text()
        assert inbox.stats.delivered_turns == 1

        # The inbox looks once more after its own turn (the post-turn wake); the next poll is an hour away.
        await wait_for(pilot, lambda: inbox.stats.polls >= 2 and not inbox._lock.locked(), what="the poll after it")
        with sqlite3.connect(peer_db) as conn:
            db.insert_row(conn, "panel-b", "panel", '{"type": "task", "text": "what about the lease?"}')
        await send(pilot, app, "hello")
        await wait_for(pilot, lambda: "Checked the peer's lease question." in app.chat_log.plain_text(),
                       what="the inbox turn right after the user's turn")
        await finish_turn(pilot, app)
        assert "what about the lease?" in api.last.user_text(), "the post-turn wake delivered the new message"
        assert [e.who for e in app.chat_log.entries if e.kind == "user"] == ["⚡ inbox", "you", "⚡ inbox"], [(e.who, e.text[:40]) for e in app.chat_log.entries]
