"""Redacting rows of ``turns.sqlite`` in place, so the old text leaves the file (``TurnStore.redact``)."""
from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable

from mnemara.core.tokens import estimate_blocks


def rewrite_rows(conn: sqlite3.Connection, ids: Iterable[int], rewrite: Callable[[str], str]) -> list[int]:
    """Pass the raw ``content`` and ``meta`` JSON of rows ``ids`` through ``rewrite`` and store what it
    returns, with the row's tokens recounted (inside the caller's transaction). Returns the ids found."""
    found_ids = []
    for row_id in ids:
        found = conn.execute("SELECT content, meta FROM turns WHERE id=?", (row_id,)).fetchone()
        if found is None:
            continue
        content, meta = rewrite(found[0]), rewrite(found[1] or "{}")
        try:
            tokens = estimate_blocks(json.loads(content))
        except (TypeError, ValueError, AttributeError):
            tokens = 0
        conn.execute("UPDATE turns SET content=?, meta=?, tokens=? WHERE id=?", (content, meta, tokens, row_id))
        found_ids.append(row_id)
    return found_ids


def squeeze_out_old_pages(conn: sqlite3.Connection) -> None:
    """Checkpoint the WAL, ``VACUUM`` and checkpoint again, so page images holding old text leave
    both the database file and its ``-wal`` (outside any transaction)."""
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("VACUUM")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
