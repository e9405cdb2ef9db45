"""Issue 28 item 7: debug.log is written through the standard logging module, one logger per instance.

An embedder adds a handler of its own (or replaces the file handler) and sees the session's events;
the file keeps the JSON-lines format readers already parse; the file stays open between events,
follows a rewrite, and a process touching many instances holds a bounded number of files open.
"""
from __future__ import annotations

import json
import logging
import os
from pathlib import Path

from mnemara.commands import dispatch
from mnemara.core.debuglog import (JsonLinesFormatter, JsonLinesHandler, default_handler, instance_logger, log_event,
                                   read_events)
from mnemara.core.fsutil import HeldAppender, rewrite_locked


class Captured(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def test_an_embedder_adds_a_handler_and_captures_a_session_event(session_factory):
    session = session_factory("embedded")
    mine = Captured()
    session.instance.logger.addHandler(mine)
    try:
        assert dispatch(session, "/swap 1").ok
    finally:
        session.instance.logger.removeHandler(mine)
    swapped = [r for r in mine.records if r.event == "model_swapped"]  # type: ignore[attr-defined]
    assert len(swapped) == 1 and swapped[0].levelno == logging.INFO
    assert swapped[0].fields["new"] == "claude-opus-4-7"  # type: ignore[attr-defined]
    assert swapped[0].name.startswith("mnemara.instance.embedded.")
    written = [e for e in read_events(session.instance.debug_log_path) if e["event"] == "model_swapped"]
    assert len(written) == 1 and written[0]["new"] == "claude-opus-4-7"  # the file got it too
    assert json.loads(JsonLinesFormatter().format(swapped[0])) == written[0]  # the same line, for a handler of yours


def test_an_embedder_replaces_the_file_handler(tmp_path: Path):
    path = tmp_path / "inst" / "debug.log"
    logger = instance_logger(path)
    log_event(path, "before")
    default = default_handler(logger)
    assert isinstance(default, JsonLinesHandler) and default.path == path
    mine = Captured()
    logger.removeHandler(default)
    logger.addHandler(mine)
    try:
        log_event(path, "after", level="warning", n=1)
    finally:
        logger.removeHandler(mine)
        logger.addHandler(default)
    assert [e["event"] for e in read_events(path)] == ["before"]  # replaced: the file got nothing more
    assert [(r.event, r.levelname, r.fields) for r in mine.records] == [("after", "WARNING", {"n": 1})]  # type: ignore[attr-defined]


def test_one_logger_for_all_instances_sees_every_instance(tmp_path: Path):
    everything = Captured()
    parent = logging.getLogger("mnemara")
    parent.addHandler(everything)
    try:
        log_event(tmp_path / "a" / "debug.log", "one")
        log_event(tmp_path / "b" / "debug.log", "two")
    finally:
        parent.removeHandler(everything)
    assert [r.event for r in everything.records] == ["one", "two"]  # type: ignore[attr-defined]


def test_the_file_keeps_its_line_format(tmp_path: Path):
    path = tmp_path / "inst" / "debug.log"
    log_event(path, "tool_call", level="warning", tool="Bash", path=Path("/x"), text="é ☃")
    log_event(path, "cli_error", "error", message="boom")  # level given positionally, as the CLI does
    instance_logger(path).info("said directly")
    lines = path.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    assert list(first) == ["ts", "level", "event", "tool", "path", "text"]
    assert first["level"] == "warning" and first["path"] == "/x" and first["text"] == "é ☃"
    assert "é ☃" in lines[0]  # not escaped, as before
    assert first["ts"].endswith("+00:00") and "." not in first["ts"]  # UTC, to the second
    assert [json.loads(line)["event"] for line in lines] == ["tool_call", "cli_error", "said directly"]
    assert json.loads(lines[1])["level"] == "error" and json.loads(lines[2])["level"] == "info"
    assert path.stat().st_mode & 0o777 == 0o600


def test_same_named_instances_in_two_homes_keep_separate_logs(tmp_path: Path):
    a, b = tmp_path / "home1" / "work" / "debug.log", tmp_path / "home2" / "work" / "debug.log"
    assert instance_logger(a) is instance_logger(a) and instance_logger(a) is not instance_logger(b)
    log_event(a, "in a")
    log_event(b, "in b")
    assert [e["event"] for e in read_events(a)] == ["in a"] and [e["event"] for e in read_events(b)] == ["in b"]


def test_a_rewritten_log_gets_the_next_event(tmp_path: Path):
    path = tmp_path / "inst" / "debug.log"
    log_event(path, "first")
    assert rewrite_locked(path, lambda old: old + '{"event": "rewritten"}\n')  # a new file takes its place
    log_event(path, "second")
    assert [e["event"] for e in read_events(path)] == ["first", "rewritten", "second"]
    path.unlink()  # removed by hand: the next event starts a new file
    log_event(path, "third")
    assert [e["event"] for e in read_events(path)] == ["third"]


def test_a_failure_to_write_is_quiet(tmp_path: Path, capsys):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    log_event(blocker / "debug.log", "lost")  # the folder cannot exist: nothing raised, nothing printed
    link = tmp_path / "inst" / "debug.log"
    link.parent.mkdir()
    link.symlink_to(tmp_path / "elsewhere.log")
    log_event(link, "refused")  # never written through a link
    assert not (tmp_path / "elsewhere.log").exists()
    assert capsys.readouterr().err == ""


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_many_instances_hold_a_bounded_number_of_files_open(tmp_path: Path):
    before = _open_fds()
    paths = [tmp_path / f"i{n}" / "debug.log" for n in range(HeldAppender.MAX_OPEN * 3)]
    for path in paths:
        log_event(path, "hello")
    assert _open_fds() - before <= HeldAppender.MAX_OPEN
    for path in paths:  # those that let go reopen on their next event
        log_event(path, "again")
    assert all([e["event"] for e in read_events(p)] == ["hello", "again"] for p in paths)


def test_a_forked_child_writes_through_a_file_of_its_own(tmp_path: Path):
    path = tmp_path / "inst" / "debug.log"
    log_event(path, "parent before")
    pid = os.fork()
    if pid == 0:  # the child: log, and leave without running the parent's cleanup
        try:
            log_event(path, "child")
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    log_event(path, "parent after")
    assert [e["event"] for e in read_events(path)] == ["parent before", "child", "parent after"]
