"""Helpers shared by the peer-poll tests: a peer db, a recording deliver callable, log reading."""
from __future__ import annotations

import asyncio
import json
import re
import sqlite3
from pathlib import Path
from typing import Any

from mnemara.core.debuglog import read_events
from mnemara.peer import db

ROW_ID = re.compile(r"· row (\d+) ·")


def new_db(path: Path, wal: bool = False) -> Path:
    conn = sqlite3.connect(path, isolation_level=None)
    if wal:
        conn.execute("PRAGMA journal_mode=WAL")
    db.create_table(conn)
    conn.close()
    return path


def add(path: Path, sender: str, to: str | None, payload: Any, raw: bool = False) -> int:
    conn = sqlite3.connect(path, isolation_level=None, timeout=10)
    try:
        return db.insert_row(conn, sender, to, payload if raw else json.dumps(payload))
    finally:
        conn.close()


class Recorder:
    """A deliver callable that records each turn's text; can be told to fail the next N turns."""

    def __init__(self, fail: int = 0, delay: float = 0.0) -> None:
        self.turns: list[str] = []
        self.fail = fail
        self.delay = delay
        self.busy = False

    async def __call__(self, text: str) -> None:
        self.busy = True
        try:
            if self.delay:
                await asyncio.sleep(self.delay)
            if self.fail:
                self.fail -= 1
                raise RuntimeError("scripted turn failure")
            self.turns.append(text)
        finally:
            self.busy = False

    def ids(self) -> list[int]:
        return [int(m) for t in self.turns for m in ROW_ID.findall(t)]

    def ids_per_turn(self) -> list[list[int]]:
        return [[int(m) for m in ROW_ID.findall(t)] for t in self.turns]


def problems(log: Path) -> list[dict]:
    return [e for e in read_events(log) if e["event"] == "peer_poll_problem"]


async def more_polls(inbox: Any, n: int = 3, timeout: float = 30.0) -> None:
    """Wait until ``inbox`` has polled ``n`` more times: the observable event after which a test
    may assert that nothing more was delivered (instead of sleeping and hoping)."""
    target = inbox.stats.polls + n
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while inbox.stats.polls < target:
        assert loop.time() < end, f"the inbox polled {inbox.stats.polls} times, expected {target}"
        await asyncio.sleep(0.01)


async def until(check: Any, timeout: float = 15.0) -> None:
    """Wait (polling the running loop) until ``check()`` is true; fail after ``timeout`` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not check():
        assert loop.time() < deadline, "condition not met in time"
        await asyncio.sleep(0.02)
