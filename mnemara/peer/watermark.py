"""The peer inbox's persisted watermark: ``<instance>/peer_watermark.json``.

``{"db": "<peer database path>", "watermark": N}``: every matching row with an id
up to N was handled (or skipped as backlog). A watermark saved for another
database is not used. Writes are atomic; a missing or unreadable file means
"no watermark yet".
"""
from __future__ import annotations

import json
from pathlib import Path

from mnemara.core.fsutil import atomic_write_text

FILE_NAME = "peer_watermark.json"


def load(path: Path, db_path: Path | None) -> int | None:
    """The saved watermark for ``db_path``, or ``None`` (no file, another database, unreadable)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("db") != str(db_path):
        return None
    value = data.get("watermark")
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def save(path: Path, db_path: Path | None, watermark: int) -> None:
    atomic_write_text(Path(path), json.dumps({"db": str(db_path), "watermark": int(watermark)}) + "\n")
