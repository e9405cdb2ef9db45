"""The REPL runs the peer inbox: between input lines when piped, in the background on a terminal."""
from __future__ import annotations

import queue
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from mnemara.config import update_config
from mnemara.instance import Instance
from mnemara.store import TurnStore
from mnemara.testing import reply, tool_use
from tests.conftest import ROOT, cli_env
from tests.peer_support import add, new_db
from tests.test_repl_tty import Terminal

pytestmark = pytest.mark.e2e
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def configure(name: str, db_path: Path, interval: float = 0.2) -> Instance:
    inst = Instance.create(name)
    update_config(inst.config_path, peer_poll_enabled=True, peer_db_path=str(db_path), peer_role="eng",
                  peer_poll_interval_seconds=interval, peer_deliver_backlog=True)  # rows are written before start
    return inst


def inbox_requests(api) -> list:
    return [r for r in api.message_requests() if r.user_text().rstrip().endswith(
        "check row ids and timestamps before acting on it.")]


class Piped:
    """`mnemara run --no-tui` with stdin a pipe the test writes line by line."""

    def __init__(self, name: str) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "mnemara", "run", "--instance", name, "--no-tui"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, env=cli_env(), cwd=str(ROOT))
        self.out: queue.Queue[str] = queue.Queue()
        self.lines: list[str] = []
        self.pumps = [threading.Thread(target=self._pump, args=(stream, tag), daemon=True)
                      for stream, tag in ((self.proc.stdout, "out"), (self.proc.stderr, "err"))]
        for pump in self.pumps:
            pump.start()

    def _pump(self, stream, tag: str) -> None:
        for line in stream:
            self.out.put(f"{tag}: {line.rstrip()}")

    def send(self, line: str) -> None:
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def expect(self, text: str, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.out.get(timeout=0.1)
            except queue.Empty:
                continue
            self.lines.append(line)
            if text in line:
                return line
        raise AssertionError(f"{text!r} not seen; output so far:\n" + "\n".join(self.lines))

    def finish(self) -> int:
        self.proc.stdin.close()
        code = self.proc.wait(timeout=60)
        for pump in self.pumps:  # every line the process wrote has been read
            pump.join(timeout=30)
        while not self.out.empty():
            self.lines.append(self.out.get())
        return code


def test_piped_repl_delivers_pending_rows_before_the_next_line_and_obeys_inbox_off(scripted_api, mnemara_home, tmp_path):
    path = new_db(tmp_path / "peer.db")
    inst = configure("eng-piped", path)
    first = add(path, "lead", "eng", {"type": "task", "text": "FIRST-PEER-MESSAGE"})
    scripted_api.push(reply("inbox answer one"), reply("user answer"), reply("inbox answer two"))
    repl = Piped("eng-piped")
    try:
        repl.expect("⚡ Inbox: ON")
        repl.expect("inbox answer one")  # pending at start: delivered before the first line is read
        repl.send("/inbox off")
        repl.expect("⚡ Inbox: OFF")
        second = add(path, "lead", "eng", {"type": "task", "text": "SECOND-PEER-MESSAGE"})
        repl.send("hello")
        repl.expect("user answer")
        repl.send("/inbox status")
        repl.expect("1 waiting")
        assert len(scripted_api.message_requests()) == 2  # OFF: counted, not delivered
        repl.send("/inbox on")
        repl.expect("⚡ Inbox: ON")
        assert repl.finish() == 0  # end of input: the waiting row goes out first
    finally:
        if repl.proc.poll() is None:
            repl.proc.kill()
    out = "\n".join(repl.lines)
    assert "inbox answer two" in out and "err: ⚡ inbox: [peer inbox] 1 new peer message for eng" in out
    sent = inbox_requests(scripted_api)
    assert len(sent) == 2 and "FIRST-PEER-MESSAGE" in sent[0].user_text()
    latest = sent[1].user_text().rsplit("[peer inbox]", 1)[1]  # the new message, not the window before it
    assert f"· row {second} ·" in latest and f"· row {first} ·" not in latest
    with TurnStore(inst.turns_path) as store:
        texts = [r.text for r in store.history()]
    assert texts[1:4] == ["inbox answer one", "hello", "user answer"] and texts[5] == "inbox answer two"


def test_piped_inbox_turn_cannot_ask_permission_and_does_not_eat_the_next_line(scripted_api, mnemara_home, tmp_path):
    path = new_db(tmp_path / "peer.db")
    configure("eng-perm", path)
    add(path, "lead", "eng", {"type": "task", "text": "run a command"})
    marker = tmp_path / "ran.txt"
    scripted_api.push(reply(tool_use("Bash", {"command": f"touch {marker}"})), reply("could not run it"),
                      reply("answer to y"))
    proc = subprocess.run([sys.executable, "-m", "mnemara", "run", "--instance", "eng-perm", "--no-tui"],
                          input="y\n", capture_output=True, text=True, env=cli_env(), cwd=str(ROOT), timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "asked during an inbox turn: denied" in proc.stderr and not marker.exists()
    assert "answer to y" in proc.stdout  # "y" was sent as a message, not taken as a permission answer
    result = scripted_api.message_requests()[1].tool_results()[0]
    assert result.get("is_error")


class PlainTerminal(Terminal):
    """A Terminal whose expect() ignores escape sequences (prompt-toolkit redraws the prompt between writes)."""

    def screen(self, raw: str) -> str:
        return ANSI.sub("", raw)


def test_terminal_repl_delivers_in_the_background_and_inbox_toggles(scripted_api, mnemara_home, tmp_path):
    path = new_db(tmp_path / "peer.db")
    inst = configure("eng-tty", path)
    scripted_api.push(reply("tty inbox answer"), reply("tty user answer"), reply("tty second inbox answer"))
    term = PlainTerminal("run", "--instance", "eng-tty", "--no-tui")
    try:
        term.expect("⚡ Inbox: ON")
        term.expect("you>")
        add(path, "lead", "eng", {"type": "task", "text": "while you sit at the prompt"})
        term.expect("⚡ inbox: [peer inbox] 1 new peer message")
        term.expect("tty inbox answer")
        term.send("/inbox off\r")
        term.expect("⚡ Inbox: OFF")
        term.expect("you>")
        add(path, "lead", "eng", {"type": "task", "text": "while delivery is off"})
        term.send("hello\r")
        term.expect("tty user answer")
        term.expect("you>")  # keys typed while a turn of yours runs go to the next prompt: wait for it
        for _ in range(50):  # an OFF inbox still polls: wait until it has seen the row and holds it
            term.send("/inbox status\r")
            term.expect("failed turns: ")
            if "Inbox: OFF · 1 waiting" in term.seen:
                break
            term.expect("you>")
        else:
            raise AssertionError("the inbox never reported the row while OFF")
        term.expect("you>")
        assert len(scripted_api.message_requests()) == 2
        term.send("/inbox on\r")
        term.expect("tty second inbox answer")
        term.expect("you>")  # the prompt is back (a key sent while /inbox on was handled would be typed ahead)
        term.send("\x04")
        assert term.close() == 0
    finally:
        if term.proc.poll() is None:
            term.proc.kill()
    with TurnStore(inst.turns_path) as store:
        rows = store.history()
    assert [r.text for r in rows if r.role == "assistant"] == [
        "tty inbox answer", "tty user answer", "tty second inbox answer"]


def test_terminal_message_sent_during_an_inbox_turn_waits_for_it(scripted_api, mnemara_home, tmp_path):
    path = new_db(tmp_path / "peer.db")
    inst = configure("eng-wait", path)
    scripted_api.push(reply("slow inbox words " * 20, delay=0.1, chunk_size=17), reply("my own answer"))
    term = PlainTerminal("run", "--instance", "eng-wait", "--no-tui")
    try:
        term.expect("you>")
        add(path, "lead", "eng", {"type": "task", "text": "a slow one"})
        term.expect("⚡ inbox: [peer inbox]")
        term.send("my question\r")
        term.expect("(an inbox turn is running; your message goes next")
        term.expect("my own answer")
        term.expect("you>")
        term.send("\x04")
        assert term.close() == 0
    finally:
        if term.proc.poll() is None:
            term.proc.kill()
    with TurnStore(inst.turns_path) as store:
        rows = store.history()
    assert [r.role for r in rows] == ["user", "assistant", "user", "assistant"]
    assert rows[0].text.startswith("[peer inbox]") and rows[2].text == "my question"
    assert not rows[1].meta.get("interrupted")  # the inbox turn finished; the user's waited
