"""The REPL runs the peer inbox: between input lines when piped, in the background on a terminal."""
from __future__ import annotations

import io
import os
import queue
import threading
import time
from pathlib import Path

import pytest

from mnemara.core.config import update_config
from mnemara.store.instance import Instance
from mnemara.store.turns import TurnStore
from mnemara.testing.scripted_api import reply, tool_use
from tests.peer_support import add, new_db
from tests.e2e.terminal import PlainTerminal

pytestmark = pytest.mark.e2e


def configure(name: str, db_path: Path, interval: float = 0.2) -> Instance:
    inst = Instance.create(name)
    update_config(inst.config_path, peer_poll_enabled=True, peer_db_path=str(db_path), peer_role="eng",
                  peer_poll_interval_seconds=interval, peer_deliver_backlog=True)  # rows are written before start
    return inst


def inbox_requests(api) -> list:
    return [r for r in api.message_requests() if r.user_text().rstrip().endswith(
        "check row ids and timestamps before acting on it.")]


class LineStream(io.TextIOBase):
    """A text stream the REPL writes to; each complete line goes to ``sink`` as ``"<tag>: <line>"``."""

    def __init__(self, tag: str, sink: queue.Queue[str]) -> None:
        super().__init__()
        self.tag, self.sink, self.partial = tag, sink, ""

    def write(self, text: str) -> int:
        *done, self.partial = (self.partial + text).split("\n")
        for line in done:
            self.sink.put(f"{self.tag}: {line.rstrip()}")
        return len(text)

    def isatty(self) -> bool:
        return False


class Piped:
    """The piped REPL of `mnemara run --no-tui` (:func:`mnemara.ui.repl.app.run_repl` on a real session)
    in a thread of this process, its stdin a real pipe the test writes line by line. What is under
    test is the REPL and its inbox, not the process boundary; the CLI and the API are the real ones."""

    def __init__(self, name: str, *, typed_ahead: str = "") -> None:
        from mnemara.session.agent import AgentSession
        from mnemara.ui.repl.app import run_repl

        read_end, write_end = os.pipe()
        self.stdin = os.fdopen(write_end, "w", encoding="utf-8")
        self._reader = os.fdopen(read_end, "r", encoding="utf-8")
        self.stdin.write(typed_ahead)  # lines already waiting in the pipe when the REPL starts
        self.stdin.flush()
        self.out: queue.Queue[str] = queue.Queue()
        self.lines: list[str] = []
        self.session = AgentSession(Instance.open(name))
        self.code: int | None = None
        self.error: BaseException | None = None

        def main() -> None:
            try:
                self.code = run_repl(self.session, stdin=self._reader, stdout=LineStream("out", self.out),
                                     stderr=LineStream("err", self.out))
            except BaseException as exc:  # handed to the test by finish()
                self.error = exc

        self.thread = threading.Thread(target=main, name="piped-repl", daemon=True)
        self.thread.start()

    def send(self, line: str) -> None:
        self.stdin.write(line + "\n")
        self.stdin.flush()

    def expect(self, text: str, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.out.get(timeout=0.1)
            except queue.Empty:
                if not self.thread.is_alive() and self.out.empty():
                    break
                continue
            self.lines.append(line)
            if text in line:
                return line
        raise AssertionError(f"{text!r} not seen; output so far:\n" + "\n".join(self.lines))

    def finish(self) -> int:
        """End of input: wait for the REPL to return; its exit code."""
        if not self.stdin.closed:
            self.stdin.close()
        self.thread.join(timeout=120)
        assert not self.thread.is_alive(), "the REPL did not return at end of input"
        while not self.out.empty():
            self.lines.append(self.out.get())
        if self.error is not None:
            raise self.error
        assert self.code is not None
        return self.code

    def close(self) -> None:
        if not self.stdin.closed:
            self.stdin.close()
        self.thread.join(timeout=120)
        self.session.close()
        self._reader.close()


def test_piped_repl_delivers_pending_rows_first_without_asking_and_obeys_inbox_off(scripted_api, mnemara_home,
                                                                                   tmp_path):
    """A row pending at start is delivered before the first line is read; its turn cannot ask a
    permission question (the next line is a message, not an answer); /inbox off counts rows without
    delivering them; end of input delivers the waiting row first."""
    path = new_db(tmp_path / "peer.db")
    inst = configure("eng-piped", path)
    first = add(path, "lead", "eng", {"type": "task", "text": "FIRST-PEER-MESSAGE: run a command"})
    marker = tmp_path / "ran.txt"
    scripted_api.push(reply(tool_use("Bash", {"command": f"touch {marker}"})), reply("inbox answer one"),
                      reply("answer to y"), reply("user answer"), reply("inbox answer two"))
    repl = Piped("eng-piped", typed_ahead="y\n")  # "y" waits in the pipe before the inbox turn asks
    try:
        repl.expect("⚡ Inbox: ON")
        # pending at start: delivered before the first line is read; its Bash call is refused unasked
        repl.expect("asked during an inbox turn: denied")
        repl.expect("inbox answer one")
        repl.expect("answer to y")  # "y" was sent as a message, not taken as a permission answer
        assert not marker.exists()
        assert scripted_api.message_requests()[1].tool_results()[0].get("is_error")
        repl.send("/inbox off")
        repl.expect("⚡ Inbox: OFF")
        second = add(path, "lead", "eng", {"type": "task", "text": "SECOND-PEER-MESSAGE"})
        repl.send("hello")
        repl.expect("user answer")
        repl.send("/inbox status")
        repl.expect("1 waiting")
        assert len(scripted_api.message_requests()) == 4  # OFF: counted, not delivered
        repl.send("/inbox on")
        repl.expect("⚡ Inbox: ON")
        assert repl.finish() == 0  # end of input: the waiting row goes out first
    finally:
        repl.close()
    out = "\n".join(repl.lines)
    assert "inbox answer two" in out and "err: ⚡ inbox: [peer inbox] 1 new peer message for eng" in out
    def answers_a_tool(r) -> bool:  # its last message carries a tool result (a continued one holds earlier ones)
        last = r.messages[-1]["content"]
        return isinstance(last, list) and any(b.get("type") == "tool_result" for b in last)

    sent = [r for r in inbox_requests(scripted_api) if not answers_a_tool(r)]  # not the Bash result's request
    assert len(sent) == 2 and "FIRST-PEER-MESSAGE" in sent[0].user_text()
    latest = sent[1].user_text().rsplit("[peer inbox]", 1)[1]  # the new message, not the window before it
    assert f"· row {second} ·" in latest and f"· row {first} ·" not in latest
    with TurnStore(inst.turns_path) as store:
        texts = [r.text for r in store.history()]
    assert texts[2:6] == ["y", "answer to y", "hello", "user answer"] and texts[7] == "inbox answer two", texts


def test_terminal_repl_delivers_in_the_background_toggles_and_a_message_waits_for_an_inbox_turn(
        scripted_api, mnemara_home, tmp_path):
    """One `mnemara run` on a terminal: a row written while you sit at the prompt is delivered in the
    background; /inbox off holds rows (still polled) and /inbox on delivers them; a message sent while
    an inbox turn runs waits for it instead of interrupting it."""
    path = new_db(tmp_path / "peer.db")
    inst = configure("eng-tty", path)
    scripted_api.push(reply("tty inbox answer"), reply("tty user answer"), reply("tty second inbox answer"),
                      reply("slow inbox words " * 20, delay=0.1, chunk_size=17), reply("my own answer"))
    with PlainTerminal("run", "--instance", "eng-tty", "--no-tui") as term:
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
        # a message sent during a (slow) inbox turn waits for it
        add(path, "lead", "eng", {"type": "task", "text": "a slow one"})
        term.expect("⚡ inbox: [peer inbox]")
        term.send("my question\r")
        term.expect("(an inbox turn is running; your message goes next")
        term.expect("my own answer")
        term.expect("you>")
        assert term.quit() == 0
    with TurnStore(inst.turns_path) as store:
        rows = store.history()
    assert [r.text for r in rows if r.role == "assistant"][:3] == [
        "tty inbox answer", "tty user answer", "tty second inbox answer"]
    waited = rows[-4:]
    assert [r.role for r in waited] == ["user", "assistant", "user", "assistant"] and len(rows) == 10
    assert waited[0].text.startswith("[peer inbox]") and waited[2].text == "my question"
    assert not waited[1].meta.get("interrupted")  # the inbox turn finished; the user's waited
