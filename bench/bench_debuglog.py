"""Events per second written to debug.log: through the instance logger against the old open-per-event way.

Run: python bench/bench_debuglog.py [--events 5000] [--rounds 5]

Each round writes ``--events`` events of a typical size (a tool call's verdict and a short
reason) to a fresh ``debug.log`` both ways, alternating which goes first:

* new: ``log_event(path, ...)``, which finds the instance's logger and hands the record to its
  JSON-lines handler, whose file stays open (locked per record);
* old (baseline, what ``log_event`` did before issue 28): ``json.dumps`` the record and
  ``locked_append`` it, which checks the path for links, makes the folder, opens, locks,
  writes and closes the file for every event.

Both are timed in CPU of this process (``time.process_time``), so other work on the machine
weighs less. Goal: the new way writes at least 2x the events per CPU second of the old one
(medians over the rounds). Exits 1 when the goal is missed, 2 when the measurement is invalid
(a file does not hold exactly the events written, or the two files' lines differ in anything
but their timestamps).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

GOAL = 2.0


def old_log_event(log_path: Path, event: str, /, level: str = "info", **fields: Any) -> None:
    """The baseline: debuglog.log_event as it was, one open/lock/write/close per event."""
    from mnemara.core.debuglog import now_iso
    from mnemara.core.fsutil import locked_append

    record = {"ts": now_iso(), "level": level, "event": event, **fields}
    try:
        locked_append(Path(log_path), json.dumps(record, ensure_ascii=False, default=str) + "\n")
    except OSError:
        pass


def write(log: Callable[..., None], path: Path, events: int) -> float:
    """CPU seconds to write ``events`` events to ``path`` with ``log``."""
    start = time.process_time()
    for i in range(events):
        log(path, "tool_call", tool="Bash", verdict="allow" if i % 3 else "ask", reason=f"pattern {i % 17} matched",
            row=i)
    return time.process_time() - start


def lines_without_ts(path: Path) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for row in rows:
        row.pop("ts", None)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if args.events < 1 or args.rounds < 1:
        print("INVALID: --events and --rounds must be at least 1")
        return 2
    from mnemara.core.debuglog import log_event

    print(f"goal: the logger writes >= {GOAL}x the events per CPU second of open-per-event appends")
    new_s: list[float] = []
    old_s: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            new_path, old_path = Path(tmp, f"new{r}", "debug.log"), Path(tmp, f"old{r}", "debug.log")
            ways = [(log_event, new_path, new_s), (old_log_event, old_path, old_s)]
            for log, path, times in ways if r % 2 == 0 else ways[::-1]:
                times.append(write(log, path, args.events))
            new_rows, old_rows = lines_without_ts(new_path), lines_without_ts(old_path)
            if len(new_rows) != args.events or new_rows != old_rows:
                print(f"INVALID: round {r}: {len(new_rows)} new and {len(old_rows)} old lines for {args.events} "
                      "events, or their contents differ")
                return 2
    new_rate, old_rate = args.events / statistics.median(new_s), args.events / statistics.median(old_s)
    ratio = new_rate / old_rate
    load = os.getloadavg()[0]
    print(f"measured: logger {new_rate:,.0f} events/s, baseline open-per-event {old_rate:,.0f} events/s "
          f"(CPU, median of {args.rounds} rounds of {args.events}); ratio {ratio:.2f}x; load average {load:.1f}")
    if ratio < GOAL:
        print(f"MISSED: {ratio:.2f}x < {GOAL}x")
        return 1
    print("goal met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
