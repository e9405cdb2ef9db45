"""Nothing typed is lost: text the store could not hold as it came, and the spool's own failures.

No CLI is involved: without an API key a turn stores the user's message, says why it cannot run
and ends, which is exactly the step these tests attack (what reaches turns.sqlite or the spool).
"""
from __future__ import annotations

import io
import json
import sqlite3

from mnemara.core import events as ev
from mnemara.session.agent import AgentSession
from mnemara.store.health import BUSY_ENV
from mnemara.ui.repl.app import run_repl


def _texts(session: AgentSession) -> list[str]:
    return [t.text for t in session.store.history()]


async def test_undecodable_bytes_and_split_surrogates_are_stored_not_lost(tmp_path):
    """A lone surrogate (an undecodable byte passed through as a surrogate escape) used to make
    SQLite raise UnicodeEncodeError out of the turn: the message was neither stored nor spooled."""
    session = AgentSession.at(tmp_path / "x", warm_spare=False)
    try:
        events = [e async for e in session.aturn("bad \udcff byte and a split pair \ud83d\ude00")]
        notices = [e.message for e in events if isinstance(e, ev.Notice)]
        assert any("1 character(s) of your message were not valid UTF-8" in n for n in notices), notices
        assert isinstance(events[-1], ev.TurnDone)
        assert _texts(session) == ["bad \ufffd byte and a split pair \U0001F600"]
        assert not (tmp_path / "x" / "spool.jsonl").exists()
    finally:
        await session.aclose()


def test_piped_repl_goes_past_a_line_that_is_not_utf8(tmp_path):
    """A strict UTF-8 stdin with one bad byte used to end the REPL with a traceback, losing that
    line and every line after it."""
    session = AgentSession.at(tmp_path / "x", warm_spare=False)
    stdin = io.TextIOWrapper(io.BytesIO(b"first\nbad \xff byte\nthird\n"), encoding="utf-8", errors="strict")
    out, err = io.StringIO(), io.StringIO()
    try:
        assert run_repl(session, stdin=stdin, stdout=out, stderr=err) == 1  # no API key here: the turns fail
        assert _texts(session) == ["first", "bad \ufffd byte", "third"]
        assert "not valid UTF-8" in err.getvalue()
    finally:
        session.close()


def _spooled_line(text: str) -> bytes:
    return json.dumps({"role": "user", "blocks": [{"type": "text", "text": text}], "meta": {},
                       "created_at": "2026-01-01T00:00:00+00:00"}).encode()


async def test_a_torn_or_undecodable_spool_line_neither_blocks_turns_nor_swallows_a_row(tmp_path):
    """A writer killed mid-line leaves a spool whose last line is cut short (here inside a UTF-8
    sequence). That used to make every later turn raise UnicodeDecodeError (the new message neither
    stored nor spooled), and the next spooled row was glued onto the torn line and never stored."""
    folder = tmp_path / "x"
    session = AgentSession.at(folder, warm_spare=False)
    spool = folder / "spool.jsonl"
    torn = _spooled_line("kept before")[:-20] + b"\xc3"
    spool.write_bytes(_spooled_line("spooled first") + b"\n" + torn)
    session.recorder.spool.add("user", [{"type": "text", "text": "spooled after the tear"}])
    try:
        events = [e async for e in session.aturn("typed now")]
        assert isinstance(events[-1], ev.TurnDone)
        assert _texts(session) == ["spooled first", "spooled after the tear", "typed now"]
        assert spool.read_bytes() == torn + b"\n"  # the torn line is kept, byte for byte
        notices = [e.message for e in events if isinstance(e, ev.Notice)]
        assert any("2 row(s) kept in spool.jsonl" in n for n in notices), notices
        assert any("1 line(s) of" in n and "kept in the file" in n for n in notices), notices
    finally:
        await session.aclose()


def test_a_replay_cut_short_after_the_store_took_the_rows_never_stores_them_twice(tmp_path, monkeypatch):
    """Rows stored, then the spool could not be emptied (a full disk here; a process killed at that
    moment is the same): the spool used to raise out of the turn, and the next replay stored the
    same rows again."""
    import mnemara.core.fsutil as fsutil

    folder = tmp_path / "x"
    session = AgentSession.at(folder, warm_spare=False)
    spool = session.recorder.spool
    spool.add("user", [{"type": "text", "text": "waited in the spool"}])
    spool.add("assistant", [{"type": "text", "text": "its answer"}])
    real = fsutil._write_and_replace

    def disk_full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    try:
        monkeypatch.setattr(fsutil, "_write_and_replace", disk_full)
        assert session.turn("first").events[-1].error  # no key: refused after storing
        assert spool.count() == 2  # could not be emptied
        monkeypatch.setattr(fsutil, "_write_and_replace", real)
        session.turn("second")
        assert _texts(session) == ["waited in the spool", "its answer", "first", "second"]
        assert spool.count() == 0
    finally:
        session.close()


def _hold_the_store(folder) -> sqlite3.Connection:
    """Another process's write lock on turns.sqlite (the store waits MNEMARA_STORE_BUSY_SECONDS, then gives up)."""
    holder = sqlite3.connect(folder / "turns.sqlite", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    return holder


async def test_a_message_neither_the_store_nor_the_spool_can_take_is_said_not_saved(tmp_path, monkeypatch):
    """The store locked and the spool unwritable (a full disk, a read-only folder; here the spool's
    name is taken by a folder): the turn used to raise IsADirectoryError out of aturn (the piped
    REPL died with the rest of its input). Now one line says the message is NOT saved, the turn ends
    and the next one works."""
    monkeypatch.setenv(BUSY_ENV, "0.1")
    folder = tmp_path / "x"
    session = AgentSession.at(folder, warm_spare=False)
    (folder / "spool.jsonl").mkdir()
    holder = _hold_the_store(folder)
    try:
        events = [e async for e in session.aturn("cannot be kept")]
        errors = [e for e in events if isinstance(e, ev.ErrorEvent)]
        assert [e.kind for e in errors] == ["unsaved_message"]
        assert "your message is NOT saved" in errors[0].message and "spool.jsonl" in errors[0].message
        assert isinstance(events[-1], ev.TurnDone) and events[-1].error and events[-1].user_row_id is None
        holder.rollback()
        [e async for e in session.aturn("the next one")]
        assert _texts(session) == ["the next one"]
    finally:
        holder.close()
        await session.aclose()


async def test_the_panel_puts_an_unsaved_message_back_in_its_input(tmp_path, monkeypatch):
    from mnemara.store.instance import Instance
    from mnemara.ui.tui.app import MnemaraApp

    from tests.tui_support import type_text, wait_for

    monkeypatch.setenv(BUSY_ENV, "0.1")
    instance = Instance.create("unsaved")
    (instance.root / "spool.jsonl").mkdir()
    app = MnemaraApp(instance)
    holder = _hold_the_store(instance.root)
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            app.chat_input.focus()
            await type_text(pilot, "keep me")
            await pilot.press("ctrl+s")
            await wait_for(pilot, lambda: app._turn is not None and not app.turn_running, 30, "the turn to end")
            assert app.chat_input.text == "keep me"
            assert "back in the input (it was not saved)" in app.chat_log.plain_text()
            # a message queued behind an unsaved one follows it back into the input, in order
            app.chat_input.clear()
            app.send_text("one")
            app.send_text("two")  # the first turn has not started yet: this one is queued
            assert [text for text, _ in app._queued] == ["two"]
            await wait_for(pilot, lambda: not app.turn_running and not app._queued, 30, "the turns to end")
            await pilot.pause()
            assert app.chat_input.text == "one\ntwo"
            # a peer inbox turn that cannot be saved is not the user's message: nothing lands in the input
            app.chat_input.clear()
            app.start_turn("[peer inbox] row 7 from planner", who="⚡ inbox")
            await wait_for(pilot, lambda: not app.turn_running, 30, "the inbox turn to end")
            await pilot.pause()
            assert app.chat_input.text == ""
    finally:
        holder.close()
        app.session.close()


def test_unsent_file_round_trip_and_a_damaged_one_is_left_alone(tmp_path):
    from mnemara.store.unsent import UnsentMessages

    unsent = UnsentMessages(tmp_path)
    assert unsent.take() == ([], None)
    assert unsent.keep(["one", "two\nlines", "   "]) is None
    assert unsent.path.stat().st_mode & 0o777 == 0o600
    assert unsent.take() == (["one", "two\nlines"], None) and not unsent.path.exists()
    assert unsent.keep([]) is None and not unsent.path.exists()
    unsent.path.write_bytes(b'["cut sho')
    texts, problem = unsent.take()
    assert texts == [] and "cannot read" in problem and unsent.path.read_bytes() == b'["cut sho'
    unsent.path.write_text('{"not": "a list"}')
    assert "not a list of messages" in unsent.take()[1] and unsent.path.exists()


async def test_the_panel_gives_back_a_line_refused_as_a_command(mnemara_home):
    """A message that starts with a path ("/etc/hosts ...") is taken for an unknown command, and a
    command with a bad argument is refused: the typed text used to vanish from the input (the panel has
    no input history to get it back from)."""
    from mnemara.store.instance import Instance
    from mnemara.ui.tui.app import MnemaraApp

    from tests.tui_support import type_text

    app = MnemaraApp(Instance.create("refused"))
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            app.chat_input.focus()
            await type_text(pilot, "/etc/hosts lost its localhost line")
            await pilot.press("ctrl+s")
            await pilot.pause()
            assert app.chat_input.text == "/etc/hosts lost its localhost line"
            assert "unknown command /etc/hosts" in app.chat_log.plain_text()
            assert "sent as //" in app.chat_log.plain_text()
            app.chat_input.clear()
            await type_text(pilot, "/show many")
            await pilot.press("ctrl+s")
            await pilot.pause()
            assert app.chat_input.text == "/show many"
            assert "usage: /show" in app.chat_log.plain_text()
            app.chat_input.clear()
            await type_text(pilot, "/help")
            await pilot.press("ctrl+s")
            await pilot.pause()
            assert app.chat_input.text == "", "a command that ran is not given back"
            assert app.session.store.history() == []
    finally:
        app.session.close()


async def test_the_panel_opens_on_a_damaged_store_and_what_is_sent_waits_in_the_spool(mnemara_home):
    """A turns.sqlite that fails its integrity check: the REPL spooled what was typed, but the panel
    raised StoreUnavailable while drawing the history and never opened, so nothing could be typed."""
    from mnemara.store.instance import Instance
    from mnemara.store.turns import TurnStore
    from mnemara.ui.tui.app import MnemaraApp

    from tests.e2e.test_store_resilience_e2e import _damage_turns_table
    from tests.tui_support import type_text, wait_for

    instance = Instance.create("damaged")
    with TurnStore(instance.turns_path) as store:
        store.append("user", "before the damage")
    conn = sqlite3.connect(instance.turns_path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.close()
    _damage_turns_table(instance.turns_path)
    app = MnemaraApp(instance)
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            assert "cannot show the conversation" in app.chat_log.plain_text()
            assert "failed its integrity check" in app.chat_log.plain_text()
            app.chat_input.focus()
            await type_text(pilot, "typed while damaged")
            await pilot.press("ctrl+s")
            await wait_for(pilot, lambda: app._turn is not None and not app.turn_running, 30, "the turn to end")
            assert "it is kept in" in app.chat_log.plain_text()
        assert "typed while damaged" in (instance.root / "spool.jsonl").read_text(encoding="utf-8")
    finally:
        app.session.close()


def test_a_piped_line_taken_as_an_answer_that_is_not_one_is_named(tmp_path):
    """The piped REPL reads a permission answer (or a /compress yes/no) from the next line, and a line
    that is not an answer is not sent as a message (a mistyped answer must not start a turn). It was
    swallowed without a word: a script whose message met a question it did not expect could not tell
    where it went. One line now names it."""
    from mnemara.ui.repl.app import LineSource, line_prompt

    class Request:
        def question(self) -> str:
            return "permission: allow Bash `ls`? [y]es / [n]o / [a]lways / [s]ession: "

    lines = LineSource(io.StringIO("and now the next message\nyes\n"))
    err = io.StringIO()
    prompt = line_prompt(lines, err)
    assert prompt(Request()) == "and now the next message"  # the gate denies it
    assert '(the answer line "and now the next message" is not y/n/a/s: denied; that line is not sent' in \
        err.getvalue()
    assert prompt(Request()) == "yes" and err.getvalue().count("the answer line") == 1

    session = AgentSession.at(tmp_path / "x", warm_spare=False)
    for n in range(12):
        session.store.append("user" if n % 2 == 0 else "assistant", f"row {n} " + "words " * 400)
    out, err = io.StringIO(), io.StringIO()
    try:
        assert run_repl(session, stdin=io.StringIO("/compress 2000\nplease keep going\n"), stdout=out,
                        stderr=err) == 0
        assert "apply? [y/N]" in err.getvalue(), err.getvalue()
        assert '(the answer line "please keep going" is not y/n: taken as no' in err.getvalue()
        assert "cancelled: nothing was changed" in err.getvalue()
    finally:
        session.close()


def test_forget_redacts_a_spool_that_holds_a_torn_line(tmp_path):
    """A spool line cut short inside a UTF-8 sequence is kept byte for byte (see above); `forget`'s
    redaction of the spool and the prompt history then raised UnicodeDecodeError and left the text
    it was asked to remove in place."""
    import re

    from mnemara.memory.forget_reach import scrub_own_files

    spool = tmp_path / "spool.jsonl"
    spool.write_bytes(_spooled_line("the secret plan") + b"\n" + b'{"role": "user", "torn \xc3\n')
    assert scrub_own_files(tmp_path, re.compile("secret plan")) == ["spool.jsonl"]
    assert spool.read_bytes() == _spooled_line("the [forgotten]") + b"\n" + b'{"role": "user", "torn \xc3\n'


async def test_bytes_are_refused_as_not_text_rather_than_as_an_empty_message(tmp_path):
    import pytest

    from mnemara.core.errors import MnemaraError

    session = AgentSession.at(tmp_path / "x", warm_spare=False)
    try:
        with pytest.raises(MnemaraError, match=r"a message is text \(str\), not bytes"):
            [e async for e in session.aturn(b"hello")]  # type: ignore[arg-type]
        assert _texts(session) == []
    finally:
        await session.aclose()


async def test_rows_waiting_in_the_spool_are_mentioned_when_the_repl_or_the_panel_opens(tmp_path, mnemara_home):
    """Rows spooled while turns.sqlite was locked are stored with the next message; until then they
    are not in the window, so a panel (or `mnemara run`) opened later showed the conversation without
    them and said nothing: the message looked lost."""
    from mnemara.store.instance import Instance
    from mnemara.ui.tui.app import MnemaraApp

    instance = Instance.create("waiting")
    session = AgentSession(instance, warm_spare=False)
    session.recorder.spool.add("user", [{"type": "text", "text": "sent while locked"}])
    err = io.StringIO()
    try:
        assert run_repl(session, stdin=io.StringIO(""), stdout=io.StringIO(), stderr=err) == 0
        assert "1 row(s) wait in spool.jsonl" in err.getvalue()
    finally:
        session.close()
    app = MnemaraApp(instance)
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            assert "1 row(s) wait in spool.jsonl" in app.chat_log.plain_text()
    finally:
        app.session.close()


async def test_keys_typed_as_a_permission_question_appears_go_back_into_the_message(mnemara_home):
    """The question pops up while the user types a message (typing during a turn is normal). The
    keys typed before the answer keys are armed are rightly not answers, but they were dropped: the
    message lost the letters typed in that moment. They go back into the input, where they were going."""
    from mnemara.store.instance import Instance
    from mnemara.guard.gate import PermissionRequest
    from mnemara.ui.tui.app import MnemaraApp
    from mnemara.ui.tui.screens.permission import PermissionScreen

    from tests.tui_support import type_text, wait_for

    app = MnemaraApp(Instance.create("typing"))
    app.permission_screen_options = {"arm_seconds": 3600}  # armed only by the test: no timing here
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            app.chat_input.focus()
            await type_text(pilot, "please fi")
            asked = app.run_worker(app.ask_permission(PermissionRequest("Bash", "Bash", "ls", {"command": "ls"})))
            await wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen), 20, "the question")
            await type_text(pilot, "x the tests as you say")
            assert app.screen.held_keys and not asked.is_finished, "a typed key answered the question"
            await pilot.press("escape")
            await wait_for(pilot, lambda: asked.is_finished, 20, "the answer")
            assert asked.result == "n"
            assert app.chat_input.text == "please fix the tests as you say"
    finally:
        app.session.close()


def test_a_closed_store_is_not_called_damaged(tmp_path):
    """A write or read on a store whose session was closed (an embedder closing the session while a
    turn still stores its answer) ran the integrity check on the closed connection and declared a
    healthy turns.sqlite damaged, advising to restore a backup: advice that would throw away rows."""
    import pytest

    from mnemara.core.errors import StoreUnavailable
    from mnemara.store.turns import TurnStore

    store = TurnStore(tmp_path / "turns.sqlite")
    store.append("user", "kept")
    store.close()
    with pytest.raises(StoreUnavailable, match="this store is closed") as raised:
        store.append("assistant", "after close")
    assert "integrity" not in str(raised.value) and "backup" not in str(raised.value)
    with pytest.raises(StoreUnavailable, match="this store is closed"):
        store.history()
    assert store.damaged is None
    with TurnStore(tmp_path / "turns.sqlite") as again:
        assert [t.text for t in again.history()] == ["kept"] and again.damaged is None


async def test_ctrl_l_while_messages_are_queued_does_not_lose_them(mnemara_home):
    """Ctrl+L clears the on-screen log; a queued message kept the index of its log entry, so when its
    turn came, the panel looked up an entry that no longer existed: the worker died before the
    message reached the session (never sent, never stored, and gone from unsent.json)."""
    from mnemara.store.instance import Instance
    from mnemara.ui.tui.app import MnemaraApp

    from tests.tui_support import wait_for

    from mnemara.store.turns import TurnStore

    instance = Instance.create("cleared")
    with TurnStore(instance.turns_path) as store:  # an earlier conversation, drawn when the panel opens
        for n in range(8):
            store.append("user" if n % 2 == 0 else "assistant", f"earlier {n}")
    app = MnemaraApp(instance)  # no API key: each turn stores its message and ends at once, no CLI
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            app.send_text("first")
            app.send_text("queued one")
            app.send_text("queued two")
            app.action_clear_log()
            await wait_for(pilot, lambda: not app.turn_running and not app._queued, 30, "the turns to end")
            await pilot.pause()
            assert _texts(app.session)[8:] == ["first", "queued one", "queued two"]
            assert "you: queued two" in app.chat_log.plain_text()
    finally:
        app.session.close()


async def test_the_input_is_kept_before_the_session_closes(mnemara_home):
    """Quitting closes the session first, which can take seconds while its CLI processes end; the
    text left in the input was kept only after that, so a window closed meanwhile lost it."""
    from mnemara.store.instance import Instance
    from mnemara.ui.tui.app import MnemaraApp

    from tests.tui_support import type_text

    instance = Instance.create("draft")
    unsent = instance.root / "unsent.json"
    app = MnemaraApp(instance)
    on_disk_at_close: list[object] = []
    real_close = app.session.aclose

    async def close_looking_at_the_disk() -> None:
        on_disk_at_close.append(json.loads(unsent.read_text(encoding="utf-8")) if unsent.exists() else None)
        await real_close()

    app.session.aclose = close_looking_at_the_disk
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            app.chat_input.focus()
            await type_text(pilot, "a draft")
            await pilot.click("#quit")  # (an idle Ctrl+C clears the input first: the draft goes to the history)
            await pilot.pause()
    finally:
        app.session.close()
    assert on_disk_at_close and on_disk_at_close[0] == ["a draft"], on_disk_at_close
