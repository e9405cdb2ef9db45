"""The schema of ``turns.sqlite``: opening the file as a Mnemara turns store (:func:`connect`) and one
migration per version, applied in order by :class:`~mnemara.store.turns.TurnStore`.

Version 2 keeps the row counts in a one-row ``turn_counts`` table through
triggers, so :meth:`~mnemara.store.turns.TurnStore.counts` reads one row however many
evicted rows the history holds, and indexes the protected live rows the window
keeps like pins.
"""
from __future__ import annotations

import sqlite3
from pathlib import Path

from mnemara.core.errors import StoreError
from mnemara.core.fsutil import LinkRefused, check_sqlite_files, disk_full_reason, touch_private
from mnemara.store.health import busy_seconds, integrity_problem

SCHEMA_VERSION = 2
APP_ID = "mnemara-turns"

# A row's contribution to each counter of ``turn_counts`` (R is NEW or OLD).
_COUNTED = {
    "stored": "1",
    "live": "(R.pin_label IS NULL AND R.evicted = 0)",
    "pinned": "(R.pin_label IS NOT NULL)",
    "live_tokens": "CASE WHEN R.evicted = 0 OR R.pin_label IS NOT NULL THEN R.tokens ELSE 0 END",
}


def _count_delta(plus: str | None, minus: str | None) -> str:
    parts = []
    for name, expr in _COUNTED.items():
        change = ""
        if plus:
            change += " + " + expr.replace("R.", plus + ".")
        if minus:
            change += " - " + expr.replace("R.", minus + ".")
        parts.append(f"{name} = {name}{change}")
    return "UPDATE turn_counts SET " + ", ".join(parts) + " WHERE id = 0"


MIGRATIONS: dict[int, str | tuple[str, ...]] = {
    1: """
    CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS turns (
        id          INTEGER PRIMARY KEY AUTOINCREMENT,
        role        TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'system')),
        content     TEXT NOT NULL,
        tokens      INTEGER NOT NULL DEFAULT 0,
        created_at  TEXT NOT NULL,
        pin_label   TEXT,
        slot_pos    INTEGER,
        evicted     INTEGER NOT NULL DEFAULT 0,
        protected   INTEGER NOT NULL DEFAULT 0,
        meta        TEXT NOT NULL DEFAULT '{}'
    );
    CREATE INDEX IF NOT EXISTS turns_live ON turns (evicted, id) WHERE pin_label IS NULL;
    CREATE UNIQUE INDEX IF NOT EXISTS turns_pin_label ON turns (pin_label) WHERE pin_label IS NOT NULL;
    """,
    # Statements, not a script: trigger bodies contain ';'.
    2: (
        ("CREATE TABLE IF NOT EXISTS turn_counts (id INTEGER PRIMARY KEY CHECK (id = 0), stored INTEGER NOT NULL,"
         " live INTEGER NOT NULL, pinned INTEGER NOT NULL, live_tokens INTEGER NOT NULL)"),
        ("INSERT OR REPLACE INTO turn_counts (id, stored, live, pinned, live_tokens) SELECT 0, COUNT(*),"
         " COALESCE(SUM(pin_label IS NULL AND evicted = 0), 0), COALESCE(SUM(pin_label IS NOT NULL), 0),"
         " COALESCE(SUM(CASE WHEN evicted = 0 OR pin_label IS NOT NULL THEN tokens ELSE 0 END), 0) FROM turns"),
        f"CREATE TRIGGER IF NOT EXISTS turn_counts_insert AFTER INSERT ON turns BEGIN {_count_delta('NEW', None)}; END",
        f"CREATE TRIGGER IF NOT EXISTS turn_counts_delete AFTER DELETE ON turns BEGIN {_count_delta(None, 'OLD')}; END",
        ("CREATE TRIGGER IF NOT EXISTS turn_counts_update AFTER UPDATE OF pin_label, evicted, tokens ON turns"
         f" BEGIN {_count_delta('NEW', 'OLD')}; END"),
        ("CREATE INDEX IF NOT EXISTS turns_protected_live ON turns (id)"
         " WHERE pin_label IS NULL AND evicted = 0 AND protected = 1"),
    ),
}


def statements(version: int) -> list[str]:
    """The SQL statements of migration ``version``, in order."""
    steps = MIGRATIONS[version]
    if isinstance(steps, str):
        return [s.strip() for s in steps.split(";") if s.strip()]
    return list(steps)


def connect(path: Path) -> tuple[sqlite3.Connection, str | None]:
    """Open ``turns.sqlite`` (created when missing, private): a link, a file that is not SQLite, a
    foreign SQLite file, a Mnemara 0.18 store or a newer schema is refused (StoreError, the file left
    untouched). Returns the connection (WAL mode) and what the integrity check found when switching
    an existing file to WAL, None when the file is sound; the caller migrates a sound file."""
    try:
        check_sqlite_files(path)
    except LinkRefused as exc:
        raise StoreError(str(exc)) from None
    existed = path.exists() and path.stat().st_size > 0
    if not path.exists() and path.parent.is_dir():
        touch_private(path)  # SQLite gives its -wal/-shm files the database file's mode
    try:
        wait = busy_seconds()
        conn = sqlite3.connect(path, timeout=wait, isolation_level=None, check_same_thread=False)
        conn.execute(f"PRAGMA busy_timeout = {int(wait * 1000)}")
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    except sqlite3.DatabaseError as exc:
        _refuse_when_disk_full(path, exc)
        raise StoreError(f"{path}: not a readable SQLite database ({exc}); the file was left untouched") from None
    if existed:
        if "meta" not in tables or "turns" not in tables:
            conn.close()
            from mnemara.store.legacy_detect import legacy_turns

            if legacy_turns(path):
                raise StoreError(f"{path}: a Mnemara 0.18 turns store; convert the instance with: "
                                 f"mnemara migrate --instance {path.parent.name}")
            raise StoreError(f"{path}: not a Mnemara turns store (foreign SQLite file); the file was left untouched")
        found = dict(conn.execute("SELECT key, value FROM meta"))
        if found.get("app") != APP_ID:
            conn.close()
            raise StoreError(f"{path}: not a Mnemara turns store (foreign SQLite file); the file was left untouched")
        version = int(found.get("schema_version", "0"))
        if version > SCHEMA_VERSION:
            conn.close()
            raise StoreError(
                f"{path}: schema version {version} is newer than this Mnemara supports ({SCHEMA_VERSION}); upgrade mnemara"
            )
    damaged: str | None = None
    try:
        conn.execute("PRAGMA synchronous = NORMAL")
        if existed and conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
            damaged = integrity_problem(conn, path)  # switching the mode writes: check first
        if damaged is None:
            conn.execute("PRAGMA journal_mode = WAL")
    except sqlite3.DatabaseError as exc:
        conn.close()
        _refuse_when_disk_full(path, exc)
        raise StoreError(f"{path}: cannot open store: {exc}") from None
    return conn, damaged


def _refuse_when_disk_full(path: Path, exc: sqlite3.DatabaseError) -> None:
    """A full disk is told as one, not as a damaged database (which a user might delete or "repair")."""
    full = disk_full_reason(path, exc)
    if full is not None:
        raise StoreError(f"{path}: cannot be opened: {full}, not a damaged database ({exc}); free some space "
                         "and start again (the file was left untouched)") from None
