"""Peer-poll benchmark (issue 8): what a poll costs and how fast the inbox drains.

Run: python bench/bench_peer.py [--rows 10000] [--polls 300] [--e2e 20]
     python bench/bench_peer.py --nats [--messages 1000] [--interval 0.05] [--kill-trials 100]
     python bench/bench_peer.py --fleet [--tasks 30] [--fleet-messages 20] [--fleet-trials 20]

Poll cost: ``read_pending`` (open read-only, check the schema, query, close) on a
table with ``--rows`` rows, against the same call on an EMPTY table measured in
the same run (the baseline). Scenarios: a steady-state panel whose watermark is
past the old rows; a fresh panel (watermark 0) whose rows are all done or for
other panels (a scan); and a fresh panel with ``--rows`` pending rows for it
(first page of 100). Delivery: rows per second through ``PeerInbox.step`` with a
no-op turn, batched (100 rows a turn) and one turn per row, and silent acks.
With ``--e2e N``: N messages through a real AgentSession, the real Claude CLI and
the scripted Messages API, batched versus one turn per row (wall time, API calls).
With ``--nats``: NATS JetStream beside SQLite (:mod:`peer_transports`): send->turn-start
latency at the same poll interval, delivered messages/s, idle CPU, and duplicate turns across
kill -9 of a panel process; exits 1 when a goal is missed.
With ``--fleet``: headless panels (`mnemara serve` processes, :mod:`peer_fleet`) on one NATS server
with a 0-latency scripted model: tasks per minute through a producer and two engineers, send->turn
start (median, p99; against the bare inbox measured in the same run), duplicate turns and lost tasks
across kill -9 trials (goal 0 and 0), idle CPU of a headless panel (goal <= 1% of a core).
The machine is shared and noisy: compare ratios, not absolute times.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mnemara.peer import PeerInbox, db  # noqa: E402
from mnemara.peer.db import Filter, read_pending  # noqa: E402

ME = Filter(role="eng", senders=("lead",))


def build(path: Path, rows: int, kind: str) -> int:
    """A peer db with ``rows`` rows of ``kind``: 'done', 'others' (pending for another panel) or 'ours'."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    db.create_table(conn)
    conn.execute("BEGIN")
    for n in range(rows):
        status = "done" if kind == "done" else "pending"
        to = "writer" if kind == "others" else "eng"
        conn.execute("INSERT INTO returns (agent_role, recipient_role, payload_json, status, submitted_at)"
                     " VALUES ('lead', ?, ?, ?, '2026-01-01T00:00:00+00:00')",
                     (to, json.dumps({"n": n, "text": "x" * 80}), status))
    conn.execute("COMMIT")
    top = conn.execute("SELECT COALESCE(MAX(id), 0) FROM returns").fetchone()[0]
    conn.close()
    return top


def timed(path: Path, after: int, polls: int) -> float:
    t0 = time.perf_counter()
    for _ in range(polls):
        read_pending(path, ME, after, 100)
    return (time.perf_counter() - t0) / polls


def paired(base: Path, path: Path, after: int, polls: int, repeats: int = 7) -> tuple[float, float]:
    """Median seconds per poll of the baseline and the case, measured alternately (noise hits both)."""
    b, c = [], []
    for _ in range(repeats):
        b.append(timed(base, 0, polls))
        c.append(timed(path, after, polls))
    return statistics.median(b), statistics.median(c)


async def drain(path: Path, batch: bool, silent: bool) -> tuple[float, int, int]:
    turns = 0

    async def deliver(text: str) -> None:
        nonlocal turns
        turns += 1

    inbox = PeerInbox(db_path=path, role="eng", senders=("lead",), deliver=deliver, batch=batch,
                      silent_types=("heartbeat",) if silent else (), max_rows_per_turn=100)
    t0 = time.perf_counter()
    while True:
        before = inbox.stats.delivered_rows + inbox.stats.silent_acked
        await inbox.step()
        if inbox.stats.delivered_rows + inbox.stats.silent_acked == before:
            break
    elapsed = time.perf_counter() - t0
    return elapsed, inbox.stats.delivered_rows + inbox.stats.silent_acked, turns


def e2e(tmp: Path, rows: int) -> None:
    """Wall time to deliver ``rows`` messages through a real AgentSession and the real CLI
    against the scripted Messages API: batched (1 turn) versus one turn per row."""
    import os

    from mnemara.core.config import update_config
    from mnemara.store.instance import Instance
    from mnemara.peer import attach_inbox
    from mnemara.session.agent import AgentSession
    from mnemara.testing.scripted_api import ScriptedAPI

    os.environ["HOME"] = str(tmp)
    os.environ["MNEMARA_HOME"] = str(tmp / ".mnemara")
    print(f"\nend to end through AgentSession + Claude CLI + scripted API ({rows} messages)")
    with ScriptedAPI() as api:
        os.environ.update(api.env())
        results = {}
        for label, batch in [("batched", True), ("one turn per row", False)]:
            path = tmp / f"e2e-{batch}.db"
            conn = sqlite3.connect(path, isolation_level=None)
            db.create_table(conn)
            for n in range(rows):
                db.insert_row(conn, "lead", "eng", json.dumps({"n": n}))
            conn.close()
            inst = Instance.create(f"bench-{'b' if batch else 'r'}")
            update_config(inst.config_path, peer_poll_enabled=True, peer_db_path=str(path), peer_role="eng",
                          peer_poll_batch=batch, peer_poll_interval_seconds=0.05)

            async def run() -> tuple[float, int]:
                session = AgentSession(inst)
                inbox = attach_inbox(session)
                before = len(api.message_requests())
                t0 = time.perf_counter()
                while inbox.stats.delivered_rows < rows:
                    await inbox.step()
                elapsed = time.perf_counter() - t0
                await session.aclose()
                return elapsed, len(api.message_requests()) - before

            elapsed, calls = asyncio.run(run())
            results[label] = elapsed
            print(f"  {label:18s} {rows} rows in {elapsed:6.2f} s  {calls:3d} API calls  "
                  f"{rows / elapsed:7.1f} rows/s")
        print(f"  one-turn-per-row / batched wall time: {results['one turn per row'] / results['batched']:.1f}x")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--polls", type=int, default=300)
    parser.add_argument("--drain-rows", type=int, default=2_000)
    parser.add_argument("--e2e", type=int, default=0, metavar="N",
                        help="also deliver N messages through the real CLI and the scripted API")
    parser.add_argument("--nats", action="store_true", help="NATS JetStream beside SQLite, with goals")
    parser.add_argument("--messages", type=int, default=1000, help="--nats: messages for the latency figures")
    parser.add_argument("--interval", type=float, default=0.05, help="--nats: poll interval of both inboxes")
    parser.add_argument("--idle-seconds", type=float, default=10.0)
    parser.add_argument("--kill-trials", type=int, default=100)
    parser.add_argument("--per-trial", type=int, default=3, help="messages sent while each killed panel runs")
    parser.add_argument("--seed", type=int, default=29)
    parser.add_argument("--fleet", action="store_true", help="headless panels (mnemara serve) on NATS, with goals")
    parser.add_argument("--tasks", type=int, default=30, help="--fleet: tasks the producer hands out")
    parser.add_argument("--fleet-messages", type=int, default=20, help="--fleet: messages for the latency figures")
    parser.add_argument("--fleet-trials", type=int, default=20, help="--fleet: kill -9 trials")
    args = parser.parse_args()
    if args.fleet:
        from peer_fleet import run as run_fleet

        with tempfile.TemporaryDirectory() as tmp:
            ok = run_fleet(Path(tmp), tasks=args.tasks, messages=args.fleet_messages, trials=args.fleet_trials,
                           per_trial=args.per_trial, idle_seconds=args.idle_seconds, seed=args.seed)
        sys.exit(0 if ok else 1)
    if args.nats:
        from peer_transports import run

        with tempfile.TemporaryDirectory() as tmp:
            ok = run(Path(tmp), messages=args.messages, interval=args.interval, drain_count=args.drain_rows,
                     idle_seconds=args.idle_seconds, trials=args.kill_trials, per_trial=args.per_trial, seed=args.seed)
        sys.exit(0 if ok else 1)
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        build(t / "empty.db", 0, "done")
        top_done = build(t / "done.db", args.rows, "done")
        build(t / "others.db", args.rows, "others")
        build(t / "ours.db", args.rows, "ours")
        cases = [
            (f"{args.rows} done rows, watermark at top (steady state)", t / "done.db", top_done),
            (f"{args.rows} done rows, watermark 0 (fresh panel, scan)", t / "done.db", 0),
            (f"{args.rows} pending rows for another panel, watermark 0", t / "others.db", 0),
            (f"{args.rows} pending rows for us, first page of 100", t / "ours.db", 0),
        ]
        print(f"poll cost (median of 7 x {args.polls} polls, each case paired with an empty-table poll)")
        for label, path, after in cases:
            base, cost = paired(t / "empty.db", path, after, args.polls)
            print(f"  {label:58s} {cost * 1e6:8.1f} us vs empty {base * 1e6:7.1f} us  {cost / base:5.2f}x")

        print(f"\ndelivery throughput ({args.drain_rows} pending rows, no-op turn)")
        for label, batch, silent in [("batched, 100 rows per turn", True, False),
                                     ("one turn per row", False, False),
                                     ("silent acks (no turn)", True, True)]:
            path = t / f"drain-{batch}-{silent}.db"
            conn = sqlite3.connect(path, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            db.create_table(conn)
            conn.execute("BEGIN")
            for n in range(args.drain_rows):
                payload = {"type": "heartbeat"} if silent else {"n": n}
                db.insert_row(conn, "lead", "eng", json.dumps(payload))
            conn.execute("COMMIT")
            conn.close()
            elapsed, rows, turns = asyncio.run(drain(path, batch, silent))
            print(f"  {label:34s} {rows:6d} rows in {elapsed * 1e3:8.1f} ms  "
                  f"{rows / elapsed:10.0f} rows/s  ({turns} turns)")
        if args.e2e:
            e2e(t, args.e2e)


if __name__ == "__main__":
    main()
