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

import functools
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from mnemara.core.errors import StoreUnavailable

if TYPE_CHECKING:
    from mnemara.store.turns import TurnStore

F = TypeVar("F", bound=Callable[..., Any])
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


def guarded_read(method: F) -> F:
    """A store read that meets a damaged page raises StoreUnavailable (one line), not a traceback."""

    @functools.wraps(method)
    def wrapper(store: TurnStore, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(store, *args, **kwargs)
        except sqlite3.DatabaseError as exc:
            raise WriteTx(store)._unavailable(exc) from None

    return wrapper  # type: ignore[return-value]  # functools.wraps keeps the signature; mypy cannot see it


def _is_lock(exc: sqlite3.Error) -> bool:
    text = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text)


class WriteTx:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` on a store, turning lock and damage errors into StoreUnavailable."""

    def __init__(self, store: TurnStore) -> None:
        self.store = store
        self.conn = store._conn

    def _unavailable(self, exc: sqlite3.Error) -> StoreUnavailable:
        if getattr(self.store, "_closed", False):  # closed by its owner: the file is fine, say nothing of damage
            return StoreUnavailable(f"{self.store.path}: this store is closed (its session was closed)")
        if _is_lock(exc):
            return StoreUnavailable(f"{self.store.path} is locked by another process ({exc}, waited "
                                    f"{busy_seconds():g} s)")
        if self.store.damaged is None:
            self.store.damaged = integrity_problem(self.conn, self.store.path)
        return StoreUnavailable(self.store.damaged or f"{self.store.path}: {exc}")

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
