"""Keys typed while a turn streams in the terminal REPL start the next prompt instead of being lost."""
from __future__ import annotations

import pytest

from mnemara.store.instance import Instance
from mnemara.testing.scripted_api import reply
from mnemara.ui.repl.app import InterruptWatcher
from tests.e2e.terminal import PlainTerminal


@pytest.mark.parametrize("typed, expected", [
    (b"next question", "next question"),
    (b"nexx\x7ft q", "next q"),                  # Backspace applied
    (b"a\x1b[Db\x1bOAc", "abc"),                 # arrow keys dropped
    (b"line one\rline", "line"),                 # a line ended with Enter is queued, not part of the prompt
    ("caf\u00e9 \u2713".encode(), "caf\u00e9 \u2713"),
    (b"\x01\x02ok\x1b", "ok"),
    (b"def f():\tpass", "def f():\tpass"),     # a tab is text, not a control key to drop
    (b"caf\xe9 ok", "caf\ufffd ok"),           # a byte that is not UTF-8 shows where it was, not dropped
])
def test_typed_ahead_text(typed, expected):
    watcher = InterruptWatcher(lambda: None, fd=-1)
    watcher._typed += typed
    assert watcher.typed_ahead() == expected


def test_a_bracketed_paste_during_a_turn_stays_one_message():
    """A multi-line paste while the answer streams was cut at every line break into messages of its
    own, each sent as a turn of its own; the terminal's paste marks now keep it whole (as at the prompt)."""
    watcher = InterruptWatcher(lambda: None, fd=-1)
    watcher._typed += b"\x1b[200~def f():\r\n\treturn 1\rprint(f())\x1b[201~ please\rnext"
    assert watcher.typed_lines() == (["def f():\n\treturn 1\nprint(f()) please"], "next")
    watcher = InterruptWatcher(lambda: None, fd=-1)
    watcher._typed += b"\x1b[200~line one\nline two"  # the paste not over yet: nothing queued
    assert watcher.typed_lines() == ([], "line one\nline two")


def test_lines_ended_with_enter_are_queued_in_order_and_blank_ones_dropped():
    watcher = InterruptWatcher(lambda: None, fd=-1)
    watcher._typed += b"first\r\r  \nsec\x7f\x7fecond\nthi"
    assert watcher.typed_lines() == (["first", "second"], "thi")


@pytest.mark.e2e
def test_text_typed_during_a_turn_is_the_next_prompt(scripted_api, mnemara_home):
    Instance.create("ahead")
    scripted_api.push(reply("slow " * 80, delay=0.05, chunk_size=5), reply("got your second message"))
    with PlainTerminal("run", "--instance", "ahead", "--no-tui") as term:
        term.expect("you>")
        term.send("first\r")
        term.expect("slow slow")
        term.send("second mes")
        term.send("x\x7fsage")
        term.expect("you> second message")
        term.send("\r")
        term.expect("got your second message")
        term.expect("you>")
        assert term.quit() == 0
    assert scripted_api.message_requests()[-1].user_text().endswith("second message")


@pytest.mark.e2e
def test_a_queued_line_survives_the_terminal_closing_and_is_back_at_the_next_prompt(scripted_api, mnemara_home):
    """A line entered while a turn streams was queued in memory only: the terminal closing before the
    turn ended (here its whole process group killed, the REPL and its CLI) lost it. It is kept in
    unsent.json from the moment it is queued, and the next REPL puts it back at its prompt (not
    sent) and says so."""
    import json

    inst = Instance.create("closing")
    unsent = inst.root / "unsent.json"
    scripted_api.push(reply("slow " * 400, delay=0.1, chunk_size=5))
    with PlainTerminal("run", "--instance", "closing", "--no-tui") as term:
        term.expect("you>")
        term.send("first\r")
        term.expect("slow slow")
        term.send("queued line\r")
        term.expect("(queued: 'queued line'")
        assert json.loads(unsent.read_text(encoding="utf-8")) == ["queued line"]
    # leaving the block killed the REPL and its CLI (the whole process group) in the middle of the turn
    with PlainTerminal("run", "--instance", "closing", "--no-tui") as again:
        again.expect("1 message(s) queued but not sent when the REPL last closed are back at the prompt")
        again.expect("you> queued line")
        again.send("\x15")  # clear the line, leave: nothing is sent
        assert again.quit() == 0
    assert len(scripted_api.message_requests()) == 1
    assert not unsent.exists(), "cleared at the prompt and left with Ctrl+D: not offered again"


@pytest.mark.e2e
def test_a_queued_line_goes_into_the_prompt_history_when_it_is_sent(scripted_api, mnemara_home):
    """Lines queued during a turn never passed through the prompt, so they were missing from
    .prompt_history: Up could not recall them (the only copy of one the store could not take)."""
    inst = Instance.create("history")
    scripted_api.push(reply("slow " * 80, delay=0.05, chunk_size=5), reply("answer to the queued line"))
    with PlainTerminal("run", "--instance", "history", "--no-tui") as term:
        term.expect("you>")
        term.send("first\r")
        term.expect("slow slow")
        term.send("queued for later\r")
        term.expect("answer to the queued line")
        term.expect("you>")
        assert term.quit() == 0
    history = inst.prompt_history_path.read_text(encoding="utf-8")
    assert "+first\n" in history and "+queued for later\n" in history, history


def test_keys_typed_just_before_a_permission_question_do_not_start_its_answer():
    """Audit 4: keys the watcher had not read yet (it reads every 0.1 s) stayed in the terminal and,
    typed with echo off, invisibly began the answer line: `y` typed a moment before the question plus
    an Enter meant to refuse it answered yes. They are typed-ahead text instead."""
    import os
    import pty
    import select

    master, slave = pty.openpty()
    try:
        with InterruptWatcher(lambda: None, fd=slave) as watcher:
            watcher._pause.set()  # the question is about to be asked: the watcher thread stops reading
            os.write(master, b"y")
            assert select.select([slave], [], [], 10)[0], "the typed key never reached the terminal"
            with watcher.paused():
                os.write(master, b"\r")  # the user presses Enter at the question
                answer = os.read(slave, 100)
            assert answer == b"\n", f"the answer line began with keys typed before the question: {answer!r}"
            assert watcher.typed_ahead() == "y"
    finally:
        os.close(master)
        os.close(slave)
