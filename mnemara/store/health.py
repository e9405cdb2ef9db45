"""When turns.sqlite cannot take a write: locked by another process, or damaged.

* :class:`WriteTx` is the store's write transaction. A write that waited
  :func:`busy_seconds` for another process's lock, or that met a damaged page,
  raises :class:`~mnemara.core.errors.StoreUnavailable` (one clear line) instead of
  a raw ``sqlite3`` error, so the session can keep the message in the spool
  (:mod:`mnemara.store.spool`) rather than lose it.
* A damaged file is checked once (``PRAGMA quick_check``); when it fails, the
  store refuses every later write (``TurnStore.damaged``): Mnemara never writes
  to a file that failed its integrity check, not even to switch its journal mode.
"""
from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Protocol

from mnemara.core.errors import StoreUnavailable

DEFAULT_BUSY_SECONDS = 30.0
BUSY_ENV = "MNEMARA_STORE_BUSY_SECONDS"  # how long a write waits for another process's lock


def busy_seconds() -> float:
    """Seconds a write waits for a lock held by another process (30, or ``$MNEMARA_STORE_BUSY_SECONDS``)."""
    try:
        value = float(os.environ.get(BUSY_ENV, "") or DEFAULT_BUSY_SECONDS)
    except ValueError:
        return DEFAULT_BUSY_SECONDS
    return value if value > 0 else DEFAULT_BUSY_SECONDS


def integrity_problem(conn: sqlite3.Connection, path: Path) -> str | None:
    """None when ``PRAGMA quick_check`` passes, else the line that says the file is damaged."""
    try:
        rows = [str(r[0]) for r in conn.execute("PRAGMA quick_check(5)").fetchall()]
    except sqlite3.DatabaseError as exc:
        rows = [str(exc)]
    if rows == ["ok"]:
        return None
    detail = "; ".join(rows)[:200]
    return (f"{path} failed its integrity check ({detail}); Mnemara will not write to it: restore a backup "
            f"or rebuild it (sqlite3 {path.name} '.recover')")


def _is_lock(exc: sqlite3.Error) -> bool:
    text = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text)


class StoreFile(Protocol):
    """What a write transaction needs to know of the store it writes to."""

    path: Path
    damaged: str | None

    @property
    def closed(self) -> bool: ...


def unavailable(store: StoreFile, conn: sqlite3.Connection, exc: sqlite3.Error) -> StoreUnavailable:
    """The one-line error a failed read or write of ``store`` (through ``conn``) means: closed,
    locked by another process, or damaged (checked once, then every later write is refused)."""
    if store.closed:  # closed by its owner: the file is fine, say nothing of damage
        return StoreUnavailable(f"{store.path}: this store is closed (its session was closed)")
    if _is_lock(exc):
        return StoreUnavailable(f"{store.path} is locked by another process ({exc}, waited {busy_seconds():g} s)")
    if store.damaged is None:
        store.damaged = integrity_problem(conn, store.path)
    return StoreUnavailable(store.damaged or f"{store.path}: {exc}")


class WriteTx:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` on a store's connection, turning lock and damage errors into
    StoreUnavailable."""

    def __init__(self, store: StoreFile, conn: sqlite3.Connection) -> None:
        self.store = store
        self.conn = conn

    def _unavailable(self, exc: sqlite3.Error) -> StoreUnavailable:
        return unavailable(self.store, self.conn, exc)

    def __enter__(self) -> sqlite3.Connection:
        if self.store.damaged is not None:
            raise StoreUnavailable(self.store.damaged)
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise self._unavailable(exc) from None
        return self.conn

    def __exit__(self, exc_type: object, exc: BaseException | None, tb: object) -> None:
        if exc is None:
            try:
                self.conn.execute("COMMIT")
                return
            except sqlite3.Error as failed:
                exc = failed
        try:
            self.conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass
        if isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.IntegrityError):
            raise self._unavailable(exc) from None  # lock or damage: one clear line, the caller spools
        if exc_type is None and exc is not None:
            raise exc  # a failed COMMIT of another kind
