"""NATS beside SQLite for ``bench_peer.py --nats`` (issue 29): latency, throughput, idle CPU, kill -9.

- send -> turn start: one message at a time through a running inbox (``PeerInbox.start``), the
  same ``peer_poll_interval_seconds`` for both; median and p99 over ``messages``.
- delivered messages/s: ``drain`` pending messages in batches of 100 (no-op turn), acks included.
- idle CPU: this process's CPU time while a started inbox waits ``idle_seconds`` with nothing to do,
  as a percentage of one core (the nats-server's own CPU is reported beside it).
- kill -9: a panel process (:mod:`mnemara.testing.peer_panel`, a real inbox and turns.sqlite) is
  killed ``trials`` times while messages keep coming: half at a random point after it is ready,
  half right after a turn's answer was stored (its ack in flight); then a last panel runs to the
  end. Every message must be in exactly one stored answer.

Goals: NATS median send->turn-start <= SQLite's; idle CPU <= 1% of a core; zero duplicate turns.
"""
from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from mnemara.core.config import Config
from mnemara.peer import PeerInbox, db
from mnemara.peer.outbox import send_async
from mnemara.testing.nats_server import NatsServer
from mnemara.testing.peer_panel import StorePanel

ROOT = Path(__file__).resolve().parents[1]


def nats_cfg(server: NatsServer, stream: str, interval: float, **extra: Any) -> Config:
    return Config.from_dict({"peer_poll_enabled": True, "peer_transport": "nats", "peer_nats_url": server.url,
                             "peer_nats_stream": stream, "peer_nats_subject_prefix": f"b.{stream}",
                             "peer_role": "eng", "peer_poll_interval_seconds": interval, **extra})


def sqlite_cfg(path: Path, interval: float) -> Config:
    return Config.from_dict({"peer_poll_enabled": True, "peer_db_path": str(path), "peer_role": "eng",
                             "peer_poll_interval_seconds": interval, "peer_deliver_backlog": True})


def new_db(path: Path) -> Path:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    db.create_table(conn)
    conn.close()
    return path


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


async def latency(config: Config, root: Path, messages: int) -> list[float]:
    """Seconds from the send call to the start of the turn carrying it, one message at a time."""
    started: asyncio.Queue[float] = asyncio.Queue()

    async def deliver(text: str) -> None:
        started.put_nowait(time.perf_counter())

    inbox = PeerInbox.from_config(config, "eng", deliver=deliver, instance_root=root)
    inbox.start()
    lead = config.model_copy(update={"peer_role": "lead"})
    out: list[float] = []
    try:
        if inbox.feed is not None:
            await inbox.feed.wait_ready(10)
        await asyncio.sleep(config.peer_poll_interval_seconds * 1.5)  # the first poll is done
        for n in range(messages):
            await asyncio.sleep(random.uniform(0, config.peer_poll_interval_seconds))  # any phase of the poll
            t0 = time.perf_counter()
            await send_async(lead, "lead", root, "eng", json.dumps({"n": n}))
            out.append(await asyncio.wait_for(started.get(), 30) - t0)
    finally:
        await inbox.aclose()
    return out


async def drain(config: Config, root: Path, count: int) -> tuple[float, int, int]:
    """Pre-send ``count`` messages, then time a started inbox until all are delivered (and acked)."""
    lead = config.model_copy(update={"peer_role": "lead"})
    for n in range(count):
        await send_async(lead, "lead", root, "eng", json.dumps({"n": n}))
    turns = 0

    async def deliver(text: str) -> None:
        nonlocal turns
        turns += 1

    inbox = PeerInbox.from_config(config, "eng", deliver=deliver, instance_root=root, max_rows_per_turn=100)
    t0 = time.perf_counter()
    inbox.start()
    try:
        while inbox.stats.delivered_rows < count:
            await asyncio.sleep(0.002)
        if inbox.feed is not None:
            while inbox.feed.rows():  # the last batch's acks confirmed
                await asyncio.sleep(0.002)
        elapsed = time.perf_counter() - t0
    finally:
        await inbox.aclose()
    return elapsed, inbox.stats.delivered_rows, turns


def _cpu_of(pid: int) -> float:
    """CPU seconds (user + system) of process ``pid`` so far, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def idle_cpu(config: Config, root: Path, seconds: float, server_pid: int | None) -> tuple[float, float | None]:
    """Percent of one core this process (and the server) used while a started, idle inbox waited."""
    async def deliver(text: str) -> None:
        return None

    inbox = PeerInbox.from_config(config, "eng", deliver=deliver, instance_root=root)
    inbox.start()
    try:
        if inbox.feed is not None:
            await inbox.feed.wait_ready(10)
        await asyncio.sleep(1.0)  # past start-up
        cpu0, wall0 = time.process_time(), time.perf_counter()
        srv0 = _cpu_of(server_pid) if server_pid else 0.0
        await asyncio.sleep(seconds)
        wall = time.perf_counter() - wall0
        mine = (time.process_time() - cpu0) / wall * 100
        server = (_cpu_of(server_pid) - srv0) / wall * 100 if server_pid else None
    finally:
        await inbox.aclose()
    return mine, server


def _spawn(root: Path, config: Config, turn_seconds: float) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "mnemara.testing.peer_panel", str(root),
                             json.dumps(config.model_dump(mode="json")), "eng", "--turn-seconds", str(turn_seconds)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)


def _wait_line(proc: subprocess.Popen[str], prefix: str, timeout: float) -> bool:
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            return False
        if line.startswith(prefix):
            return True
    return False


async def kill_trials(config: Config, root: Path, trials: int, per_trial: int, seed: int) -> dict[str, Any]:
    """Kill -9 a panel at random points ``trials`` times while messages arrive; then let one finish."""
    rng = random.Random(seed)
    lead = config.model_copy(update={"peer_role": "lead"})
    sent = 0
    kills = 0
    for _ in range(trials):
        proc = _spawn(root, config, turn_seconds=rng.uniform(0.0, 0.05))
        try:
            if not await asyncio.to_thread(_wait_line, proc, "ready", 60):
                raise RuntimeError("a panel process did not get ready")
            for _ in range(per_trial):
                await send_async(lead, "lead", root, "eng", json.dumps({"n": sent}))
                sent += 1
                await asyncio.sleep(rng.uniform(0, 0.01))
            if rng.random() < 0.5:
                await asyncio.sleep(rng.uniform(0, 0.15))  # anywhere: before, during or after a turn
            else:  # just after a turn's answer is stored: its ack is in flight or not sent yet
                await asyncio.to_thread(_wait_line, proc, "done", 10)
        finally:
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGKILL)
                kills += 1
            proc.wait()
    last = _spawn(root, config, turn_seconds=0.0)
    panel_keys: list[list[str]] = []
    try:
        await asyncio.to_thread(_wait_line, last, "ready", 60)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            probe = StorePanel(root, config, "eng")
            panel_keys = probe.answers()
            probe.store.close()
            if len({k for keys in panel_keys for k in keys}) >= sent:
                break
            await asyncio.sleep(0.2)
    finally:
        last.send_signal(signal.SIGINT)
        last.wait(30)
    flat = [k for keys in panel_keys for k in keys]
    log = root / "debug.log"
    repeats = log.read_text(encoding="utf-8").count('"peer_repeat_acked"') if log.exists() else 0
    return {"sent": sent, "kills": kills, "answers": len(panel_keys), "delivered": len(set(flat)),
            "duplicates": len(flat) - len(set(flat)), "repeats": repeats}


def run(tmp: Path, *, messages: int, interval: float, drain_count: int, idle_seconds: float, trials: int,
        per_trial: int, seed: int) -> bool:
    """Run every case, print the figures and the goals; True when every goal is met."""
    random.seed(seed)
    for sub in ("i-lat-s", "i-lat-n", "i-drain-sqlite", "i-drain-nats", "i-idle-sqlite", "i-idle-nats"):
        (tmp / sub).mkdir(parents=True, exist_ok=True)
    ok = True
    with NatsServer(tmp / "nats") as server:
        print(f"\nNATS JetStream beside SQLite (nats-server on loopback, pid {server.proc.pid if server.proc else '?'};"
              f" poll interval {interval:g} s for both; load average {os.getloadavg()[0]:.2f} on "
              f"{os.cpu_count()} cores)")
        lat_sqlite = asyncio.run(latency(sqlite_cfg(new_db(tmp / "lat.db"), interval), tmp / "i-lat-s", messages))
        lat_nats = asyncio.run(latency(nats_cfg(server, "LAT", interval), tmp / "i-lat-n", messages))
        for label, values in (("sqlite", lat_sqlite), ("nats", lat_nats)):
            print(f"  send -> turn start  {label:6s} median {statistics.median(values) * 1e3:7.2f} ms  "
                  f"p99 {pct(values, 0.99) * 1e3:7.2f} ms  ({len(values)} messages)")
        ratio = statistics.median(lat_nats) / statistics.median(lat_sqlite)
        goal = statistics.median(lat_nats) <= statistics.median(lat_sqlite)
        ok &= goal
        print(f"  goal: NATS median <= SQLite median at the same interval: nats/sqlite = {ratio:.3f}  "
              f"{'MET' if goal else 'MISSED'}")

        for label, cfg in (("sqlite", sqlite_cfg(new_db(tmp / "drain.db"), interval)),
                           ("nats", nats_cfg(server, "DRAIN", interval))):
            elapsed, rows, turns = asyncio.run(drain(cfg, tmp / f"i-drain-{label}", drain_count))
            print(f"  delivered, batched  {label:6s} {rows} messages in {elapsed * 1e3:8.1f} ms  "
                  f"{rows / elapsed:9.0f} msgs/s  ({turns} turns)")

        for label, cfg, pid in (("sqlite", sqlite_cfg(new_db(tmp / "idle.db"), 1.0), None),
                                ("nats", nats_cfg(server, "IDLE", 1.0), server.proc.pid if server.proc else None)):
            mine, srv = asyncio.run(idle_cpu(cfg, tmp / f"i-idle-{label}", idle_seconds, pid))
            extra = f"  (nats-server itself {srv:.2f}%)" if srv is not None else ""
            print(f"  idle panel CPU      {label:6s} {mine:6.3f}% of a core over {idle_seconds:g} s "
                  f"(poll interval 1 s){extra}")
            if label == "nats":
                goal = mine <= 1.0
                ok &= goal
                print(f"  goal: idle CPU <= 1% of a core: {mine:.3f}%  {'MET' if goal else 'MISSED'}")

        if trials:
            result = asyncio.run(kill_trials(nats_cfg(server, "KILL", 0.05), tmp / "i-kill", trials, per_trial, seed))
            goal = result["duplicates"] == 0 and result["delivered"] == result["sent"]
            ok &= goal
            print(f"  kill -9 trials      {trials} panels killed at random points ({result['kills']} were still "
                  f"running): {result['sent']} messages sent, {result['delivered']} delivered, "
                  f"{result['answers']} turns, {result['duplicates']} duplicate turns; {result['repeats']} times a "
                  "message came again after its turn was stored and was acked without a turn")
            print(f"  goal: zero duplicate turns, every message delivered: {'MET' if goal else 'MISSED'}")
    print(f"  load average at the end: {os.getloadavg()[0]:.2f}")
    return ok
