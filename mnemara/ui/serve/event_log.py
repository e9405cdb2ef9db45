"""The log of a headless panel: one line per event on stdout, JSON (for machines) or text (for people).

JSON lines are ``{"ts": ..., "event": ..., "instance": ..., <fields>}`` written with ASCII escapes, so
no control character a model or a peer wrote (ESC, U+009B) reaches a terminal or a log viewer raw.
Text lines are ``<ts> <event> key=value ...`` with the same characters shown escaped.
"""
from __future__ import annotations

import json
import threading
from datetime import datetime, timezone
from typing import Any, Literal, TextIO

from mnemara.core.display import terminal_safe

LogFormat = Literal["json", "text"]
FORMATS: tuple[LogFormat, ...] = ("json", "text")


def _stamp() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _shown(value: Any) -> str:
    if isinstance(value, str):
        text = terminal_safe(value).replace("\n", "\\n")
        return json.dumps(text, ensure_ascii=False) if (" " in text or not text or "=" in text) else text
    return terminal_safe(json.dumps(value, ensure_ascii=False, default=str))


class EventLog:
    """Writes events to ``out``, one flushed line each (thread-safe)."""

    def __init__(self, out: TextIO, fmt: LogFormat, instance: str) -> None:
        if fmt not in FORMATS:
            raise ValueError(f"log format {fmt!r} is not one of {', '.join(FORMATS)}")
        self.out = out
        self.fmt = fmt
        self.instance = instance
        self._lock = threading.Lock()

    def line(self, event: str, **fields: Any) -> str:
        fields = {k: v for k, v in fields.items() if v is not None}
        if self.fmt == "json":
            record = {"ts": _stamp(), "event": event, "instance": self.instance, **fields}
            return json.dumps(record, ensure_ascii=True, default=str)
        return " ".join([_stamp(), event, *(f"{k}={_shown(v)}" for k, v in fields.items())])

    def emit(self, event: str, **fields: Any) -> None:
        text = self.line(event, **fields)
        with self._lock:
            try:
                self.out.write(text + "\n")
                self.out.flush()
            except (OSError, ValueError):  # stdout gone (a closed pipe): the panel keeps serving
                pass
