"""The parts session.py hands its work to, without a CLI: the loop helpers behind the sync API,
the turn recorder's once-only notices, the parts' error isolation (the live config: tests/core)."""
from __future__ import annotations

import asyncio
import threading


from mnemara.core import events as ev
from mnemara.core.debuglog import read_events
from mnemara.store.instance import Instance
from mnemara.store.turns import TurnStore
from mnemara.core.sync_runner import LoopThread, running_loop, schedule_on
from mnemara.core.turn_parts import TurnPart, call_each
from mnemara.session.record import TurnRecorder


def test_schedule_on_runs_the_coroutine_on_its_loop_from_that_loop_and_from_another_thread():
    runner = LoopThread("test-seams")
    seen: list[tuple[str, asyncio.AbstractEventLoop | None]] = []
    done = threading.Event()

    async def note(who: str) -> None:
        seen.append((who, running_loop()))
        if len(seen) == 2:
            done.set()

    async def from_the_loop() -> None:
        schedule_on(asyncio.get_running_loop(), note("same loop"))

    try:
        loop = runner.ensure()
        runner.run(from_the_loop(), timeout=10)
        schedule_on(loop, note("other thread"))  # this test's thread has no running loop
        assert done.wait(10)
        assert sorted(who for who, _ in seen) == ["other thread", "same loop"]
        assert all(ran_on is loop for _, ran_on in seen)
    finally:
        runner.stop()
    assert running_loop() is None


def test_run_to_end_uses_a_short_lived_loop_when_none_was_started():
    runner = LoopThread("test-seams")

    async def answer() -> int:
        return 42

    assert runner.run_to_end(answer(), timeout=10) == 42
    assert runner.loop is None  # nothing was left running for a session that never used the sync API


def test_damaged_rows_are_reported_once_per_session(tmp_path):
    instance = Instance.at(tmp_path / "i")
    store = TurnStore(instance.turns_path)
    try:
        recorder = TurnRecorder(instance, store)
        first = recorder.damaged_notices([3, 5])
        assert len(first) == 1 and isinstance(first[0], ev.Notice) and "3, 5" in first[0].message
        again = recorder.damaged_notices([5, 7])
        assert len(again) == 1 and "7" in again[0].message and "5" not in again[0].message
        assert recorder.damaged_notices([3, 5, 7]) == []
    finally:
        store.close()


def test_call_each_skips_and_logs_a_failing_part_or_hook_by_name(tmp_path):
    log = tmp_path / "debug.log"

    class Broken(TurnPart):
        name = "broken-part"

        def turn_context(self, host, text):
            raise RuntimeError("boom")

    class Fine(TurnPart):
        name = "fine"

        def turn_context(self, host, text):
            return f"ctx {text}"

    def broken_hook(text: str) -> str:
        raise ValueError("bad hook")

    assert call_each(log, "pre_turn_context", [Broken(), Fine()], lambda p: p.turn_context(None, "q")) == ["ctx q"]
    assert call_each(log, "pre_turn_context", [broken_hook, str.upper], lambda fn: fn("q")) == ["Q"]
    errors = [e for e in read_events(log) if e["event"] == "pre_turn_context_error"]
    assert [e["part"] for e in errors] == ["broken-part", "broken_hook"]
