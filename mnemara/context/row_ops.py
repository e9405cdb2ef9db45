"""Row-level context operations the agent (and 0.18 users) reach for by name.

Selectors shared by the eviction tools: ``row_ids``, ``keep_recent`` (leave the
newest N live rows alone), ``older_than`` (only rows older than a duration such
as ``90s``, ``30m``, ``2h``, ``1d``) and ``segment`` (rows labelled by
:func:`mark_segment`). Pinned rows are never selected. Every operation returns
an :class:`~mnemara.context.eviction.EvictionResult` (rows touched, tokens freed).

A *segment* is a name written into the ``meta`` of a span of rows, so the span
can be evicted or pinned together (Mnemara 0.18's marker rows become segments
on migration).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from mnemara.context.eviction import EvictionResult
from mnemara.core.debuglog import now_iso
from mnemara.core.errors import UsageError
from mnemara.core.fsutil import locked_append
from mnemara.store.rows import Turn
from mnemara.store.turns import TurnStore

_DURATION = re.compile(r"\s*(\d+(?:\.\d+)?)\s*(s|sec|secs|seconds?|m|min|mins|minutes?|h|hours?|d|days?)?\s*", re.IGNORECASE)
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(value: object) -> float:
    """Seconds from ``90``, ``"90s"``, ``"30m"``, ``"2h"``, ``"1d"``; raises :class:`UsageError`."""
    if isinstance(value, bool):
        raise UsageError("older_than must be a duration like 90s, 30m, 2h or 1d")
    if isinstance(value, (int, float)):
        seconds = float(value)
    else:
        m = _DURATION.fullmatch(str(value))
        if not m:
            raise UsageError(f"older_than {value!r} is not a duration (use e.g. 90s, 30m, 2h, 1d)")
        seconds = float(m.group(1)) * _UNIT[(m.group(2) or "s")[0].lower()]
    if seconds <= 0:
        raise UsageError("older_than must be more than zero")
    return seconds


@dataclass(frozen=True)
class Selector:
    """Which live, unpinned rows an operation acts on (``None`` fields do not filter)."""

    row_ids: tuple[int, ...] | None = None
    keep_recent: int | None = None
    older_than: float | None = None  # seconds
    segment: str | None = None

    @classmethod
    def from_args(cls, args: dict[str, Any]) -> Selector:
        ids = args.get("row_ids")
        if ids is not None and (not isinstance(ids, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids)):
            raise UsageError("row_ids must be a list of integers")
        keep = args.get("keep_recent")
        if keep is not None and (not isinstance(keep, int) or isinstance(keep, bool) or keep < 0):
            raise UsageError("keep_recent must be a whole number >= 0")
        if args.get("skip_pinned") is False:
            raise UsageError("pinned rows are never evicted here; unpin_row first if one must go")
        segment = args.get("segment")
        if segment is not None and (not isinstance(segment, str) or not segment.strip()):
            raise UsageError("segment must be a non-empty name")
        older = args.get("older_than")
        return cls(tuple(ids) if ids is not None else None, keep,
                   parse_duration(older) if older is not None else None, segment)

    @property
    def everything(self) -> bool:
        return self.row_ids is None and self.keep_recent is None and self.older_than is None and self.segment is None

    def pick(self, live: list[Turn], now: datetime | None = None) -> tuple[list[Turn], list[int]]:
        """The selected rows of ``live`` (oldest first) and requested ids that are not live, unpinned rows."""
        rows = live
        skipped: list[int] = []
        if self.row_ids is not None:
            wanted = set(self.row_ids)
            rows = [t for t in rows if t.id in wanted]
            skipped = sorted(wanted - {t.id for t in rows})
        if self.segment is not None:
            rows = [t for t in rows if t.meta.get("segment") == self.segment]
        if self.older_than is not None:
            cutoff = (now or datetime.now(timezone.utc)) - timedelta(seconds=self.older_than)
            rows = [t for t in rows if (when := _when(t)) is not None and when < cutoff]
        if self.keep_recent:
            recent = {t.id for t in live[-self.keep_recent:]}
            rows = [t for t in rows if t.id not in recent]
        return rows, skipped


def _when(turn: Turn) -> datetime | None:
    try:
        stamp = datetime.fromisoformat(turn.created_at.replace("Z", "+00:00"))
    except ValueError:
        return None
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=timezone.utc)


def selected_ids(store: TurnStore, selector: Selector) -> tuple[list[int] | None, list[int]]:
    """Row ids for the block strategies (``None``: every live row) and the skipped ids."""
    if selector.everything:
        return None, []
    rows, skipped = selector.pick(store.live_rows())
    return [t.id for t in rows], skipped


def evict_rows(store: TurnStore, strategy: str, selector: Selector) -> EvictionResult:
    """Take the selected rows out of the window (kept on disk as evicted)."""
    rows, skipped = selector.pick(store.live_rows())
    result = EvictionResult(strategy, skipped=skipped)
    if rows:
        result.rows = store.evict(t.id for t in rows)
        result.tokens_freed = sum(t.tokens for t in rows)
        result.row_ids = [t.id for t in rows]
    return result


def evict_last(store: TurnStore, n: int) -> EvictionResult:
    if n < 1:
        raise UsageError("n must be at least 1")
    return evict_rows(store, f"evict_last {n}", Selector(row_ids=tuple(t.id for t in store.live_rows(limit=n))))


def evict_since(store: TurnStore, segment: str) -> EvictionResult:
    """Evict the segment's rows and every live row after its first one (0.18's ``evict_since``)."""
    live = store.live_rows()
    start = next((t.id for t in live if t.meta.get("segment") == segment), None)
    if start is None:
        raise UsageError(f"no live row is in segment {segment!r} (list_window shows segments)")
    return evict_rows(store, f"evict_since {segment}", Selector(row_ids=tuple(t.id for t in live if t.id >= start)))


def mark_segment(store: TurnStore, name: str, from_row: int | None, to_row: int | None) -> list[int]:
    """Label the live rows with ``from_row <= id <= to_row`` (default: every live row) as segment ``name``."""
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9 _.:-]{0,63}", name):
        raise UsageError("segment name: 1-64 letters, digits, spaces, '_', '-', '.', ':' (starting with a letter or digit)")
    live = store.live_rows()
    low = from_row if from_row is not None else (live[0].id if live else 0)
    high = to_row if to_row is not None else (live[-1].id if live else 0)
    if low > high:
        raise UsageError(f"from_row {low} is after to_row {high}")
    ids = [t.id for t in live if low <= t.id <= high]
    if not ids:
        raise UsageError(f"no live, unpinned row between {low} and {high}")
    for row_id in ids:
        store.update_meta(row_id, segment=name)
    return ids


def log_choice(path: Path, decision: str, rationale: str, decision_type: str = "", context_summary: str = "",
               tokens_at_choice: int | None = None, last_row: int | None = None) -> dict[str, Any]:
    """Append one decision record to ``choices.jsonl`` (one JSON object per line); returns it."""
    if not decision.strip() or not rationale.strip():
        raise UsageError("decision and rationale must not be empty")
    record = {"ts": now_iso(), "decision_type": decision_type, "decision": decision, "rationale": rationale,
              "context_summary": context_summary, "tokens_at_choice": tokens_at_choice, "last_row_id": last_row}
    locked_append(path, json.dumps(record, ensure_ascii=False) + "\n")
    return record
