"""Undo of the last eviction batch the user ran (``/compress``, ``/evict``, ``/clear``).

Evicted rows stay on disk (``evicted=1``), so putting them back is one update;
block strategies rewrite rows in place, so the batch also keeps the blocks
those rows had before. The batch lives in ``last_eviction.json`` in the
instance folder (atomic write); a new batch replaces it and ``/undo`` removes it.

Use :class:`Batch` around a store change: it snapshots the live window before,
diffs after, and records what left the window or changed.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mnemara.core.errors import UsageError
from mnemara.core.fsutil import atomic_write_text
from mnemara.store.turns import TurnStore

UNDO_FILE = "last_eviction.json"


def undo_path(instance_root: Path) -> Path:
    return Path(instance_root) / UNDO_FILE


@dataclass
class Batch:
    """Context manager recording one user eviction batch for :func:`undo_last`."""

    store: TurnStore
    instance_root: Path
    label: str
    evicted: list[int] = field(default_factory=list)
    rewritten: dict[int, list[dict[str, Any]]] = field(default_factory=dict)

    def __enter__(self) -> "Batch":
        self._before = {t.id: t.blocks for t in self.store.live_rows()}
        return self

    def __exit__(self, exc_type: object, *rest: object) -> None:
        if exc_type is not None:
            return
        after = {t.id: t.blocks for t in self.store.live_rows()}
        self.evicted = sorted(i for i in self._before if i not in after)
        for i in self.evicted:  # a row can be rewritten and then evicted in one batch (compression)
            try:
                after[i] = self.store.get(i).blocks
            except UsageError:  # deleted meanwhile: nothing to restore
                continue
        self.rewritten = {i: blocks for i, blocks in self._before.items() if i in after and after[i] != blocks}
        if self.evicted or self.rewritten:
            payload = {"label": self.label, "evicted": self.evicted,
                       "rewritten": {str(i): b for i, b in self.rewritten.items()}}
            atomic_write_text(undo_path(self.instance_root), json.dumps(payload, ensure_ascii=False))

    @property
    def changed(self) -> bool:
        return bool(self.evicted or self.rewritten)


def undo_last(store: TurnStore, instance_root: Path) -> str:
    """Put back the last recorded batch; returns what happened in one line. Raises ValueError when there is none."""
    path = undo_path(instance_root)
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError("nothing to undo: no eviction batch is recorded (only /compress, /evict and /clear are)") from None
    except (OSError, ValueError) as exc:
        raise ValueError(f"the undo record {path} is unreadable ({exc}); nothing was changed") from None
    evicted = [int(i) for i in payload.get("evicted", [])]
    rewritten = {int(i): blocks for i, blocks in (payload.get("rewritten") or {}).items()}
    back = store.unevict(evicted)
    restored = store.set_blocks_many((i, blocks, None) for i, blocks in rewritten.items()) if rewritten else 0
    path.unlink(missing_ok=True)
    parts = [f"undid {payload.get('label', 'the last eviction')}: {back} row(s) back in the window"]
    if restored:
        parts.append(f"{restored} row(s) restored to their blocks before it")
    return ", ".join(parts)
