"""``spend.sqlite``: every API call an instance paid for, priced from the API's own usage.

The loopback request recorder (:mod:`mnemara.claude.recorder`) sees every call a CLI of
the instance makes (a turn's, a stopped or failed one's, an inbox or replay turn's, in any
process), and adds one row per call here once its answer has passed. The spend caps
(``budget_usd_per_turn`` / ``_session`` / ``_day``), ``/cost`` and the status line read
the sums back, so what is shown and what is enforced is the same number, and it
survives a restart. SQLite in WAL mode: two processes on one instance add rows safely.

A row holds the tokens as the API reported them (plain input, cache reads, 5-minute and
1-hour cache writes, output), the cost priced by :mod:`mnemara.core.pricing` (``None``
for a model the table does not know) and the date of the price table used.

The ledger does not grow without end: when it is opened, the rows of calls more than
:data:`KEEP_CALL_DAYS` days old are folded into one row per day, session, model and price
table (``folded_calls`` calls, ``folded_unpriced`` of them unpriced, their tokens and cost summed;
turn :data:`FOLDED_TURN`). Every sum the caps and ``/cost`` read (by session, by day, in all) is
the same before and after; only the per-turn split of those old days is gone.
"""
from __future__ import annotations

import sqlite3
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from mnemara.core.fsutil import check_sqlite_files, touch_private
from mnemara.core.pricing import PRICES_AS_OF, cache_write_split, cost_usd

FILE = "spend.sqlite"
_SCHEMA = """
BEGIN;
CREATE TABLE IF NOT EXISTS calls (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL,
    day TEXT NOT NULL,
    session TEXT NOT NULL,
    turn TEXT NOT NULL,
    seq INTEGER,
    model TEXT NOT NULL,
    status INTEGER,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cache_read_tokens INTEGER NOT NULL,
    cache_write_5m_tokens INTEGER NOT NULL,
    cache_write_1h_tokens INTEGER NOT NULL,
    cost_usd REAL,
    prices_as_of TEXT NOT NULL,
    folded_calls INTEGER,
    folded_unpriced INTEGER
);
CREATE INDEX IF NOT EXISTS calls_day ON calls(day);
CREATE INDEX IF NOT EXISTS calls_session ON calls(session);
CREATE INDEX IF NOT EXISTS calls_turn ON calls(turn);
COMMIT;
"""  # one transaction: a new ledger is made with one sync of the disk, not one per statement (the first call's)
#: Per-call rows are kept this many days; older ones are folded (see the module's docstring).
KEEP_CALL_DAYS = 30
#: The turn of a folded row: no turn of a session is named so.
FOLDED_TURN = "(folded)"
#: Columns a ledger of an earlier Mnemara lacks (added when it is opened; a new one is made with them):
#: NULL on a row of one call.
_FOLD_COLUMNS = ("folded_calls", "folded_unpriced")
_TOKENS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_5m_tokens", "cache_write_1h_tokens")


def today() -> str:
    """The local calendar day (``budget_usd_per_day`` resets at local midnight)."""
    return datetime.now().astimezone().date().isoformat()


def _int(value: object) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


@dataclass(frozen=True)
class CallSpend:
    """One call's tokens and price, as kept in the ledger."""

    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_5m_tokens: int = 0
    cache_write_1h_tokens: int = 0
    cost_usd: float | None = None

    @classmethod
    def from_usage(cls, model: str, usage: Mapping[str, object]) -> "CallSpend":
        five_min, one_hour = cache_write_split(usage)
        return cls(model=model, input_tokens=_int(usage.get("input_tokens")),
                   output_tokens=_int(usage.get("output_tokens")),
                   cache_read_tokens=_int(usage.get("cache_read_input_tokens")),
                   cache_write_5m_tokens=int(five_min), cache_write_1h_tokens=int(one_hour),
                   cost_usd=cost_usd(model, usage))

    @property
    def cache_write_tokens(self) -> int:
        return self.cache_write_5m_tokens + self.cache_write_1h_tokens


@dataclass(frozen=True)
class SpendTotals:
    """Sums over some calls (a turn, a session, a day)."""

    calls: int = 0
    cost_usd: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    unpriced_calls: int = 0  # calls of a model the price table does not know (not in cost_usd)


class SpendLedger:
    """The ``spend.sqlite`` of one instance; thread-safe (the recorder adds from its handler threads)."""

    def __init__(self, root: Path) -> None:
        self.path = Path(root) / FILE
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None

    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            check_sqlite_files(self.path)  # never through a planted link
            touch_private(self.path)
            db = sqlite3.connect(self.path, timeout=10, check_same_thread=False, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            # as turns.sqlite: in WAL a commit survives the process at once, the disk is synced at checkpoints;
            # FULL synced it on every call's row, while the turn's end waited for that row
            db.execute("PRAGMA synchronous=NORMAL")
            db.executescript(_SCHEMA)
            _add_fold_columns(db)
            _fold_old_calls(db, (datetime.now().astimezone().date() - timedelta(days=KEEP_CALL_DAYS)).isoformat())
            self._db = db
        return self._db

    def add(self, spend: CallSpend, *, session: str, turn: str, seq: int | None = None,
            status: int | None = None) -> None:
        """Keep one call (``turn`` is "" for a call made outside any turn)."""
        with self._lock:
            self._conn().execute(
                "INSERT INTO calls (at, day, session, turn, seq, model, status, input_tokens, output_tokens,"
                " cache_read_tokens, cache_write_5m_tokens, cache_write_1h_tokens, cost_usd, prices_as_of)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (datetime.now().astimezone().isoformat(timespec="seconds"), today(), session, turn, seq, spend.model,
                 status, spend.input_tokens, spend.output_tokens, spend.cache_read_tokens,
                 spend.cache_write_5m_tokens, spend.cache_write_1h_tokens, spend.cost_usd, PRICES_AS_OF))

    def totals(self, *, turn: str | None = None, session: str | None = None, day: str | None = None) -> SpendTotals:
        """The sums of the calls matching every filter given (all calls when none is)."""
        where, args = [], []
        for column, value in (("turn", turn), ("session", session), ("day", day)):
            if value is not None:
                where.append(f"{column} = ?")
                args.append(value)
        sql = ("SELECT COALESCE(SUM(COALESCE(folded_calls, 1)), 0), COALESCE(SUM(cost_usd), 0),"
               " COALESCE(SUM(input_tokens), 0), COALESCE(SUM(output_tokens), 0), COALESCE(SUM(cache_read_tokens), 0),"
               " COALESCE(SUM(cache_write_5m_tokens + cache_write_1h_tokens), 0),"
               " COALESCE(SUM(CASE WHEN folded_calls IS NULL THEN cost_usd IS NULL ELSE folded_unpriced END), 0)"
               " FROM calls" + (" WHERE " + " AND ".join(where) if where else ""))
        with self._lock:
            row = self._conn().execute(sql, args).fetchone()
        return SpendTotals(int(row[0]), round(float(row[1]), 6), *(int(v) for v in row[2:]))

    def spent(self, *, turn: str | None = None, session: str | None = None, day: str | None = None) -> float:
        return self.totals(turn=turn, session=session, day=day).cost_usd

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None


def _add_fold_columns(db: sqlite3.Connection) -> None:
    have = {row[1] for row in db.execute("PRAGMA table_info(calls)")}
    for column in _FOLD_COLUMNS:
        if column not in have:
            try:
                db.execute(f"ALTER TABLE calls ADD COLUMN {column} INTEGER")
            except sqlite3.OperationalError as exc:  # another process added it a moment ago
                if "duplicate column" not in str(exc):
                    raise


def _fold_old_calls(db: sqlite3.Connection, before_day: str) -> int:
    """Fold the per-call rows of days before ``before_day`` (one transaction: another process reads either
    the rows or their fold, never both nor neither). Returns how many rows were folded."""
    tokens = ", ".join(_TOKENS)
    sums = ", ".join(f"SUM({column})" for column in _TOKENS)
    old = "day < ? AND folded_calls IS NULL"
    if db.execute(f"SELECT 1 FROM calls WHERE {old} LIMIT 1", (before_day,)).fetchone() is None:
        return 0  # nothing to fold: no write lock taken
    db.execute("BEGIN IMMEDIATE")
    try:
        db.execute(
            f"INSERT INTO calls (at, day, session, turn, seq, model, status, {tokens}, cost_usd, prices_as_of,"
            " folded_calls, folded_unpriced)"
            f" SELECT MAX(at), day, session, ?, NULL, model, NULL, {sums}, COALESCE(SUM(cost_usd), 0), prices_as_of,"
            f" COUNT(*), SUM(cost_usd IS NULL) FROM calls WHERE {old} GROUP BY day, session, model, prices_as_of",
            (FOLDED_TURN, before_day))
        folded = db.execute(f"DELETE FROM calls WHERE {old}", (before_day,)).rowcount
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    return folded
