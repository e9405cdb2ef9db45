"""Store benchmark (issues 2 and 19): window, counts and trim on a store shaped like a real one.

Run: python bench/bench_store.py [--max-rows 1000000] [--no-check]

A long-lived instance keeps every row it ever evicted, so the store is shaped
like one: a few pinned slots, a live window of 40 rows, and everything else
evicted. At 1k, 100k and --max-rows rows it times (median of 50):

* window()  - the rolling window the next turn is built from;
* counts()  - stored/live/pinned/evicted/tokens (the status line and /context);
* trim()    - the end-of-turn trim after a turn added two rows (evicts two);
* the first trim() after a bulk load of --bulk live rows (one bounded step), how
  long the steps take to evict all of them, and the one-shot trim it replaced.

The full-scan count query that counts() replaced is timed on the same store as
a reference. Goals (issue 19): window, counts and trim at --max-rows under
10 ms each, window/counts at --max-rows within 3x of 1k rows (O(window)), and
the first trim after a bulk load under 100 ms.
Exits 1 when a goal is missed (2 when the measurement is invalid) unless --no-check.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mnemara.store.turns import TRIM_BATCH, TurnStore  # noqa: E402

WINDOW = 40
GOAL_MS = 10.0
GOAL_FLAT = 3.0
GOAL_BULK_MS = 100.0  # the first trim after a bulk load is one bounded step (it took 8.3 s at 1M rows)
OLD_COUNTS = ("SELECT COUNT(*), COALESCE(SUM(pin_label IS NULL AND evicted=0), 0), COALESCE(SUM(pin_label IS NOT NULL), 0),"
              " COALESCE(SUM(CASE WHEN evicted=0 OR pin_label IS NOT NULL THEN tokens ELSE 0 END), 0) FROM turns")


def grow_evicted(store: TurnStore, target: int) -> None:
    """Add evicted history (as trims would have left it) until the store holds ``target`` rows."""
    have = store.counts()["stored"]
    body = '[{"text":"' + "lorem ipsum dolor " * 20 + '","type":"text"}]'
    while have < target:
        n = min(100_000, target - have)
        with store.transaction() as conn:
            conn.executemany(
                "INSERT INTO turns(role, content, tokens, created_at, evicted) VALUES (?, ?, 90, '2026-01-01T00:00:00Z', 1)",
                ((("user", "assistant")[i % 2], body) for i in range(n)))
        have += n
    live = [t.id for t in store.live_rows()]
    with store.transaction() as conn:  # the live window stays the newest rows
        for tid in live:
            conn.execute("UPDATE turns SET evicted=1 WHERE id=?", (tid,))
    store.append_many(("user" if i % 2 else "assistant", f"live message {i} " + "lorem " * 30) for i in range(WINDOW))


def median_ms(fn, repeats: int = 50) -> float:
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples) * 1000


def time_trim(store: TurnStore, repeats: int = 50) -> float:
    """A turn's end: two new rows, then the trim that evicts the two oldest of the window."""
    samples = []
    for i in range(repeats):
        store.append("user", f"question {i}")
        store.append("assistant", f"answer {i}")
        window = store.window(WINDOW, 10_000_000)
        t0 = time.perf_counter()
        evicted = store.trim(window)
        samples.append(time.perf_counter() - t0)
        if evicted != 2:
            raise SystemExit(f"INVALID: a steady-state trim evicted {evicted} rows, expected 2")
    return statistics.median(samples) * 1000


def bulk_trim(store: TurnStore, rows: int) -> tuple[float, float, float]:
    """Load ``rows`` live rows at once; (first trim ms, seconds until all are trimmed, old one-shot trim s).

    The old trim (one UPDATE of everything older than the window) is timed on a
    second load of the same size, as the baseline.
    """
    store.append_many(("user", f"imported {i}") for i in range(rows))
    window = store.window(WINDOW, 10_000_000)
    t0 = time.perf_counter()
    first = store.trim(window)
    first_ms = (time.perf_counter() - t0) * 1000
    total = first
    while (n := store.trim(window)) > 0:
        total += n
    all_s = time.perf_counter() - t0
    if first != TRIM_BATCH or total != rows:  # the new rows push the old window and all but 40 of them out
        raise SystemExit(f"INVALID: bulk trim evicted {first} then {total} rows in all, expected {TRIM_BATCH}/{rows}")
    store.append_many(("user", f"imported again {i}") for i in range(rows))
    oldest = store.window(WINDOW, 10_000_000).rows[0].id
    t0 = time.perf_counter()
    with store.transaction() as conn:
        old = conn.execute("UPDATE turns SET evicted=1 WHERE pin_label IS NULL AND evicted=0 AND id < ?", (oldest,)).rowcount
    old_s = time.perf_counter() - t0
    if old != rows:
        raise SystemExit(f"INVALID: the one-shot baseline trim evicted {old} rows, expected {rows}")
    return first_ms, all_s, old_s


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--max-rows", type=int, default=1_000_000)
    ap.add_argument("--bulk", type=int, default=100_000, help="rows of the bulk load before the first trim")
    ap.add_argument("--no-check", action="store_true", help="print the figures, never fail on a goal")
    args = ap.parse_args()
    print(f"goal: window, counts and trim at {args.max_rows:,} rows < {GOAL_MS:.0f} ms; window and counts at "
          f"{args.max_rows:,} within {GOAL_FLAT:.0f}x of 1k rows; first trim after a bulk load < {GOAL_BULK_MS:.0f} ms")
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} (1/5/15 min), cpus {os.cpu_count()}")
    misses: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        store = TurnStore(Path(tmp) / "turns.sqlite")
        for i in range(3):
            store.upsert_slot(f"slot{i}", "system", f"value {i}")
        results: dict[int, dict[str, float]] = {}
        print(f"{'rows':>10} {'evicted':>10} {'window':>9} {'counts':>9} {'trim':>9} {'old full-scan counts':>21}")
        for size in (1_000, 100_000, args.max_rows):
            grow_evicted(store, size)
            counts = store.counts()
            r = {
                "window": median_ms(lambda: store.window(WINDOW, 10_000_000)),
                "counts": median_ms(store.counts),
                "trim": time_trim(store),
                "old": median_ms(lambda: store._conn.execute(OLD_COUNTS).fetchone(), repeats=5),
            }
            results[size] = r
            print(f"{counts['stored']:>10,} {counts['evicted']:>10,} {r['window']:>7.3f}ms {r['counts']:>7.3f}ms "
                  f"{r['trim']:>7.3f}ms {r['old']:>19.3f}ms")
        first_ms, all_s, old_s = bulk_trim(store, args.bulk)
        print(f"bulk load of {args.bulk:,} live rows: first trim {first_ms:.2f} ms (evicts {TRIM_BATCH}); all trimmed "
              f"after {all_s:.2f} s of such steps; the one-shot trim it replaced: {old_s * 1000:.0f} ms in one transaction "
              f"({old_s * 1000 / first_ms:.0f}x the first step)")
        store.close()
    top, base = results[args.max_rows], results[1_000]
    for name in ("window", "counts", "trim"):
        if top[name] >= GOAL_MS:
            misses.append(f"{name} at {args.max_rows:,} rows: {top[name]:.2f} ms >= {GOAL_MS} ms")
    if first_ms >= GOAL_BULK_MS:
        misses.append(f"first trim after a bulk load: {first_ms:.2f} ms >= {GOAL_BULK_MS} ms")
    for name in ("window", "counts"):
        ratio = top[name] / base[name]
        print(f"{name}: {args.max_rows:,} rows / 1k rows = {ratio:.2f} (goal < {GOAL_FLAT:.0f})")
        if ratio >= GOAL_FLAT:
            misses.append(f"{name} grows with history: ratio {ratio:.2f}")
    print(f"counts(): {top['old'] / top['counts']:.0f}x faster than the full-scan query at {args.max_rows:,} rows")
    if misses:
        print("MISSED: " + "; ".join(misses))
        return 0 if args.no_check else 1
    print("all goals met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
