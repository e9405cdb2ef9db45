"""Store benchmark (issue 2): window assembly vs history size, append throughput, CLI cold start.

Run: python bench/bench_store.py [--max-rows 1000000]
Prints ratios measured in this one run; the machine is shared and noisy, so
compare ratios, not absolute times.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mnemara.store import TurnStore  # noqa: E402


def fill(store: TurnStore, target: int) -> None:
    have = store.counts()["stored"]
    batch = 50_000
    while have < target:
        n = min(batch, target - have)
        store.append_many(("user" if (have + i) % 2 == 0 else "assistant", f"message {have + i} " + "lorem " * 30) for i in range(n))
        have += n


def time_window(store: TurnStore, repeats: int = 50) -> float:
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        store.window(20, 200_000)
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def cold_start(cmd: list[str], env: dict[str, str], repeats: int = 7) -> float:
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        subprocess.run(cmd, env=env, capture_output=True, check=True)
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--max-rows", type=int, default=1_000_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = TurnStore(Path(tmp) / "turns.sqlite")
        for i in range(3):
            store.upsert_slot(f"slot{i}", "system", f"value {i}")
        results = {}
        for size in (1_000, 100_000, args.max_rows):
            fill(store, size)
            results[size] = time_window(store)
            print(f"window assembly at {size:>9,} rows: {results[size] * 1e3:8.3f} ms (median of 50)")
        base = results[1_000]
        print(f"ratio {args.max_rows:,}/1k: {results[args.max_rows] / base:.2f}  (goal < 2: O(window), not O(history))")
        print(f"ratio 100k/1k: {results[100_000] / base:.2f}")

        n = 2_000
        t0 = time.perf_counter()
        for i in range(n):
            store.append("user", f"single append {i}")
        single = n / (time.perf_counter() - t0)
        t0 = time.perf_counter()
        store.append_many(("user", f"bulk {i}") for i in range(50_000))
        bulk = 50_000 / (time.perf_counter() - t0)
        print(f"append throughput: {single:,.0f} rows/s one transaction each; {bulk:,.0f} rows/s bulk "
              f"(single/bulk = {single / bulk:.3f})")
        store.close()

        env = dict(os.environ, MNEMARA_HOME=str(Path(tmp) / "home"), PYTHONPATH=str(ROOT))
        bare = cold_start([sys.executable, "-c", "pass"], env)
        lst = cold_start([sys.executable, "-m", "mnemara", "list"], env)
        print(f"cold start: python -c pass {bare * 1e3:.0f} ms, mnemara list {lst * 1e3:.0f} ms, ratio {lst / bare:.2f}")


if __name__ == "__main__":
    main()
