"""Peer polling across real processes: writer panels insert rows while the inbox polls."""
from __future__ import annotations

import asyncio
import json
import sqlite3
import sys
from collections import Counter
from pathlib import Path

from mnemara.peer import PeerInbox
from mnemara.peer.db import statuses
from tests.peer_support import Recorder, more_polls, new_db, problems

WRITER = Path(__file__).resolve().parents[1] / "peer_writer.py"


async def spawn_writer(db_path: Path, rows: list[dict], spec: Path, gap: float = 0.0,
                       wal: bool = False) -> asyncio.subprocess.Process:
    spec.write_text(json.dumps(rows), encoding="utf-8")
    args = [sys.executable, str(WRITER), "rows", str(db_path), str(spec), "--gap", str(gap)]
    if wal:
        args.append("--wal")
    return await asyncio.create_subprocess_exec(*args, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.PIPE)


async def finish(proc: asyncio.subprocess.Process) -> list[int]:
    out, err = await proc.communicate()
    assert proc.returncode == 0, err.decode()
    lines = out.decode().split()
    assert lines[-1] == "done"
    return [int(x) for x in lines[:-1]]


async def wait_until(cond, timeout: float = 20.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not cond():
        assert loop.time() < end, "timed out"
        await asyncio.sleep(0.02)


MIX = [
    {"agent_role": "lead", "recipient_role": None, "payload": {"ask": "broadcast from lead"}},
    {"agent_role": "qa", "recipient_role": "eng", "payload": {"ask": "addressed to us"}},
    {"agent_role": "lead", "recipient_role": "writer", "payload": {"ask": "for another panel"}},
    {"agent_role": "stranger", "recipient_role": None, "payload": {"ask": "broadcast, unwatched sender"}},
    {"agent_role": "lead", "recipient_role": "eng", "payload": {"type": "heartbeat"}},
    {"agent_role": "lead", "recipient_role": None, "payload": {"type": "ack", "of": 1}},
    {"agent_role": "lead", "recipient_role": "eng", "payload": "{not json", "raw": True},
]


async def test_writer_process_rows_delivered_once_in_one_batch(tmp_path: Path) -> None:
    path = new_db(tmp_path / "peer.db")
    log = tmp_path / "debug.log"
    rec = Recorder()
    idle = {"v": False}  # the panel is busy with the user's turn while the peer writes
    inbox = PeerInbox(db_path=path, role="eng", senders=("lead", "qa"), deliver=rec, interval=0.03,
                      silent_types=("heartbeat", "ack"), is_idle=lambda: idle["v"], debug_log=log)
    inbox.start()
    try:
        proc = await spawn_writer(path, MIX, tmp_path / "rows.json", gap=0.02)
        ids = await finish(proc)
        bcast, to_us, other, unwatched, hb, ack, bad = ids
        await wait_until(lambda: len(inbox.waiting) == 3)
        assert statuses(path)[hb][0] == "done" and statuses(path)[ack][0] == "done"
        assert rec.turns == []
        idle["v"] = True
        inbox.wake()
        await wait_until(lambda: rec.turns)
        await more_polls(inbox)  # several more polls: nothing is delivered twice
    finally:
        await inbox.aclose()
    assert rec.ids_per_turn() == [[bcast, to_us, bad]]
    st = statuses(path)
    for rid in (bcast, to_us, bad, other, unwatched):
        assert st[rid] == ("pending", None), rid
    assert st[hb][1] and st[ack][1]
    assert [p["problem"] for p in problems(log)] == [f"malformed_payload:{bad}"]


def _agent_ack(path: Path, ids: list[int]) -> None:
    """What the agent's ack tool does in the peer system: mark its rows done."""
    conn = sqlite3.connect(path, timeout=30, isolation_level=None)
    try:
        marks = ",".join("?" * len(ids))
        conn.execute(f"UPDATE returns SET status='done', completed_at='agent' WHERE id IN ({marks})", ids)
    finally:
        conn.close()


async def test_load_1000_rows_three_writers_none_lost_or_doubled(tmp_path: Path) -> None:
    path = new_db(tmp_path / "peer.db")
    log = tmp_path / "debug.log"
    rec = Recorder(delay=0.005)

    async def deliver_and_ack(text: str) -> None:
        await rec(text)
        await asyncio.to_thread(_agent_ack, path, rec.ids_per_turn()[-1])

    inbox = PeerInbox(db_path=path, role="eng", senders=("lead",), deliver=deliver_and_ack, interval=0.02,
                      silent_types=("heartbeat",), is_idle=lambda: not rec.busy, debug_log=log,
                      max_rows_per_turn=50)
    kinds = [
        {"agent_role": "lead", "recipient_role": "eng"},
        {"agent_role": "lead", "recipient_role": None},
        {"agent_role": "lead", "recipient_role": "writer"},
        {"agent_role": "lead", "recipient_role": "eng", "silent": True},
        {"agent_role": "other", "recipient_role": None},
    ]
    plans: list[list[dict]] = [[], [], []]
    for n in range(1000):
        kind = kinds[n % len(kinds)]
        payload = {"type": "heartbeat"} if kind.get("silent") else {"n": n}
        plans[n % 3].append({"agent_role": kind["agent_role"], "recipient_role": kind["recipient_role"],
                             "payload": payload})
    inbox.start()
    try:
        procs = [await spawn_writer(path, plan, tmp_path / f"w{i}.json", gap=0.002) for i, plan in enumerate(plans)]
        written = [await finish(p) for p in procs]
        assert rec.turns, "the inbox delivered nothing while the writers were writing"
        all_ids = sorted(i for ids in written for i in ids)
        assert len(all_ids) == 1000 and len(set(all_ids)) == 1000
        conn = sqlite3.connect(path)
        meta = {r[0]: (r[1], r[2], json.loads(r[3])) for r in
                conn.execute("SELECT id, agent_role, recipient_role, payload_json FROM returns")}
        conn.close()
        silent = {i for i, (_, _, p) in meta.items() if p.get("type") == "heartbeat"}
        wanted = {i for i, (s, to, p) in meta.items()
                  if i not in silent and (to == "eng" or (to is None and s == "lead"))}
        untouched = set(all_ids) - silent - wanted
        await wait_until(lambda: set(rec.ids()) >= wanted and inbox.stats.silent_acked >= len(silent), 60)
        await more_polls(inbox)
    finally:
        await inbox.aclose()
    delivered = Counter(rec.ids())
    assert set(delivered) == wanted and max(delivered.values()) == 1
    assert len(wanted) == 400 and len(silent) == 200
    st = statuses(path)
    assert all(st[i][0] == "done" and st[i][1] not in (None, "agent") for i in silent)
    assert all(st[i] == ("pending", None) for i in untouched)
    assert all(len(t) <= 50 for t in rec.ids_per_turn())


async def hold_lock(db_path: Path, seconds: float, kind: str) -> asyncio.subprocess.Process:
    proc = await asyncio.create_subprocess_exec(sys.executable, str(WRITER), "lock", str(db_path), str(seconds), kind,
                                                stdout=asyncio.subprocess.PIPE)
    assert (await proc.stdout.readline()).strip() == b"locked"
    return proc


async def test_writer_process_lock_delays_but_loses_nothing(tmp_path: Path) -> None:
    """An exclusive lock blocks the read; a reserved lock lets us read but blocks the silent ack."""
    path = new_db(tmp_path / "peer.db")
    log = tmp_path / "debug.log"
    rec = Recorder()
    inbox = PeerInbox(db_path=path, role="eng", senders=("lead", "qa"), deliver=rec, interval=0.05,
                      silent_types=("heartbeat", "ack"), is_idle=lambda: not rec.busy, debug_log=log)
    ids = await finish(await spawn_writer(path, MIX, tmp_path / "rows.json"))
    bcast, to_us, other, unwatched, hb, ack, bad = ids
    locker = await hold_lock(path, 0.8, "exclusive")
    inbox.start()
    try:
        await wait_until(lambda: "peer db locked" in inbox.state_text)
        assert rec.turns == []
        await locker.communicate()
        await wait_until(lambda: rec.turns)
        assert rec.ids_per_turn() == [[bcast, to_us, bad]] and statuses(path)[hb][0] == "done"
        await inbox.aclose()

        ids2 = await finish(await spawn_writer(path, MIX[4:5] + MIX[1:2], tmp_path / "rows2.json"))
        locker = await hold_lock(path, 3.0, "immediate")
        inbox.start()
        await wait_until(lambda: len(rec.turns) == 2)  # reading works under a reserved lock
        assert statuses(path)[ids2[0]] == ("pending", None)  # the ack could not be written yet
        await locker.communicate()
        await wait_until(lambda: statuses(path)[ids2[0]][0] == "done")
        await more_polls(inbox)
    finally:
        await inbox.aclose()
    assert rec.ids_per_turn() == [[bcast, to_us, bad], [ids2[1]]]
    st = statuses(path)
    assert st[other] == ("pending", None) and st[unwatched] == ("pending", None)
    kinds = [p["problem"] for p in problems(log)]
    assert kinds == ["locked", f"malformed_payload:{bad}", "ack_failed"]
