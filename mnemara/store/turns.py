"""``turns.sqlite``: every turn of an instance, its pins and slots, and the rolling window.

One row per turn (user or assistant). ``content`` is a JSON list of content
blocks (``text``, ``thinking``, ``tool_use``, ``tool_result`` kept distinct) so
eviction can act on block types later. Rows are never silently lost: when the
window's caps push a row out it is marked ``evicted`` (still on disk, visible
to ``mnemara show --all`` and exports) rather than deleted.

Pinned rows carry a ``pin_label`` and a ``slot_pos``; they are never evicted by
caps and are sent every turn in slot order. Window selection reads only the
pinned rows plus the newest ``max_window_turns (+ slack)`` live rows through a
partial index, so it costs O(window), not O(history). Row counts are kept by
triggers in ``turn_counts`` (O(1) to read, however many evicted rows pile up),
and :meth:`TurnStore.trim` evicts at most :data:`TRIM_BATCH` rows per call, so
the first trim after a bulk import is a bounded step, not one huge update.
"""
from __future__ import annotations

import functools
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, TypeVar

from mnemara.core.debuglog import now_iso
from mnemara.core.errors import StoreError, UsageError
from mnemara.store.health import WriteTx, unavailable
from mnemara.store.redaction import rewrite_rows, squeeze_out_old_pages
from mnemara.store.rows import (
    AGENT, CHANGED_BY_AGENT, COLUMNS, decode_meta, dumps, MADE_BY, normalize_blocks, PINNED_BY, row_to_turn, text_block, Turn, validate_label, Window, WindowCaps,
)
# the row and its window live in mnemara.store.rows; re-exported for the store's callers
from mnemara.store.schema import APP_ID, MIGRATIONS, connect, statements
from mnemara.core.tokens import estimate_blocks

ROLES = ("user", "assistant", "system")
HEADROOM_FRACTION = 0.5  # "well under the token cap" for row_cap_slack_when_token_headroom
TRIM_BATCH = 250  # most rows one trim() call evicts (one short transaction)


F = TypeVar("F", bound=Callable[..., Any])


def _keep_newest(candidates: list[Turn], fixed: int, max_turns: int, max_tokens: int,
                 slack: int) -> tuple[list[Turn], tuple[str, ...]]:
    """The newest ``candidates`` (given newest first) that fit both caps with ``fixed`` tokens already
    used, and the cap that stopped the selection (empty when all fit)."""
    used = fixed
    kept: list[Turn] = []
    for turn in candidates:
        if len(kept) >= max_turns + slack:
            return kept, ("max_window_turns",)
        if used + turn.tokens > max_tokens:
            return kept, ("max_window_tokens",)
        if len(kept) >= max_turns and (used + turn.tokens) >= max_tokens * HEADROOM_FRACTION:
            return kept, ("max_window_turns",)
        kept.append(turn)
        used += turn.tokens
    return kept, ()


def guarded_read(method: F) -> F:
    """A store read that meets a damaged page raises StoreUnavailable (one line), not a traceback."""

    @functools.wraps(method)
    def wrapper(store: TurnStore, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(store, *args, **kwargs)
        except sqlite3.DatabaseError as exc:
            raise unavailable(store, store._conn, exc) from None

    return wrapper  # type: ignore[return-value]  # functools.wraps keeps the signature; mypy cannot see it


class TurnStore:
    """Thread-safe access to one ``turns.sqlite``. Every call is its own transaction."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.RLock()
        self._closed = False
        self.damaged: str | None = None  # set once the file fails its integrity check: no more writes
        self._conn = self._open()

    # -- opening and schema ----------------------------------------------------
    def _open(self) -> sqlite3.Connection:
        conn, self.damaged = connect(self.path)
        self._conn = conn
        if self.damaged is None:
            self.migrate()
        return conn

    def schema_version(self) -> int:
        try:
            row = self._conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        except sqlite3.OperationalError:
            return 0
        return int(row[0]) if row else 0

    def migrate(self) -> list[int]:
        """Apply pending migrations; returns the versions applied (empty when up to date)."""
        applied: list[int] = []
        with self._lock:
            current = self.schema_version()
            for version in sorted(v for v in MIGRATIONS if v > current):
                with self._tx() as conn:
                    for statement in statements(version):
                        conn.execute(statement)
                    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('app', ?)", (APP_ID,))
                    conn.execute(
                        "INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', ?)", (str(version),)
                    )
                applied.append(version)
        return applied

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._conn.close()

    def __enter__(self) -> "TurnStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def closed(self) -> bool:
        """True once :meth:`close` ran (every later read or write says so in one line)."""
        return self._closed

    def _tx(self) -> WriteTx:
        return WriteTx(self, self._conn)

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (``BEGIN IMMEDIATE`` ... ``COMMIT``) under the store's lock, for
        writes that land together or not at all: an exception inside rolls them all back. Waiting
        too long for another process's lock, or a damaged file, raises StoreUnavailable."""
        with self._lock, self._tx() as conn:
            yield conn

    def redact(self, ids: Iterable[int], rewrite: Callable[[str], str]) -> list[int]:
        """Rewrite rows ``ids`` in place: their raw ``content`` and ``meta`` JSON go through ``rewrite``
        (text in, text out; it must return JSON), in one transaction with tokens recounted. Then the
        file is vacuumed with ``secure_delete`` on, so the old text is gone from the database and its
        WAL, not just unlinked. Returns the ids that existed (evicted, pinned and damaged rows too)."""
        with self._lock:
            secure = self._conn.execute("PRAGMA secure_delete").fetchone()[0]
            self._conn.execute("PRAGMA secure_delete = ON")
            try:
                with self.transaction() as conn:
                    found = rewrite_rows(conn, ids, rewrite)
                squeeze_out_old_pages(self._conn)
            finally:
                self._conn.execute(f"PRAGMA secure_delete = {int(secure)}")
        return found

    # -- writing ------------------------------------------------------------------
    def append(
        self,
        role: str,
        content: str | list[dict[str, Any]],
        meta: dict[str, Any] | None = None,
        *,
        protected: bool = False,
    ) -> int:
        """Append a turn; returns its row id."""
        if role not in ROLES:
            raise UsageError(f"role must be one of {', '.join(ROLES)}, not {role!r}")
        blocks = normalize_blocks(content)
        with self._lock, self._tx() as conn:
            cur = conn.execute(
                "INSERT INTO turns(role, content, tokens, created_at, protected, meta) VALUES (?,?,?,?,?,?)",
                (role, dumps(blocks), estimate_blocks(blocks), now_iso(), int(protected), dumps(meta or {})),
            )
            return int(cur.lastrowid or 0)

    def append_many(self, rows: Iterable[tuple[str, str | list[dict[str, Any]]]]) -> int:
        """Bulk append (role, content) pairs in one transaction; returns how many."""
        stamp = now_iso()
        payload = []
        for role, content in rows:
            blocks = normalize_blocks(content)
            payload.append((role, dumps(blocks), estimate_blocks(blocks), stamp))
        with self._lock, self._tx() as conn:
            conn.executemany("INSERT INTO turns(role, content, tokens, created_at) VALUES (?,?,?,?)", payload)
        return len(payload)

    def set_blocks(self, turn_id: int, blocks: list[dict[str, Any]], *, protected: bool | None = None) -> None:
        """Replace a row's content in place (same id); token estimate recomputed."""
        blocks = normalize_blocks(blocks)
        with self._lock, self._tx() as conn:
            sql = "UPDATE turns SET content=?, tokens=?"
            params: list[Any] = [dumps(blocks), estimate_blocks(blocks)]
            if protected is not None:
                sql += ", protected=?"
                params.append(int(protected))
            cur = conn.execute(sql + " WHERE id=?", (*params, turn_id))
            if cur.rowcount == 0:
                raise UsageError(f"no row {turn_id}")

    def set_blocks_many(self, updates: Iterable[tuple[int, list[dict[str, Any]], bool | None]]) -> int:
        """Replace the content of many rows in ONE transaction: ``(id, blocks, protected-or-None)``.

        Returns how many rows were updated. Used by bulk eviction and compression so
        a pass over a large window costs one commit, not one per row.
        """
        payload = [(tid, normalize_blocks(blocks), prot) for tid, blocks, prot in updates]
        changed = 0
        with self._lock, self._tx() as conn:
            for tid, blocks, prot in payload:
                if prot is None:
                    cur = conn.execute(
                        "UPDATE turns SET content=?, tokens=? WHERE id=?",
                        (dumps(blocks), estimate_blocks(blocks), tid),
                    )
                else:
                    cur = conn.execute(
                        "UPDATE turns SET content=?, tokens=?, protected=? WHERE id=?",
                        (dumps(blocks), estimate_blocks(blocks), int(prot), tid),
                    )
                changed += cur.rowcount
        return changed

    def import_rows(self, rows: Iterable[Turn], *, keep_ids: bool = False, evict_live: bool = True) -> list[int]:
        """Restore exported rows in ONE transaction; returns the ids they got.

        With ``evict_live`` the current live unpinned rows leave the window first
        (kept on disk). A pinned row whose label already exists updates that slot
        in place; other rows are inserted with their role, blocks, timestamp,
        flags and meta (and their original id when ``keep_ids``, for an empty store).
        """
        rows = list(rows)
        ids: list[int] = []
        with self._lock, self._tx() as conn:
            if keep_ids and conn.execute("SELECT 1 FROM turns LIMIT 1").fetchone():
                raise StoreError(f"{self.path}: ids can only be kept when importing into an empty store")
            if evict_live:
                conn.execute("UPDATE turns SET evicted=1 WHERE pin_label IS NULL AND evicted=0")
            existing = {r[0] for r in conn.execute("SELECT pin_label FROM turns WHERE pin_label IS NOT NULL")}
            new_pins = sorted((t for t in rows if t.pin_label is not None and t.pin_label not in existing),
                              key=lambda t: (t.slot_pos if t.slot_pos is not None else 0, t.id))
            base = self._next_slot(conn)
            slot_for = {t.pin_label: base + rank for rank, t in enumerate(new_pins)}  # keep their relative order
            for t in rows:
                if t.role not in ROLES:
                    raise UsageError(f"role must be one of {', '.join(ROLES)}, not {t.role!r}")
                blocks = normalize_blocks(t.blocks)
                values = (t.role, dumps(blocks), estimate_blocks(blocks), t.created_at, int(t.protected), dumps(t.meta))
                if t.pin_label is not None:
                    validate_label(t.pin_label)
                    found = conn.execute("SELECT id FROM turns WHERE pin_label=?", (t.pin_label,)).fetchone()
                    if found:
                        conn.execute(
                            "UPDATE turns SET role=?, content=?, tokens=?, created_at=?, protected=?, meta=? WHERE id=?",
                            (*values, found[0]),
                        )
                        ids.append(int(found[0]))
                        continue
                    slot = t.slot_pos if keep_ids and t.slot_pos is not None else slot_for[t.pin_label]
                    evicted = 0
                else:
                    slot, evicted = None, int(t.evicted)
                cur = conn.execute(
                    "INSERT INTO turns(id, role, content, tokens, created_at, protected, meta, pin_label, slot_pos, evicted)"
                    " VALUES (?,?,?,?,?,?,?,?,?,?)",
                    (t.id if keep_ids else None, *values, t.pin_label, slot, evicted),
                )
                ids.append(int(cur.lastrowid or 0))
        return ids

    def set_text(self, turn_id: int, text: str) -> None:
        """Edit a row's body: replaces its text blocks with one text block, other blocks kept."""
        turn = self.get(turn_id)
        others = [b for b in turn.blocks if b.get("type") != "text"]
        self.set_blocks(turn_id, [text_block(text), *others])

    def update_meta(self, turn_id: int, **changes: Any) -> None:
        with self._lock, self._tx() as conn:
            row = conn.execute("SELECT meta FROM turns WHERE id=?", (turn_id,)).fetchone()
            if row is None:
                raise UsageError(f"no row {turn_id}")
            meta, _ = decode_meta(row[0])  # a damaged meta is replaced, not a crash
            meta.update(changes)
            conn.execute("UPDATE turns SET meta=? WHERE id=?", (dumps(meta), turn_id))

    def delete(self, ids: Iterable[int]) -> int:
        """Delete rows for good (used by import/forget); returns how many."""
        ids = list(ids)
        with self._lock, self._tx() as conn:
            return sum(conn.execute("DELETE FROM turns WHERE id=?", (i,)).rowcount for i in ids)

    def evict(self, ids: Iterable[int]) -> int:
        """Take live, unpinned rows out of the window (kept on disk); returns how many."""
        ids = list(ids)
        with self._lock, self._tx() as conn:
            return sum(
                conn.execute(
                    "UPDATE turns SET evicted=1 WHERE id=? AND evicted=0 AND pin_label IS NULL", (i,)
                ).rowcount
                for i in ids
            )

    def unevict(self, ids: Iterable[int]) -> int:
        """Put evicted rows back into the window (undo of an eviction); returns how many."""
        ids = list(ids)
        with self._lock, self._tx() as conn:
            return sum(conn.execute("UPDATE turns SET evicted=0 WHERE id=? AND evicted=1", (i,)).rowcount for i in ids)

    # -- pins and slots -----------------------------------------------------------
    def _next_slot(self, conn: sqlite3.Connection) -> int:
        row = conn.execute("SELECT MAX(slot_pos) FROM turns WHERE pin_label IS NOT NULL").fetchone()
        return 0 if row[0] is None else int(row[0]) + 1

    def pin(self, turn_id: int, label: str | None = None, *, by: str = "user") -> str:
        """Pin a row at the next slot position; returns its label. ``by="agent"`` marks the pin as the
        agent's (the agent may unpin it without asking; a user's pin it may not)."""
        label = validate_label(label or f"row-{turn_id}")
        with self._lock, self._tx() as conn:
            row = conn.execute("SELECT pin_label, meta FROM turns WHERE id=?", (turn_id,)).fetchone()
            if row is None:
                raise UsageError(f"no row {turn_id}")
            if row[0] is not None:
                return str(row[0])
            self._check_label_free(conn, label)
            meta, _ = decode_meta(row[1])
            meta.pop(PINNED_BY, None)
            if by == AGENT:
                meta[PINNED_BY] = AGENT
            conn.execute(
                "UPDATE turns SET pin_label=?, slot_pos=?, evicted=0, meta=? WHERE id=?",
                (label, self._next_slot(conn), dumps(meta), turn_id),
            )
        return label

    def unpin(self, turn_id: int) -> None:
        with self._lock, self._tx() as conn:
            row = conn.execute("SELECT meta FROM turns WHERE id=?", (turn_id,)).fetchone()
            if row is None:
                raise UsageError(f"no row {turn_id}")
            meta, _ = decode_meta(row[0])
            meta.pop(PINNED_BY, None)
            conn.execute("UPDATE turns SET pin_label=NULL, slot_pos=NULL, meta=? WHERE id=?", (dumps(meta), turn_id))

    def upsert_slot(self, label: str, role: str, content: str | list[dict[str, Any]], *, by: str = "user") -> int:
        """Update the pinned row called ``label`` in place, or insert it at the next slot.

        With ``by="agent"`` only a slot the agent made itself may be updated: a row the user
        typed or pinned keeps its role and text (:class:`UsageError` names it); a new slot is
        marked as the agent's (``made_by``).
        """
        label = validate_label(label)
        if role not in ROLES:
            raise UsageError(f"role must be one of {', '.join(ROLES)}, not {role!r}")
        blocks = normalize_blocks(content)
        with self._lock, self._tx() as conn:
            row = conn.execute("SELECT id, meta FROM turns WHERE pin_label=?", (label,)).fetchone()
            if row:
                meta, _ = decode_meta(row[1])
                if by == AGENT and meta.get(MADE_BY) != AGENT:
                    raise UsageError(f"slot {label!r} holds row {row[0]}, which the agent did not make (the user typed "
                                     f"or pinned it); upsert_slot only updates slots the agent created: pick another label")
                conn.execute(
                    "UPDATE turns SET role=?, content=?, tokens=?, created_at=? WHERE id=?",
                    (role, dumps(blocks), estimate_blocks(blocks), now_iso(), row[0]),
                )
                return int(row[0])
            cur = conn.execute(
                "INSERT INTO turns(role, content, tokens, created_at, pin_label, slot_pos, meta) VALUES (?,?,?,?,?,?,?)",
                (role, dumps(blocks), estimate_blocks(blocks), now_iso(), label, self._next_slot(conn),
                 dumps({MADE_BY: AGENT} if by == AGENT else {})),
            )
            return int(cur.lastrowid or 0)

    def mark_changed_by_agent(self, ids: Iterable[int], how: str) -> None:
        """Note on each row that the agent rewrote it, and with which tool (``show`` and the viewer say so)."""
        with self._lock, self._tx() as conn:
            for turn_id in ids:
                row = conn.execute("SELECT meta FROM turns WHERE id=?", (turn_id,)).fetchone()
                if row is None:
                    continue
                meta, _ = decode_meta(row[0])
                old = meta.get(CHANGED_BY_AGENT)
                changes = [str(c) for c in old] if isinstance(old, list) else []
                if how not in changes:
                    meta[CHANGED_BY_AGENT] = [*changes, how]
                    conn.execute("UPDATE turns SET meta=? WHERE id=?", (dumps(meta), turn_id))

    def rename_slot(self, old: str, new: str) -> None:
        new = validate_label(new)
        with self._lock, self._tx() as conn:
            if old == new:
                return
            self._check_label_free(conn, new)
            if conn.execute("UPDATE turns SET pin_label=? WHERE pin_label=?", (new, old)).rowcount == 0:
                raise UsageError(f"no slot {old!r}")

    def move_slot(self, label: str, position: int) -> None:
        """Move a pinned row to ``position`` (0-based) among the pinned rows; others shift."""
        with self._lock, self._tx() as conn:
            rows = [r[0] for r in conn.execute(
                "SELECT pin_label FROM turns WHERE pin_label IS NOT NULL ORDER BY slot_pos, id"
            )]
            if label not in rows:
                raise UsageError(f"no slot {label!r}")
            if not 0 <= position < len(rows):
                raise UsageError(f"position must be between 0 and {len(rows) - 1}")
            rows.remove(label)
            rows.insert(position, label)
            for pos, lab in enumerate(rows):
                conn.execute("UPDATE turns SET slot_pos=? WHERE pin_label=?", (pos, lab))

    @staticmethod
    def _check_label_free(conn: sqlite3.Connection, label: str) -> None:
        if conn.execute("SELECT 1 FROM turns WHERE pin_label=?", (label,)).fetchone():
            raise UsageError(f"a slot named {label!r} already exists")

    # -- reading ------------------------------------------------------------------
    @guarded_read
    def get(self, turn_id: int) -> Turn:
        with self._lock:
            row = self._conn.execute(f"SELECT {COLUMNS} FROM turns WHERE id=?", (turn_id,)).fetchone()
        if row is None:
            raise UsageError(f"no row {turn_id}")
        return row_to_turn(row)

    @guarded_read
    def stored_meta_values(self, key: str, values: Iterable[str]) -> set[str]:
        """Which of ``values`` some row already holds in its meta under ``key`` (a row whose meta is
        not JSON holds none); e.g. the spool's row ids, so a replay never stores a row twice."""
        wanted = list(dict.fromkeys(values))
        if not wanted:
            return set()
        marks = ",".join("?" * len(wanted))
        sql = (f"SELECT v FROM (SELECT CASE WHEN json_valid(meta) THEN json_extract(meta, ?) END AS v FROM turns)"
               f" WHERE v IN ({marks})")
        with self._lock:
            return {str(r[0]) for r in self._conn.execute(sql, ("$." + key, *wanted))}

    @guarded_read
    def meta_list_values(self, key: str, values: Iterable[str]) -> set[str]:
        """Which of ``values`` some assistant row holds in the list under ``key`` of its meta (e.g. the
        peer messages an inbox turn carried, so a message that comes again is not a second turn)."""
        wanted = list(dict.fromkeys(values))
        if not wanted:
            return set()
        marks = ",".join("?" * len(wanted))
        sql = (f"SELECT DISTINCT j.value FROM turns, json_each(turns.meta, ?) AS j WHERE turns.role = 'assistant'"
               f" AND json_valid(turns.meta) AND instr(turns.meta, ?) > 0 AND j.value IN ({marks})")
        with self._lock:
            return {str(r[0]) for r in self._conn.execute(sql, ("$." + key, f'"{key}"', *wanted))}

    @guarded_read
    def pinned(self) -> list[Turn]:
        with self._lock:
            rows = self._conn.execute(
                f"SELECT {COLUMNS} FROM turns WHERE pin_label IS NOT NULL ORDER BY slot_pos, id"
            ).fetchall()
        return [row_to_turn(r) for r in rows]

    @guarded_read
    def live_rows(self, limit: int | None = None) -> list[Turn]:
        """Live (not evicted), unpinned rows, oldest first; the newest ``limit`` if given."""
        sql = f"SELECT {COLUMNS} FROM turns WHERE pin_label IS NULL AND evicted=0 ORDER BY id DESC"
        with self._lock:
            rows = self._conn.execute(sql + (" LIMIT ?" if limit is not None else ""), (() if limit is None else (limit,))).fetchall()
        return [row_to_turn(r) for r in reversed(rows)]

    @guarded_read
    def history(self, limit: int | None = None) -> list[Turn]:
        """Every row ever stored (evicted ones too), oldest first; the newest ``limit`` if given."""
        sql = f"SELECT {COLUMNS} FROM turns ORDER BY id DESC"
        with self._lock:
            rows = self._conn.execute(sql + (" LIMIT ?" if limit is not None else ""), (() if limit is None else (limit,))).fetchall()
        return [row_to_turn(r) for r in reversed(rows)]

    def window_for(self, caps: WindowCaps, *, exclude_ids: Iterable[int] = ()) -> Window:
        """The rolling window under ``caps`` (a :class:`~mnemara.core.config.Config`): the one way to
        turn the config's four window fields into a selection."""
        return self.window(caps.max_window_turns, caps.max_window_tokens, caps.row_cap_slack_when_token_headroom,
                           preserve_protected=caps.preserve_compressed_reads, exclude_ids=exclude_ids,
                           trim_to=caps.window_trim_to)

    @guarded_read
    def window(
        self,
        max_turns: int,
        max_tokens: int,
        slack: int = 0,
        *,
        preserve_protected: bool = False,
        exclude_ids: Iterable[int] = (),
        trim_to: float = 1.0,
    ) -> Window:
        """Select the rolling window: pinned rows + the newest live rows within both caps.

        The token cap counts pinned rows too (they are never dropped). When every live row fits,
        the window is all of them. When they pass a cap, rows are kept newest-first while they
        fit: with ``trim_to`` 1 up to the cap itself (the oldest rows drop one by one, turn by
        turn); with ``trim_to`` < 1 up to that share of each cap passed, so the window drops
        rows in one step and then grows again for several turns without passing the cap, and
        the prompt cache's prefix stays put meanwhile. ``slack`` extra rows are allowed past
        ``max_turns`` while the total stays under half the token cap. With
        ``preserve_protected`` compression stubs are kept like pins. A message
        that never got a reply (meta ``no_reply``: its turn was refused before
        anything was sent) stays stored but is not part of the window.
        """
        skip = set(exclude_ids)
        pinned = self.pinned()
        protected: list[Turn] = []
        with self._lock:
            if preserve_protected:
                protected = [
                    row_to_turn(r)
                    for r in self._conn.execute(
                        f"SELECT {COLUMNS} FROM turns INDEXED BY turns_protected_live"
                        " WHERE pin_label IS NULL AND evicted=0 AND protected=1 ORDER BY id"
                    )
                ]
                skip.update(t.id for t in protected)
            limit = max_turns + slack + len(skip)
            rows = self._conn.execute(
                f"SELECT {COLUMNS} FROM turns WHERE pin_label IS NULL AND evicted=0 ORDER BY id DESC LIMIT ?",
                (limit + 1,),  # one more than can fit: whether the turn cap is passed
            ).fetchall()
        truncated = len(rows) > limit
        candidates = [t for t in map(row_to_turn, rows[:limit]) if t.id not in skip and not t.meta.get("no_reply")]
        damaged = [t for t in [*pinned, *protected, *candidates] if t.damaged]
        pinned = [t for t in pinned if not t.damaged]
        protected = [t for t in protected if not t.damaged]
        candidates = [t for t in candidates if not t.damaged]
        fixed = sum(t.tokens for t in pinned) + sum(t.tokens for t in protected)
        kept, passed = _keep_newest(candidates, fixed, max_turns, max_tokens, slack)
        if truncated and not passed:
            passed = ("max_window_turns",)
        trimmed_to = ""
        if passed and trim_to < 1:
            turn_goal = max(1, int(max_turns * trim_to)) if "max_window_turns" in passed else max_turns
            token_goal = max(1, int(max_tokens * trim_to)) if "max_window_tokens" in passed else max_tokens
            kept, _ = _keep_newest(kept, fixed, turn_goal, token_goal, 0)
            trimmed_to = " and ".join([*([f"{turn_goal} rows"] if "max_window_turns" in passed else []),
                                       *([f"{token_goal} tokens"] if "max_window_tokens" in passed else [])])
        rows_out = sorted([*protected, *kept], key=lambda t: t.id)
        return Window(pinned=pinned, rows=rows_out, damaged=damaged, passed=passed, trimmed_to=trimmed_to)

    def trim(self, window: Window, limit: int = TRIM_BATCH) -> int:
        """Mark live unpinned rows older than ``window`` and not in it as evicted, oldest first.

        At most ``limit`` rows per call (one short transaction through the live-row
        index), so a store that just took a large import is trimmed in steps;
        returns how many were evicted (``limit`` means more may remain).
        """
        return len(self.trim_ids(window, limit))

    def trim_ids(self, window: Window, limit: int = TRIM_BATCH) -> list[int]:
        """:meth:`trim` that returns the ids it evicted (the rows that just left the window), oldest first.

        Only a window that passed a cap trims: a row the window leaves out for another reason (a
        message that got no reply, a damaged row) did not leave by the caps and stays live."""
        if not window.passed:
            return []
        keep = {t.id for t in window.rows}
        oldest = min((t.id for t in window.rows if not t.protected), default=None)
        sql = "SELECT id FROM turns WHERE pin_label IS NULL AND evicted=0"
        params: tuple[Any, ...] = ()
        if oldest is not None:
            sql += " AND id < ?"
            params = (oldest,)
        with self._lock, self._tx() as conn:
            ids = [r[0] for r in conn.execute(sql + " ORDER BY id LIMIT ?", (*params, limit + len(keep)))
                   if r[0] not in keep][:limit]
            if ids:
                conn.execute(f"UPDATE turns SET evicted=1 WHERE id IN ({','.join('?' * len(ids))})", ids)
            return ids

    def finish_trim_later(self, window: Window, pause: float = 0.02) -> threading.Thread:
        """Evict the rest of what :meth:`trim` left (after a bulk import) in a daemon thread, batch by batch.

        Each batch is its own short transaction, so turns and other processes keep
        writing meanwhile; the thread stops when nothing is left or the store closes.
        """

        def run() -> None:
            try:
                while not self._closed and self.trim(window) >= TRIM_BATCH:
                    time.sleep(pause)
            except (sqlite3.Error, StoreError):  # closed or locked: the next turn's trim goes on
                pass

        thread = threading.Thread(target=run, name="mnemara-trim", daemon=True)
        thread.start()
        return thread

    def clear(self) -> tuple[int, int]:
        """Evict every live unpinned row; returns (rows, tokens) freed."""
        with self._lock, self._tx() as conn:
            rows, tokens = conn.execute(
                "SELECT COUNT(*), COALESCE(SUM(tokens), 0) FROM turns WHERE pin_label IS NULL AND evicted=0"
            ).fetchone()
            conn.execute("UPDATE turns SET evicted=1 WHERE pin_label IS NULL AND evicted=0")
        return int(rows), int(tokens)

    @guarded_read
    def counts(self) -> dict[str, int]:
        """Row counts: stored, live, pinned, evicted, and the tokens of live + pinned rows.

        Read from the trigger-kept ``turn_counts`` row: O(1) at any history size.
        """
        with self._lock:
            total, live, pinned, tokens = self._conn.execute(
                "SELECT stored, live, pinned, live_tokens FROM turn_counts WHERE id = 0"
            ).fetchone()
        return {"stored": total, "live": live, "pinned": pinned, "evicted": total - live - pinned, "live_tokens": tokens}
