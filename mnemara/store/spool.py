"""Nothing typed is ever lost: rows turns.sqlite could not take wait in ``spool.jsonl``.

When the store is locked by another process for longer than its busy timeout,
or damaged, the session appends the row (the user's message, or the answer
that came back) to ``<instance>/spool.jsonl``: one JSON object per line,
appended under the file's lock and flushed to disk, private to the user. At the
start of every turn the spool is replayed into the store in one transaction, in
order, and emptied under the same lock, so two processes never replay a row
twice. Every line carries an id that its stored row keeps in ``meta.spool_id``:
a replay cut short after the store took the rows but before the file was emptied
(the process killed, the rewrite failing) does not store them a second time.
A line that cannot be parsed (not JSON, not UTF-8) is kept in the file byte for
byte, never dropped; a line cut short by a killed writer never swallows the next.
"""
from __future__ import annotations

import json
import os
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mnemara.core.debuglog import now_iso
from mnemara.core.errors import MnemaraError
from mnemara.core.fsutil import locked_append, locked_rewrite
from mnemara.store.rows import Turn

if TYPE_CHECKING:
    from mnemara.store.turns import TurnStore

SPOOL_NAME = "spool.jsonl"
SPOOL_ID = "spool_id"  # the meta field of a replayed row: the id of its spool line


@dataclass
class ReplayResult:
    rows: int = 0
    error: str | None = None  # why the spool could not be replayed (it is kept as it is)
    unreadable: int = 0  # lines kept in the spool because they are not valid rows
    file_error: str | None = None  # the spool file itself cannot be read (the store may well work)
    rewrite_error: str | None = None  # the rows are stored but the spool could not be emptied (they stay, skipped later)


class Spool:
    """The spool file of one instance."""

    def __init__(self, root: Path) -> None:
        self.path = Path(root) / SPOOL_NAME

    def add(self, role: str, blocks: list[dict[str, Any]], meta: dict[str, Any] | None = None) -> None:
        """Append one row and flush it to disk."""
        line = json.dumps({"role": role, "blocks": blocks, "meta": meta or {}, "created_at": now_iso(),
                           "id": uuid.uuid4().hex}, ensure_ascii=False, sort_keys=True)
        locked_append(self.path, line + "\n", own_line=True)
        os.chmod(self.path, 0o600)  # it holds conversation text
        fd = os.open(self.path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def count(self) -> int:
        try:
            with open(self.path, encoding="utf-8", errors="replace") as fh:
                return sum(1 for line in fh if line.strip())
        except FileNotFoundError:
            return 0

    def replay(self, store: TurnStore) -> ReplayResult:
        """Move every spooled row into ``store`` (one transaction), then empty the spool."""
        result = ReplayResult()
        try:
            if not self.count():
                return result
            with locked_rewrite(self.path) as (data, replace):
                rows, kept = [], []
                for raw in data.split(b"\n"):
                    if not raw.strip():
                        continue
                    turn = _turn_from_line(raw)
                    if turn is None:
                        kept.append(raw)
                    else:
                        rows.append(turn)
                done = store.stored_meta_values(SPOOL_ID, [t.meta[SPOOL_ID] for t in rows if SPOOL_ID in t.meta])
                fresh = [t for t in rows if t.meta.get(SPOOL_ID) not in done]
                if fresh:
                    store.import_rows(fresh, evict_live=False)  # raises when the store still cannot take them
                result.rows, result.unreadable = len(fresh), len(kept)
                try:
                    replace(b"".join(raw + b"\n" for raw in kept))
                except OSError as exc:  # stored all the same: their ids keep the next replay from storing them again
                    result.rewrite_error = f"cannot rewrite {self.path}: {exc}"
        except MnemaraError as exc:
            result.error = exc.message
        except OSError as exc:  # the spool cannot be read: it is left as it is
            result.file_error = f"cannot read {self.path}: {exc}"
        return result


def _turn_from_line(raw: bytes) -> Turn | None:
    try:
        data = json.loads(raw.decode("utf-8"))
        if not isinstance(data, dict) or data.get("role") not in ("user", "assistant", "system"):
            return None
        blocks, meta = data.get("blocks"), data.get("meta") or {}
        if not isinstance(blocks, list) or not isinstance(meta, dict):
            return None
        if not blocks or not all(isinstance(b, dict) and isinstance(b.get("type"), str) for b in blocks):
            return None
        if isinstance(data.get("id"), str):
            meta = {**meta, SPOOL_ID: data["id"]}
        return Turn(id=0, role=data["role"], blocks=blocks, tokens=0,
                        created_at=str(data.get("created_at") or now_iso()), meta={**meta, "spooled": True})
    except (ValueError, TypeError):
        return None
