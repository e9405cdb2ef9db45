"""Unit tests of the runtime sentinel's pure logic."""
from __future__ import annotations

import pytest

from mnemara.guard.sentinel import RuntimeSentinel, SentinelHalt


def test_third_identical_call_halts():
    s = RuntimeSentinel()
    call = {"command": "npm run build"}
    assert s.observe("Bash", call) is None
    assert s.observe("Bash", call) is None
    halt = s.observe("Bash", dict(call))
    assert isinstance(halt, SentinelHalt)
    assert (halt.trigger, halt.tool_name, halt.count) == ("polling", "Bash", 3)


def test_argument_order_does_not_matter():
    s = RuntimeSentinel()
    s.observe("X", {"a": 1, "b": 2})
    s.observe("X", {"b": 2, "a": 1})
    assert s.observe("X", {"a": 1, "b": 2}) is not None


def test_different_args_or_tools_do_not_halt():
    s = RuntimeSentinel()
    for i in range(10):
        assert s.observe("Bash", {"command": f"echo {i}"}) is None
    for tool in ("Read", "Write", "Edit", "Bash"):
        assert s.observe(tool, {"file_path": "/x"}) is None


def test_repeats_outside_the_window_do_not_count():
    s = RuntimeSentinel(window=5, threshold=3)
    same = {"command": "poll"}
    assert s.observe("Bash", same) is None
    for i in range(4):
        s.observe("Read", {"file_path": f"/f{i}"})
    assert s.observe("Bash", same) is None  # the first one fell out of the window
    assert s.observe("Bash", same) is None
    assert s.observe("Bash", same) is not None  # three within the last five


def test_interleaved_repeats_within_window_halt():
    s = RuntimeSentinel()
    same = {"command": "poll"}
    s.observe("Bash", same)
    s.observe("Read", {"file_path": "/a"})
    s.observe("Bash", same)
    s.observe("Read", {"file_path": "/b"})
    assert s.observe("Bash", same) is not None


def test_halt_clears_memory():
    s = RuntimeSentinel()
    for _ in range(3):
        halt = s.observe("Bash", {"command": "x"})
    assert halt is not None and len(s) == 0
    assert s.observe("Bash", {"command": "x"}) is None


def test_notice_text():
    s = RuntimeSentinel()
    for _ in range(3):
        halt = s.observe("Bash", {"command": "npm run build"})
    text = halt.notice(4)
    assert text.startswith("SENTINEL HALT\n")
    assert "trigger: polling" in text and "turn: 4" in text
    assert 'repeated call: Bash {"command": "npm run build"}' in text


def test_bad_parameters_refused():
    with pytest.raises(ValueError):
        RuntimeSentinel(window=2, threshold=3)
    with pytest.raises(ValueError):
        RuntimeSentinel(threshold=1)


def test_unserialisable_args_still_compare():
    s = RuntimeSentinel()
    obj = object()
    s.observe("T", {"v": obj})
    s.observe("T", {"v": obj})
    assert s.observe("T", {"v": obj}) is not None


def test_watch_refuses_after_halt_until_next_turn():
    from mnemara.guard.sentinel import SentinelWatch

    w = SentinelWatch()
    poll = {"command": "status"}
    assert w.check("Bash", poll, "t1") is None
    assert w.check("Bash", poll, "t2") is None
    reason = w.check("Bash", poll, "t3")
    assert reason and "SENTINEL HALT" in reason and w.halted_tool_use_id == "t3"
    assert w.check("Read", {"file_path": "/x"}, "t4")  # anything after the halt is refused
    assert not w.stop_after_tool_result("t2") and w.stop_after_tool_result("t3")
    w.begin_turn()
    assert w.halt is None and w.check("Read", {"file_path": "/x"}, "t5") is None
