"""``debug.log``: append-only JSON Lines of errors and events, one object per line."""
from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from mnemara.core.fsutil import locked_append


def now_iso() -> str:
    """The current time as an ISO-8601 string with a UTC offset, to the second."""
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


def log_event(log_path: Path, event: str, /, level: str = "info", **fields: Any) -> None:
    """Append one JSON object to the log at ``log_path``. Never raises for a logging failure."""
    record = {"ts": now_iso(), "level": level, "event": event, **fields}
    try:
        locked_append(Path(log_path), json.dumps(record, ensure_ascii=False, default=str) + "\n")
    except OSError:
        pass


def read_events(path: Path) -> list[dict[str, Any]]:
    """Every parseable record of the log (lines that are not JSON are skipped)."""
    out: list[dict[str, Any]] = []
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return out
    for line in text.splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(rec, dict):
            out.append(rec)
    return out
