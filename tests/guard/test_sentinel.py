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


# -- short cycles (issue 25): polling several things in turn ---------------------------------------
def _cycle_calls(period: int, rounds: int) -> list[tuple[str, dict]]:
    return [("Bash", {"command": f"check {i}"}) for _ in range(rounds) for i in range(period)]


def test_a_three_call_cycle_is_halted_on_its_third_round():
    s = RuntimeSentinel()
    calls = _cycle_calls(3, 4)
    halts = [s.observe(name, args) for name, args in calls]
    first = next(i for i, h in enumerate(halts) if h is not None)
    assert first == 8  # A B C A B C A B [C]: the ninth call completes the third round
    halt = halts[first]
    assert (halt.trigger, halt.period, halt.count) == ("cycle", 3, 3)
    assert "sequence of 3 different calls" in halt.notice(1)


@pytest.mark.parametrize("period", [2, 3, 4])
def test_every_period_up_to_four_is_halted(period):
    s = RuntimeSentinel()
    halts = [s.observe(n, a) for n, a in _cycle_calls(period, 3)]
    if period == 2:  # A B A B A: the same call three times in five, the polling rule comes first
        assert halts[4] is not None and halts[4].trigger == "polling"
    else:
        assert halts[-1] is not None and all(h is None for h in halts[:-1])


def test_twenty_distinct_calls_are_not_halted():
    s = RuntimeSentinel()
    assert all(s.observe("Read", {"file_path": f"/f{i}"}) is None for i in range(20))


def test_a_cycle_of_five_or_a_broken_cycle_is_not_halted():
    s = RuntimeSentinel()
    assert all(s.observe(n, a) is None for n, a in _cycle_calls(5, 3))
    s = RuntimeSentinel()
    calls = _cycle_calls(3, 2) + [("Read", {"file_path": "/x"})] + _cycle_calls(3, 1)
    assert all(s.observe(n, a) is None for n, a in calls)


def test_the_cycle_check_is_configurable_and_can_be_off():
    off = RuntimeSentinel(max_period=0)
    assert all(off.observe(n, a) is None for n, a in _cycle_calls(3, 4))
    four_rounds = RuntimeSentinel(cycle_repeats=4)
    halts = [four_rounds.observe(n, a) for n, a in _cycle_calls(3, 4)]
    assert halts.index(next(h for h in halts if h)) == 11


def test_config_refuses_a_period_of_one():
    from mnemara.core.config import Config
    from mnemara.core.errors import ConfigError

    with pytest.raises(ConfigError, match="sentinel_cycle_max_period"):
        Config.from_dict({"sentinel_cycle_max_period": 1})
    assert Config.from_dict({"sentinel_cycle_max_period": 0}).sentinel_cycle_max_period == 0
