"""The peer inbox's persisted watermark: ``<instance>/peer_watermark.json``.

``{"db": "<peer database path>", "watermark": N, "broadcasts_after": B}``: every
matching row with an id up to N was handled; broadcasts with an id up to B were
already pending when the inbox was first enabled and are not delivered (rows
addressed to this panel always are). A watermark saved for another database is
not used. Writes are atomic; a missing or unreadable file means "no watermark yet".
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from mnemara.core.fsutil import atomic_write_text

FILE_NAME = "peer_watermark.json"


@dataclass(frozen=True)
class Saved:
    watermark: int
    broadcasts_after: int = 0


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def load_state(path: Path, db_path: Path | None) -> Saved | None:
    """What was saved for ``db_path``, or ``None`` (no file, another database, unreadable)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("db") != str(db_path):
        return None
    value = _count(data.get("watermark"))
    if value is None:
        return None
    return Saved(value, _count(data.get("broadcasts_after", 0)) or 0)


def load(path: Path, db_path: Path | None) -> int | None:
    """The saved watermark for ``db_path``, or ``None`` (no file, another database, unreadable)."""
    saved = load_state(path, db_path)
    return None if saved is None else saved.watermark


def save(path: Path, db_path: Path | None, watermark: int, broadcasts_after: int = 0) -> None:
    data = {"db": str(db_path), "watermark": int(watermark)}
    if broadcasts_after:
        data["broadcasts_after"] = int(broadcasts_after)
    atomic_write_text(Path(path), json.dumps(data) + "\n")
