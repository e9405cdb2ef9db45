"""``debug.log``: append-only JSON Lines of errors and events, written through :mod:`logging`.

Every instance has its own logger, :func:`instance_logger` (also ``Instance.logger``, so a
session's is ``session.instance.logger``), a child of the ``mnemara`` logger. Its
:class:`JsonLinesHandler` appends one JSON object per event to the instance's
``debug.log``, as ``{"ts": ..., "level": ..., "event": ..., <fields>}``; the file stays open
between events (:class:`~mnemara.core.fsutil.HeldAppender`: locked per record, safe across
processes). :func:`log_event` is how Mnemara writes an event; :func:`read_events` reads the
file back.

Embedding: the events are ordinary :class:`logging.LogRecord` objects, with the event's name
as the message and two extra attributes, ``record.event`` (the name) and ``record.fields``
(a dict of its fields)::

    logger = session.instance.logger              # or mnemara.instance_logger(instance)
    logger.addHandler(my_handler)                 # add: see every event of this instance too
    logger.removeHandler(default_handler(logger)) # replace: no debug.log is written
    logging.getLogger("mnemara").addHandler(h)    # every instance's events, in one place

:class:`JsonLinesFormatter` formats a record as the line ``debug.log`` holds, for a handler of
your own. Records also propagate to the root logger, as any library's do: an application
that configured logging (``logging.basicConfig``) sees Mnemara's events at its level; set
``logging.getLogger("mnemara").propagate = False`` to keep them out.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Union

from mnemara.core.fsutil import HeldAppender
from mnemara.core.redact import redact_urls_in

#: The name of an instance's log file, in its folder.
DEBUG_LOG = "debug.log"
#: The parent of every instance's logger.
ROOT_LOGGER = "mnemara"
INSTANCE_LOGGERS = ROOT_LOGGER + ".instance"
LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR,
          "critical": logging.CRITICAL}
#: Where :func:`log_event` writes: an instance's logger, or the path of its ``debug.log``.
LogTarget = Union[logging.Logger, Path, str]

_loggers: dict[str, logging.Logger] = {}
_loggers_lock = threading.Lock()


def now_iso() -> str:
    """The current time as an ISO-8601 string with a UTC offset, to the second."""
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


class JsonLinesFormatter(logging.Formatter):
    """A record as one ``debug.log`` line (no newline): ``ts`` (UTC, to the second), ``level``,
    ``event``, then the event's fields. A record logged directly (``logger.info("...")``) has its
    message as the event; an exception's traceback goes in ``exception``."""

    def format(self, record: logging.LogRecord) -> str:
        ts = datetime.fromtimestamp(record.created, timezone.utc).replace(microsecond=0).isoformat()
        level = getattr(record, "level_text", None) or record.levelname.lower()
        event = getattr(record, "event", None) or record.getMessage()
        line: dict[str, Any] = {"ts": ts, "level": level, "event": event, **(getattr(record, "fields", None) or {})}
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(_redacted(line), ensure_ascii=False, default=str)


def _redacted(value: Any) -> Any:
    """``value`` with credentials taken out of every URL in its strings (:mod:`mnemara.core.redact`)."""
    if isinstance(value, str):
        return redact_urls_in(value)
    if isinstance(value, dict):
        return {k: _redacted(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_redacted(v) for v in value]
    if value is None or isinstance(value, (int, float, bool)):
        return value
    return redact_urls_in(str(value))


class JsonLinesHandler(logging.Handler):
    """Appends each record to ``path`` as a JSON line (:class:`JsonLinesFormatter`). A record that
    cannot be written (a full disk, a refused link, a value JSON cannot hold) is dropped quietly:
    logging never fails the work it describes, nor prints over a terminal UI."""

    def __init__(self, path: Path, level: int = logging.NOTSET) -> None:
        super().__init__(level)
        self.path = Path(path)
        self.setFormatter(JsonLinesFormatter())
        self._file = HeldAppender(self.path)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self._file.append(self.format(record) + "\n")
        except (OSError, ValueError, TypeError):
            pass

    def close(self) -> None:
        self._file.close()
        super().close()


def _key(log_path: Path | str) -> str:
    path = str(log_path)
    return path if os.path.isabs(path) else os.path.abspath(path)


def instance_logger(log_path: Path | str) -> logging.Logger:
    """The logger of the instance whose ``debug.log`` is ``log_path`` (made on first use, with its
    :class:`JsonLinesHandler`; the same logger every time). Its name is
    ``mnemara.instance.<folder>.<8 hex of the path>``: instances of the same name in two homes
    never share one."""
    key = _key(log_path)
    logger = _loggers.get(key)
    if logger is not None:
        return logger
    with _loggers_lock:
        logger = _loggers.get(key)
        if logger is None:
            folder = Path(key).parent.name.replace(".", "_") or "instance"
            digest = hashlib.sha1(key.encode("utf-8", "surrogateescape")).hexdigest()[:8]
            logger = logging.getLogger(f"{INSTANCE_LOGGERS}.{folder}.{digest}")
            logger.setLevel(logging.DEBUG)  # every event is written, whatever the root logger's level
            logger.addHandler(JsonLinesHandler(Path(key)))
            _loggers[key] = logger
    return logger


def default_handler(logger: logging.Logger) -> JsonLinesHandler | None:
    """The handler that writes ``debug.log`` for an instance's logger (None once removed)."""
    return next((h for h in logger.handlers if isinstance(h, JsonLinesHandler)), None)


def log_event(target: LogTarget, event: str, /, level: str = "info", **fields: Any) -> None:
    """Log one event to an instance's logger (``target``: the logger, or its ``debug.log`` path).
    ``level`` is ``debug``, ``info``, ``warning``, ``error`` or ``critical``. Never raises for a
    logging failure."""
    logger = target if isinstance(target, logging.Logger) else instance_logger(target)
    levelno = LEVELS.get(level, logging.INFO)
    if logger.isEnabledFor(levelno):
        logger.log(levelno, event, extra={"event": event, "fields": fields, "level_text": level})


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
