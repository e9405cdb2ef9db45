"""Log each kind of peer-poll trouble once, and its recovery once.

A poller that runs every few seconds must not fill ``debug.log`` with the same
"file missing" line. Each problem has a key; it is logged the first time it is
reported, and again only after it cleared (``peer_poll_recovered`` is logged when
it clears).
"""
from __future__ import annotations

import logging

from mnemara.core.debuglog import log_event

PROBLEM_EVENT = "peer_poll_problem"
RECOVERED_EVENT = "peer_poll_recovered"


class ProblemLog:
    def __init__(self, log: logging.Logger | None) -> None:
        self._log = log
        self._active: dict[str, str] = {}
        self._seen_once: set[str] = set()

    @property
    def active(self) -> dict[str, str]:
        """Problems reported and not cleared yet: ``{key: message}``."""
        return dict(self._active)

    def report(self, key: str, message: str, **fields: object) -> bool:
        """Record problem ``key``; write it to the log unless it is already active. True if logged."""
        if key in self._active:
            return False
        self._active[key] = message
        self._write(PROBLEM_EVENT, "warning", problem=key, message=message, **fields)
        return True

    def clear(self, *keys: str) -> None:
        """Mark problems resolved (logs one recovery line for each that was active)."""
        for key in keys:
            if self._active.pop(key, None) is not None:
                self._write(RECOVERED_EVENT, "info", problem=key)

    def once(self, key: str, message: str, **fields: object) -> bool:
        """Log a one-off fact (e.g. one malformed row) exactly once per key for this runner's life."""
        if key in self._seen_once:
            return False
        self._seen_once.add(key)
        self._write(PROBLEM_EVENT, "warning", problem=key, message=message, **fields)
        return True

    def _write(self, event: str, level: str, **fields: object) -> None:
        if self._log is not None:
            log_event(self._log, event, level, **fields)
