"""Nothing typed is ever lost: rows turns.sqlite could not take wait in ``spool.jsonl``.

When the store is locked by another process for longer than its busy timeout,
or damaged, the session appends the row (the user's message, or the answer
that came back) to ``<instance>/spool.jsonl``: one JSON object per line,
appended under the file's lock and flushed to disk, private to the user. At the
start of every turn the spool is replayed into the store in one transaction, in
order, and emptied under the same lock, so two processes never replay a row
twice. A line that cannot be parsed is kept in the file, never dropped.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mnemara.debuglog import now_iso
from mnemara.errors import MnemaraError
from mnemara.fsutil import locked_append, rewrite_locked

SPOOL_NAME = "spool.jsonl"


@dataclass
class ReplayResult:
    rows: int = 0
    error: str | None = None  # why the spool could not be replayed (it is kept as it is)
    unreadable: int = 0  # lines kept in the spool because they are not valid rows


class Spool:
    """The spool file of one instance."""

    def __init__(self, root: Path) -> None:
        self.path = Path(root) / SPOOL_NAME

    def add(self, role: str, blocks: list[dict[str, Any]], meta: dict[str, Any] | None = None) -> None:
        """Append one row and flush it to disk."""
        line = json.dumps({"role": role, "blocks": blocks, "meta": meta or {}, "created_at": now_iso()},
                          ensure_ascii=False, sort_keys=True)
        locked_append(self.path, line + "\n")
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

    def replay(self, store: Any) -> ReplayResult:
        """Move every spooled row into ``store`` (one transaction), then empty the spool."""
        result = ReplayResult()
        if not self.count():
            return result
        from mnemara.store import Turn

        def transform(text: str) -> str | None:
            rows, kept = [], []
            for line in text.splitlines():
                if not line.strip():
                    continue
                turn = _turn_from_line(line, Turn)
                if turn is None:
                    kept.append(line)
                else:
                    rows.append(turn)
            if rows:
                store.import_rows(rows, evict_live=False)  # raises when the store still cannot take them
            result.rows, result.unreadable = len(rows), len(kept)
            return "".join(f"{line}\n" for line in kept)

        try:
            rewrite_locked(self.path, transform)
        except MnemaraError as exc:
            result.error = exc.message
        return result


def _turn_from_line(line: str, turn_cls: Any) -> Any:
    try:
        data = json.loads(line)
        if not isinstance(data, dict) or data.get("role") not in ("user", "assistant", "system"):
            return None
        blocks, meta = data.get("blocks"), data.get("meta") or {}
        if not isinstance(blocks, list) or not isinstance(meta, dict):
            return None
        if not blocks or not all(isinstance(b, dict) and isinstance(b.get("type"), str) for b in blocks):
            return None
        return turn_cls(id=0, role=data["role"], blocks=blocks, tokens=0,
                        created_at=str(data.get("created_at") or now_iso()), meta={**meta, "spooled": True})
    except (ValueError, TypeError):
        return None
