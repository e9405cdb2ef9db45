"""Per-session usage: turns, tokens, prompt-cache hits, cost, tools, written to ``stats/``.

A turn's tokens and cost are those of its :class:`~mnemara.core.events.TurnDone`, which the session
fills from the spend ledger (every API call the recorder relayed, a stopped or failed turn's too;
:mod:`mnemara.session.spend`), not from the CLI's own result.

One file per session, ``stats/<start time>-<pid>.json``, rewritten atomically after
every turn (a crash loses at most the turn in flight; two panels never share a
file). ``/stats`` shows the running session and the totals of every file there.
"""
from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from mnemara.core import events as ev
from mnemara.core.fsutil import atomic_write_text, private_mkdir
from mnemara.core.pricing import PRICES_AS_OF

COUNTERS = ("turns", "failed_turns", "tokens_in", "tokens_out", "cache_read_tokens", "cache_write_tokens")


@dataclass
class SessionStats:
    started_at: str = field(default_factory=lambda: datetime.now(timezone.utc).isoformat(timespec="seconds"))
    ended_at: str = ""
    turns: int = 0
    failed_turns: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float = 0.0
    tools_called: dict[str, int] = field(default_factory=dict)

    def observe(self, event: ev.Event) -> bool:
        """Count one turn event; True when a turn just ended (time to save)."""
        if isinstance(event, ev.ToolUse):
            self.tools_called[event.name] = self.tools_called.get(event.name, 0) + 1
            return False
        if not isinstance(event, ev.TurnDone):
            return False
        usage = event.usage or {}
        self.turns += 1
        self.failed_turns += 1 if event.error else 0
        self.tokens_in += _int(usage.get("input_tokens"))
        self.tokens_out += _int(usage.get("output_tokens"))
        self.cache_read_tokens += _int(usage.get("cache_read_input_tokens"))
        self.cache_write_tokens += _int(usage.get("cache_creation_input_tokens"))
        self.cost_usd += float(event.cost_usd or 0)
        self.ended_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
        return True

    @property
    def cache_hit_ratio(self) -> float:
        """Share of the input read from the prompt cache."""
        total = self.tokens_in + self.cache_read_tokens + self.cache_write_tokens
        return self.cache_read_tokens / total if total else 0.0

    def lines(self, title: str) -> list[str]:
        tools = ", ".join(f"{k} {v}" for k, v in sorted(self.tools_called.items(), key=lambda kv: -kv[1])) or "none"
        return [
            f"{title}: {self.turns} turns ({self.failed_turns} failed), ${self.cost_usd:.4f} "
            f"(list prices of {PRICES_AS_OF})",
            f"  tokens: {self.tokens_in} in, {self.tokens_out} out; prompt cache: {self.cache_read_tokens} read, "
            f"{self.cache_write_tokens} written ({self.cache_hit_ratio:.0%} of input from cache)",
            f"  tools: {tools}",
        ]


def _int(value: object) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


class StatsFile:
    """The running session's stats and its file under ``stats/``."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self.current = SessionStats()
        stamp = self.current.started_at.replace(":", "").replace("-", "").replace("+0000", "Z")
        self.path = self.folder / f"{stamp}-{os.getpid()}.json"

    def observe(self, event: ev.Event) -> None:
        if self.current.observe(event):
            try:
                private_mkdir(self.folder)
                atomic_write_text(self.path, json.dumps(asdict(self.current), indent=2) + "\n")
            except OSError:
                pass  # stats never fail a turn

    def totals(self) -> tuple[SessionStats, int, list[str]]:
        """The sum of every session file (this one included), how many, and files that could not be read."""
        total, count, bad = SessionStats(started_at=""), 0, []
        for path in sorted(self.folder.glob("*.json")) if self.folder.is_dir() else []:
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                for key in COUNTERS:
                    setattr(total, key, getattr(total, key) + _int(data.get(key)))
                total.cost_usd += float(data.get("cost_usd") or 0)
                for name, n in (data.get("tools_called") or {}).items():
                    total.tools_called[str(name)] = total.tools_called.get(str(name), 0) + _int(n)
                count += 1
            except (OSError, ValueError, TypeError, AttributeError):
                bad.append(path.name)
        return total, count, bad
