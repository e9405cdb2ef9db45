"""A peer panel in another process: writes rows into a ``returns`` table.

Usage (spawned by the tests)::

    python tests/peer_writer.py rows DB ROWS_JSON [--gap S] [--wal]   insert the rows of ROWS_JSON
    python tests/peer_writer.py lock DB SECONDS [immediate]          hold an exclusive (or reserved) lock

Each row of ROWS_JSON is ``{"agent_role", "recipient_role", "payload": <JSON value or raw string>,
"raw": bool, "task_id"}``. Prints one inserted id per line, then ``done``.
"""
from __future__ import annotations

import json
import sqlite3
import sys
import time
from datetime import datetime, timezone


def connect(path: str, wal: bool) -> sqlite3.Connection:
    conn = sqlite3.connect(path, timeout=30, isolation_level=None)
    conn.execute("PRAGMA synchronous=OFF")  # a test writer: speed over durability
    if wal:
        conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(
        """CREATE TABLE IF NOT EXISTS returns (
            id INTEGER PRIMARY KEY AUTOINCREMENT, agent_role TEXT NOT NULL, recipient_role TEXT,
            task_id TEXT, payload_json TEXT NOT NULL, status TEXT NOT NULL DEFAULT 'pending',
            submitted_at TEXT NOT NULL, completed_at TEXT)"""
    )
    return conn


def write_rows(path: str, rows_file: str, gap: float, wal: bool) -> None:
    rows = json.loads(open(rows_file, encoding="utf-8").read())
    conn = connect(path, wal)
    for row in rows:
        payload = row["payload"] if row.get("raw") else json.dumps(row["payload"])
        for attempt in range(200):
            try:
                cur = conn.execute(
                    "INSERT INTO returns (agent_role, recipient_role, task_id, payload_json, status, submitted_at)"
                    " VALUES (?, ?, ?, ?, 'pending', ?)",
                    (row["agent_role"], row.get("recipient_role"), row.get("task_id"), payload,
                     datetime.now(timezone.utc).isoformat()),
                )
                break
            except sqlite3.OperationalError:
                time.sleep(0.01)
        else:
            raise SystemExit("could not insert")
        print(cur.lastrowid, flush=True)
        if gap:
            time.sleep(gap)
    print("done", flush=True)


def hold_lock(path: str, seconds: float, kind: str) -> None:
    conn = sqlite3.connect(path, timeout=30, isolation_level=None)
    conn.execute(f"BEGIN {kind.upper()}")
    print("locked", flush=True)
    time.sleep(seconds)
    conn.execute("COMMIT")
    print("released", flush=True)


if __name__ == "__main__":
    mode, db = sys.argv[1], sys.argv[2]
    if mode == "rows":
        gap = float(sys.argv[sys.argv.index("--gap") + 1]) if "--gap" in sys.argv else 0.0
        write_rows(db, sys.argv[3], gap, "--wal" in sys.argv)
    elif mode == "lock":
        hold_lock(db, float(sys.argv[3]), sys.argv[4] if len(sys.argv) > 4 else "exclusive")
    else:
        raise SystemExit(f"unknown mode {mode}")
