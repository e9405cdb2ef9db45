"""CPU of the first LanceDB import in a fresh process: through ``load_backend`` against a plain ``import lancedb``.

Run: python bench/bench_backend_import.py [--rounds 5]

``load_backend("lancedb")`` defers the ``__init__`` of lance_namespace's REST client package (see
mnemara/core/backend_loader.py); a plain import builds all of it. Each round starts one fresh interpreter
of each kind, alternating, and measures its CPU (user + system). Prints the medians and the ratio.

Goal: the guarded import costs at most 60% of the plain one. Exits 1 when the goal is missed, 2 when
the measurement is invalid (a child failed, or the guarded child built the REST API classes anyway).
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOAL = 0.6
REPORT = "import sys; print(any(m.startswith('lance_namespace_urllib3_client.api') for m in sys.modules))"
GUARDED = "from mnemara.core.backend_loader import load_backend; load_backend('lancedb'); " + REPORT
PLAIN = "import mnemara.core.backend_loader, lancedb; " + REPORT


def child_cpu(code: str) -> tuple[float, str]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"invalid: a child failed: {done.stderr.strip().splitlines()[-1:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), done.stdout.strip()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    guarded, plain = [], []
    for _ in range(args.rounds):
        took, built = child_cpu(GUARDED)
        if built != "False":
            print("invalid: load_backend built the REST API classes")
            return 2
        guarded.append(took)
        plain.append(child_cpu(PLAIN)[0])
    ratio = statistics.median(guarded) / statistics.median(plain)
    print(f"first LanceDB import, CPU median of {args.rounds} fresh processes: load_backend "
          f"{statistics.median(guarded):.2f} s, plain import {statistics.median(plain):.2f} s; "
          f"ratio {ratio:.2f} (goal <= {GOAL})")
    return 0 if ratio <= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
