"""The peer-message database: a read-only query for pending rows and a short ack write.

The file belongs to the user's peer-message system, not to Mnemara: we never
create it, never change its schema, and only ever write ``status`` and
``completed_at`` of rows we acknowledge silently. Every call opens its own
connection (cheap, and it follows the file if it is replaced) and turns each
SQLite failure into a :class:`PeerDbError` with a stable ``key`` and a one-line
message, so the caller can log each kind of trouble once.
"""
from __future__ import annotations

from mnemara.core.errors import MnemaraError

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence
from urllib.parse import quote

from mnemara.core.debuglog import now_iso
from mnemara.peer.rows import PeerRow

TABLE = "returns"
REQUIRED_COLUMNS = ("id", "agent_role", "recipient_role", "payload_json", "status")
OPTIONAL_COLUMNS = ("task_id", "submitted_at")
TYPE_COLUMNS = ("message_type", "type")  # used when present; else the payload's "type"
READ_PROBLEMS = ("no_path", "missing", "not_a_file", "locked", "no_table", "missing_column",
                 "not_a_database", "cannot_open", "sqlite_error")  # the keys of PeerDbError a read can raise
READ_TIMEOUT_S = 0.25
WRITE_TIMEOUT_S = 2.0


class PeerDbError(MnemaraError):
    """The peer database could not be used right now. ``key`` names the kind of trouble."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


@dataclass(frozen=True)
class Filter:
    """Which pending rows are ours: addressed to ``role``, or broadcast by one of ``senders``.

    A broadcast is a row whose ``recipient_role`` is NULL (or empty). Our own
    broadcasts are never delivered back to us, nor broadcasts with an id up to
    ``broadcasts_after`` (the ones already pending when the inbox was first enabled).
    """

    role: str
    senders: tuple[str, ...]
    broadcasts_after: int = 0


@dataclass
class PollResult:
    """One page of pending rows.

    ``scanned_to`` is the highest id this read has accounted for: the last row's
    id when the page is full, else the table's highest id at the moment of the
    read (every row up to it that is not in ``rows`` is not for us, or no longer
    pending), so a panel's watermark can move past rows meant for others.
    """

    rows: list[PeerRow]
    has_completed_at: bool
    full_page: bool
    scanned_to: int


def _uri(path: Path, mode: str) -> str:
    return f"file:{quote(str(path))}?mode={mode}"


def _classify(exc: sqlite3.Error, path: Path) -> PeerDbError:
    text = str(exc)
    low = text.lower()
    if "locked" in low or "busy" in low:
        return PeerDbError("locked", f"peer db {path} is locked by a writer; will retry ({text})")
    if "no such table" in low:
        return PeerDbError("no_table", f"peer db {path} has no '{TABLE}' table")
    if "not a database" in low or "malformed" in low or "corrupt" in low:
        return PeerDbError("not_a_database", f"peer db {path} is not a readable SQLite database ({text})")
    if "unable to open" in low or "readonly" in low or "read-only" in low:
        return PeerDbError("cannot_open", f"peer db {path} cannot be opened ({text})")
    return PeerDbError("sqlite_error", f"peer db {path}: {text}")


def _check_file(path: Path | None) -> Path:
    if path is None:
        raise PeerDbError("no_path", "peer_poll_enabled is true but peer_db_path is empty")
    if not path.exists():
        raise PeerDbError("missing", f"peer db {path} does not exist (waiting for it to appear)")
    if not path.is_file():
        raise PeerDbError("not_a_file", f"peer db {path} is not a file")
    return path


@contextmanager
def _open(path: Path | None, mode: str, timeout: float) -> Iterator[tuple[sqlite3.Connection, Path]]:
    """A connection to the checked peer database (``mode`` ro or rw), closed afterwards; any
    SQLite error, on opening or inside the block, is raised as a :class:`PeerDbError`."""
    checked = _check_file(None if path is None else Path(path))
    try:
        conn = sqlite3.connect(_uri(checked, mode), uri=True, timeout=timeout, isolation_level=None)
    except sqlite3.Error as exc:
        raise _classify(exc, checked) from None
    try:
        yield conn, checked
    except sqlite3.Error as exc:
        raise _classify(exc, checked) from None
    finally:
        conn.close()


def _columns(conn: sqlite3.Connection, path: Path) -> set[str]:
    cols = {row[1] for row in conn.execute(f"PRAGMA table_info({TABLE})")}
    if not cols:
        raise PeerDbError("no_table", f"peer db {path} has no '{TABLE}' table")
    missing = [c for c in REQUIRED_COLUMNS if c not in cols]
    if missing:
        raise PeerDbError(
            "missing_column",
            f"peer db {path}: table '{TABLE}' lacks column(s) {', '.join(missing)}; "
            f"it needs {', '.join(REQUIRED_COLUMNS)}",
        )
    return cols


def _match_sql(flt: Filter, direct: bool = True, broadcasts: bool = True) -> tuple[str, list[object]]:
    """The WHERE condition (and its parameters) of the pending rows ``flt`` accepts."""
    terms: list[str] = []
    params: list[object] = []
    if direct:
        terms.append("recipient_role = ?")
        params.append(flt.role)
    if broadcasts and flt.senders:
        marks = ",".join("?" * len(flt.senders))
        terms.append("((recipient_role IS NULL OR recipient_role = '') "
                     f"AND agent_role IN ({marks}) AND agent_role IS NOT ? AND id > ?)")
        params += [*flt.senders, flt.role, flt.broadcasts_after]
    return f"status = 'pending' AND ({' OR '.join(terms) or '0'})", params


def _select_sql(cols: set[str], flt: Filter) -> tuple[str, list[object]]:
    picked = [c if c in cols else f"NULL AS {c}" for c in OPTIONAL_COLUMNS]
    type_col = next((c for c in TYPE_COLUMNS if c in cols), None)
    picked.append(f'"{type_col}" AS message_type' if type_col else "NULL AS message_type")
    match, params = _match_sql(flt)
    return (
        f"SELECT id, agent_role, recipient_role, payload_json, {', '.join(picked)} "
        f"FROM {TABLE} WHERE id > ? AND {match} ORDER BY id LIMIT ?"
    ), params


def read_pending(path: Path | None, flt: Filter, after_id: int, limit: int) -> PollResult:
    """Pending rows for ``flt`` with ``id > after_id``, oldest first (read-only, no writes).

    Raises :class:`PeerDbError` for no path, a missing file, a lock, a missing table or column.
    """
    with _open(path, "ro", READ_TIMEOUT_S) as (conn, checked):
        cols = _columns(conn, checked)
        sql, match_params = _select_sql(cols, flt)
        params: list[object] = [after_id, *match_params, limit]
        # The top id is read BEFORE the page: every row up to it is visible to the page
        # query too, so any such row the page lacks is not ours or no longer pending.
        top = conn.execute(f"SELECT COALESCE(MAX(id), 0) FROM {TABLE}").fetchone()[0]
        raw = conn.execute(sql, params).fetchall()
    rows = [
        PeerRow.from_db(id=r[0], agent_role=r[1], recipient_role=r[2], payload_json=r[3],
                        task_id=r[4], submitted_at=r[5], column_type=r[6])
        for r in raw
    ]
    full = len(raw) >= limit
    if full:
        scanned_to = rows[-1].id
    else:
        scanned_to = max(int(top or 0), rows[-1].id if rows else 0, after_id)
    return PollResult(rows=rows, has_completed_at="completed_at" in cols, full_page=full,
                      scanned_to=scanned_to)


def max_id(path: Path | None) -> int:
    """The highest row id of the table (0 when empty); read-only. Raises :class:`PeerDbError`."""
    with _open(path, "ro", READ_TIMEOUT_S) as (conn, checked):
        _columns(conn, checked)
        return int(conn.execute(f"SELECT COALESCE(MAX(id), 0) FROM {TABLE}").fetchone()[0] or 0)


def count_pending(path: Path | None, flt: Filter, *, direct: bool = True, broadcasts: bool = True,
                  up_to: int | None = None) -> int:
    """How many pending rows ``flt`` accepts (only direct ones, only broadcasts, ids up to ``up_to``)."""
    with _open(path, "ro", READ_TIMEOUT_S) as (conn, checked):
        _columns(conn, checked)
        match, params = _match_sql(flt, direct, broadcasts)
        if up_to is not None:
            match += " AND id <= ?"
            params.append(up_to)
        return int(conn.execute(f"SELECT COUNT(*) FROM {TABLE} WHERE {match}", params).fetchone()[0])


def insert_pending(path: Path | None, sender: str, to: str | None, payload_json: str,
                   task_id: str | None = None) -> int:
    """Insert one pending row (``to`` None: a broadcast) into an existing peer db; returns its id.

    Raises :class:`PeerDbError` (nothing written) when the file or table is missing or locked.
    """
    with _open(path, "rw", WRITE_TIMEOUT_S) as (conn, checked):
        cols = _columns(conn, checked)
        if "submitted_at" not in cols:
            raise PeerDbError("missing_column", f"peer db {checked}: table '{TABLE}' has no submitted_at column")
        return insert_row(conn, sender, to, payload_json, task_id if "task_id" in cols else None)


def ack_rows(path: Path | None, ids: Sequence[int], with_completed_at: bool = True) -> int:
    """Mark still-pending rows ``ids`` done (``completed_at`` set) in one short transaction.

    Returns how many rows changed. Rows another panel already acknowledged are
    left as they are. Raises :class:`PeerDbError` (nothing written) on failure.
    """
    if not ids:
        return 0
    with _open(path, "rw", WRITE_TIMEOUT_S) as (conn, _checked):
        marks = ",".join("?" * len(ids))
        if with_completed_at:
            sql = f"UPDATE {TABLE} SET status = 'done', completed_at = ? WHERE status = 'pending' AND id IN ({marks})"
            params: list[object] = [now_iso(), *ids]
        else:
            sql = f"UPDATE {TABLE} SET status = 'done' WHERE status = 'pending' AND id IN ({marks})"
            params = list(ids)
        conn.execute("BEGIN IMMEDIATE")
        try:
            changed = conn.execute(sql, params).rowcount
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return changed


def create_table(conn: sqlite3.Connection) -> None:
    """Create the ``returns`` table the spec describes (for tests, benchmarks and new setups)."""
    conn.execute(
        f"""CREATE TABLE IF NOT EXISTS {TABLE} (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            agent_role TEXT NOT NULL,
            recipient_role TEXT,
            task_id TEXT,
            payload_json TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'pending',
            submitted_at TEXT NOT NULL,
            completed_at TEXT
        )"""
    )


def insert_row(conn: sqlite3.Connection, agent_role: str, recipient_role: str | None,
               payload_json: str, task_id: str | None = None) -> int:
    """Insert one pending row as a peer panel would; returns its id."""
    cur = conn.execute(
        f"INSERT INTO {TABLE} (agent_role, recipient_role, task_id, payload_json, status, submitted_at) "
        "VALUES (?, ?, ?, ?, 'pending', ?)",
        (agent_role, recipient_role, task_id, payload_json, now_iso()),
    )
    return int(cur.lastrowid or 0)


def statuses(path: Path, ids: Iterable[int] | None = None) -> dict[int, tuple[str, str | None]]:
    """``{id: (status, completed_at)}`` of the table (for tests and tooling)."""
    conn = sqlite3.connect(_uri(Path(path), "ro"), uri=True, timeout=WRITE_TIMEOUT_S)
    try:
        out = {r[0]: (r[1], r[2]) for r in conn.execute(f"SELECT id, status, completed_at FROM {TABLE}")}
    finally:
        conn.close()
    if ids is not None:
        wanted = set(ids)
        out = {k: v for k, v in out.items() if k in wanted}
    return out
