"""What opening the Kuzu graph costs in CPU: the crash probe skipped after a clean close, and the bounded buffer pool.

Run: python bench/bench_graph_open.py [--rounds 5]

1. Reopening an existing graph (a new session, a one-off ``write_memory``): ``Graph`` with a clean-close
   stamp (the probe is skipped) against the same file without the stamp (the probe runs, as before),
   alternating the two in each round. CPU of this process plus its children, median per open.
2. One open + write + close cycle in-process: Mnemara's ``open_database`` (512 MiB buffer pool)
   against ``kuzu.Database`` with Kuzu's default pool (80% of RAM), alternating.

Goals: an open that skips the probe costs at most 1/3 of one that probes; a cycle with the bounded pool
costs at most 1/2 of one with the default pool. Exits 1 when a goal is missed, 2 when the measurement
is invalid (the probe did not run or was not skipped when expected, or a graph lost its data).
"""
from __future__ import annotations

import argparse
import resource
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mnemara.memory.graph.store import SCHEMA, Graph, open_database  # noqa: E402
from mnemara.memory.graph.stamp import stamp_path, stamped_version  # noqa: E402

PROBE_GOAL = 1 / 3
POOL_GOAL = 1 / 2


def cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def measured(step: Callable[[], None]) -> float:
    start = cpu()
    step()
    return cpu() - start


def reopen(folder: Path, *, stamped: bool) -> Callable[[], None]:
    def run() -> None:
        if not stamped:
            stamp_path(folder / "graph.kuzu").unlink()
        graph = Graph(folder)
        counts = graph.counts()
        graph.close()
        if counts != {"nodes": 50, "edges": 49} or graph.probes != (0 if stamped else 1):
            raise SystemExit(f"invalid: counts {counts}, probes {graph.probes} (stamped={stamped})")
    return run


def cycle(kuzu: object, path: Path, *, bounded: bool) -> Callable[[], None]:
    def run() -> None:
        db = open_database(kuzu, path) if bounded else kuzu.Database(str(path))  # type: ignore[attr-defined]
        conn = kuzu.Connection(db)  # type: ignore[attr-defined]
        for statement in SCHEMA:
            conn.execute(statement)
        conn.execute("MERGE (n:Node {id: 'bench'}) ON CREATE SET n.label = 'x'")
        conn.close()
        db.close()
    return run


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    import kuzu

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "graph"
        graph = Graph(folder)
        for n in range(50):
            graph.add_node("thing", {"n": n}, f"n{n}")
        for n in range(49):
            graph.add_edge(f"n{n}", f"n{n + 1}", "next")
        graph.close()
        if stamped_version(folder / "graph.kuzu") != kuzu.__version__:
            print("invalid: a clean close left no stamp")
            return 2
        skipped, probed = [], []
        for _ in range(args.rounds):  # each reopen closes cleanly again, so the stamp is back for the next
            probed.append(measured(reopen(folder, stamped=False)))
            skipped.append(measured(reopen(folder, stamped=True)))
        bounded, default = [], []
        for n in range(args.rounds):
            bounded.append(measured(cycle(kuzu, Path(tmp) / f"b{n}.kuzu", bounded=True)))
            default.append(measured(cycle(kuzu, Path(tmp) / f"d{n}.kuzu", bounded=False)))

    probe_ratio = statistics.median(skipped) / statistics.median(probed)
    pool_ratio = statistics.median(bounded) / statistics.median(default)
    print(f"reopen an existing graph, CPU median of {args.rounds}: probe skipped {statistics.median(skipped) * 1000:.0f} ms, "
          f"probed {statistics.median(probed) * 1000:.0f} ms; ratio {probe_ratio:.2f} (goal <= {PROBE_GOAL:.2f})")
    print(f"open+write+close, CPU median of {args.rounds}: 512 MiB pool {statistics.median(bounded) * 1000:.0f} ms, "
          f"default pool {statistics.median(default) * 1000:.0f} ms; ratio {pool_ratio:.2f} (goal <= {POOL_GOAL:.2f})")
    return 0 if probe_ratio <= PROBE_GOAL and pool_ratio <= POOL_GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
