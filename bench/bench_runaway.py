"""Issue 36: does the runtime sentinel halt runaway loops early, and never productive work?

Run: python bench/bench_runaway.py [--set dev|blind|both] [--verbose]

Feeds the labelled traces (bench/data/runaway_dev.json and the held-out runaway_blind.json,
written by bench/make_runaway_traces.py before the sentinel was tuned) through
:class:`~mnemara.guard.sentinel.SentinelWatch` with the default settings, the way a turn
does: the ``PreToolUse`` check before each call, the stream's tool_use and result after it;
a call the CLI rejected before any hook reaches the sentinel only through the stream. A
halt ends the trace's turn. Reports, per set:

* runaways halted, and calls from the point where a person calls it a loop (``loop_at``) to
  the halt. Goal: every runaway halted within 3 calls of that point;
* false halts of productive traces. Goal: 0;
* overhead per tool call: the same feeding loop with the sentinel against the loop alone,
  measured in this run. Goal: <= 1 ms per call.

Beside each count: the sentinel's rule before issue 36 (exact repeats, cycles of 2-4 calls),
run on the same traces in the same run, as the baseline.

When bench/bench_halt.py (the requests that still reach the API after a halt) is present, it
is run and its figures are printed too. Exits 1 when a goal is missed or a measurement is
invalid (what missed is printed last).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mnemara.guard.sentinel import SentinelWatch  # noqa: E402

DATA = ROOT / "bench" / "data"
WITHIN_CALLS = 3
OVERHEAD_GOAL_MS = 1.0


@dataclass
class Outcome:
    name: str
    category: str
    label: str
    loop_at: int | None
    calls: int
    halted_at: int | None  # index of the call the halt came on (over all the trace's calls)
    trigger: str | None

    @property
    def late_by(self) -> int | None:
        if self.loop_at is None or self.halted_at is None:
            return None
        return self.halted_at - self.loop_at


class _NoWatch:
    """The feeding loop without a sentinel: the baseline for the overhead."""

    halt = None

    def begin_turn(self) -> None: ...

    def check(self, name: str, tool_input: object, tool_use_id: str | None = None) -> str | None:
        return None

    def saw_tool_use(self, tool_use_id: str, name: str, tool_input: object) -> None: ...

    def saw_result(self, tool_use_id: str, output: str, is_error: bool) -> None: ...


class PreviousSentinel(_NoWatch):
    """The baseline: the rule the runtime sentinel had before issue 36, on the same feed. The same
    tool with the same arguments (Bash's description aside) 3 times in the last 5 calls, or one
    sequence of 2-4 different calls 3 times in a row; it saw neither outputs nor the calls the CLI
    rejected before the hook, and its memory spanned turns."""

    def __init__(self) -> None:
        self.recent: list[str] = []
        self.halt: Any = None

    def begin_turn(self) -> None:
        self.halt = None

    def check(self, name: str, tool_input: object, tool_use_id: str | None = None) -> str | None:
        if isinstance(tool_input, dict) and name == "Bash":
            tool_input = {k: v for k, v in tool_input.items() if k != "description"}
        self.recent = [*self.recent, f"{name} {json.dumps(tool_input, sort_keys=True)}"][-12:]
        key, trigger = self.recent[-1], None
        if self.recent[-5:].count(key) >= 3:
            trigger = "polling"
        for period in range(2, 5):
            tail = self.recent[-period * 3:]
            if len(tail) == period * 3 and len(set(tail[:period])) == period and \
                    all(tail[i] == tail[i % period] for i in range(len(tail))):
                trigger = trigger or "cycle"
        if trigger is None:
            return None
        self.recent = []
        self.halt = type("Halt", (), {"trigger": trigger})()
        return "halt"


def feed(trace: dict[str, Any], watch: Any) -> tuple[int | None, str | None]:
    """Run one trace through ``watch`` as turns do; the index of the halting call, and its trigger."""
    index = -1
    for turn in trace["turns"]:
        watch.begin_turn()
        for call in turn:
            index += 1
            use_id = f"toolu_{index:04d}"
            watch.saw_tool_use(use_id, call["tool"], call["input"])
            if not call["rejected"] and watch.check(call["tool"], call["input"], use_id) is not None:
                return index, watch.halt.trigger
            watch.saw_result(use_id, call["output"], call["is_error"])
            if watch.halt is not None:
                return index, watch.halt.trigger
    return None, None


def run_set(path: Path, make: Any = SentinelWatch) -> list[Outcome]:
    data = json.loads(path.read_text())
    out = []
    for trace in data["traces"]:
        at, trigger = feed(trace, make())
        calls = sum(len(t) for t in trace["turns"])
        out.append(Outcome(trace["name"], trace["category"], trace["label"], trace["loop_at"], calls, at, trigger))
    return out


def overhead_ms(path: Path, rounds: int = 15) -> tuple[float, float, int]:
    """Milliseconds per call with the sentinel and without (best of ``rounds``), and the calls fed."""
    traces = json.loads(path.read_text())["traces"]
    calls = sum(len(t) for tr in traces for t in tr["turns"])

    def timed(make: Any) -> float:
        best = float("inf")
        for _ in range(rounds):
            start = time.perf_counter()
            for trace in traces:
                feed(trace, make())
            best = min(best, time.perf_counter() - start)
        return best * 1000 / calls

    return timed(SentinelWatch), timed(_NoWatch), calls


def request_check_ms(rounds: int = 20) -> tuple[float, int]:
    """What the recorder's check of one request costs (judging the tool results it carries) for a
    request of a long session: 400 messages of history, about 600 KB. Informational: it is paid per API
    request, not per tool call."""
    history: list[dict[str, Any]] = []
    for i in range(200):
        history.append({"role": "user", "content": [{"type": "text", "text": f"step {i} " + "context " * 300}]})
        history.append({"role": "assistant", "content": [{"type": "text", "text": "ok " * 200}]})
    history.append({"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_x", "name": "Bash",
                                                       "input": {"command": "pytest -q"}}]})
    history.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_x",
                                                  "content": "3 passed in 0.02s"}]})
    body = json.dumps({"model": "claude-sonnet-4-5", "messages": history}).encode()
    best = float("inf")
    for _ in range(rounds):
        watch = SentinelWatch()
        watch.begin_turn()
        start = time.perf_counter()
        watch.judge_request(body)
        best = min(best, time.perf_counter() - start)
    return best * 1000, len(body)


def report(label: str, outcomes: list[Outcome], baseline: list[Outcome], verbose: bool) -> list[str]:
    missed: list[str] = []
    base_halted = sum(1 for o in baseline if o.label == "runaway" and o.halted_at is not None)
    base_in_time = sum(1 for o in baseline if o.late_by is not None and o.late_by <= WITHIN_CALLS)
    base_false = sum(1 for o in baseline if o.label == "productive" and o.halted_at is not None)
    runaways = [o for o in outcomes if o.label == "runaway"]
    productive = [o for o in outcomes if o.label == "productive"]
    halted = [o for o in runaways if o.halted_at is not None]
    in_time = [o for o in halted if o.late_by is not None and o.late_by <= WITHIN_CALLS]
    false = [o for o in productive if o.halted_at is not None]
    lates = [o.late_by for o in halted if o.late_by is not None]
    print(f"\n== {label} set: {len(runaways)} runaway, {len(productive)} productive traces ==")
    print(f"runaways halted:                 {len(halted)}/{len(runaways)}  (previous sentinel: {base_halted})")
    print(f"halted within {WITHIN_CALLS} calls of loop_at:  {len(in_time)}/{len(runaways)}  (goal: all; "
          f"previous sentinel: {base_in_time})")
    if lates:
        print(f"calls from loop start to halt:   mean {sum(lates) / len(lates):.2f}, max {max(lates)}, "
              f"min {min(lates)} (negative: halted before the marked point)")
    print(f"false halts:                     {len(false)}/{len(productive)}  (goal: 0; previous sentinel: "
          f"{base_false})")
    triggers: dict[str, int] = {}
    for o in halted:
        triggers[o.trigger or "?"] = triggers.get(o.trigger or "?", 0) + 1
    print("triggers: " + ", ".join(f"{k} {v}" for k, v in sorted(triggers.items())))
    for o in outcomes:
        bad = (o.label == "runaway" and (o.late_by is None or o.late_by > WITHIN_CALLS)) or \
              (o.label == "productive" and o.halted_at is not None)
        if bad or verbose:
            where = "not halted" if o.halted_at is None else f"halted at call {o.halted_at} ({o.trigger})"
            mark = "MISS " if bad else "     "
            print(f"  {mark}{o.label:10} {o.category:14} {o.name:36} loop_at={o.loop_at} calls={o.calls} {where}")
    if len(in_time) < len(runaways):
        missed.append(f"{label}: {len(runaways) - len(in_time)} runaway(s) not halted within {WITHIN_CALLS} calls")
    if false:
        missed.append(f"{label}: {len(false)} false halt(s)")
    return missed


def halt_bench() -> list[str]:
    """bench/bench_halt.py's figures (requests after a halt), when that bench exists."""
    script = ROOT / "bench" / "bench_halt.py"
    if not script.exists():
        print("\n(bench/bench_halt.py is not here: requests after a halt are not measured by this run)")
        return []
    print(f"\n== requests after a halt: {script.relative_to(ROOT)} ==", flush=True)
    done = subprocess.run([sys.executable, str(script)], cwd=ROOT, capture_output=True, text=True, timeout=1200)
    print(done.stdout.rstrip())
    if done.returncode != 0:
        print(done.stderr.rstrip()[-2000:])
        return [f"bench_halt.py exited {done.returncode}"]
    return []


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", choices=("dev", "blind", "both"), default="both")
    parser.add_argument("--verbose", action="store_true", help="list every trace, not only the misses")
    parser.add_argument("--skip-halt-bench", action="store_true", help="do not run bench/bench_halt.py")
    args = parser.parse_args()
    print(f"goals: every runaway halted within {WITHIN_CALLS} calls of where a person calls it a loop; "
          f"0 false halts; overhead <= {OVERHEAD_GOAL_MS} ms per tool call")
    missed: list[str] = []
    sets = ("dev", "blind") if args.set == "both" else (args.set,)
    for label in sets:
        path = DATA / f"runaway_{label}.json"
        outcomes = run_set(path)
        if not any(o.label == "runaway" for o in outcomes) or not any(o.label == "productive" for o in outcomes):
            missed.append(f"{label}: invalid trace set (needs runaway and productive traces)")
            continue
        missed += report(label, outcomes, run_set(path, PreviousSentinel), args.verbose)
        with_ms, without_ms, calls = overhead_ms(path)
        extra = with_ms - without_ms
        print(f"overhead per tool call:          {extra:.4f} ms (sentinel {with_ms:.4f} ms vs "
              f"feeding loop alone {without_ms:.4f} ms, ratio {with_ms / max(without_ms, 1e-9):.1f}x, "
              f"{calls} calls, best of 15)  (goal: <= {OVERHEAD_GOAL_MS} ms)")
        if without_ms <= 0 or with_ms <= 0:
            missed.append(f"{label}: invalid timing")
        elif extra > OVERHEAD_GOAL_MS:
            missed.append(f"{label}: overhead {extra:.3f} ms per call")
    check_ms, size = request_check_ms()
    print(f"\nrecorder's check of one request ({size // 1024} KB of history): {check_ms:.2f} ms, best of 20 "
          "(per API request, informational)")
    if not args.skip_halt_bench:
        missed += halt_bench()
    if missed:
        print("\nMISSED: " + "; ".join(missed))
        return 1
    print("\nall goals met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
