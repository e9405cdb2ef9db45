"""The health of a headless panel (``mnemara serve``): ``<instance>/serve_health.json``.

The panel rewrites it (atomically, 0600, never through a link) when it starts, when a turn starts
and ends, and when it stops; ``mnemara peer status`` reads it and says whether a panel serves the
instance, since when, its last delivery and the turn it is running. Whether that panel is still
alive is checked against its process id, so a panel killed with ``kill -9`` is not shown as running.
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from mnemara.core import json_limits
from mnemara.core.fsutil import atomic_write_text, check_no_links

FILE_NAME = "serve_health.json"
MAX_BYTES = 64 * 1024  # a health file is a few hundred bytes; anything bigger is not ours


@dataclass
class ServeHealth:
    pid: int
    started_at: float
    source: str = ""  # where messages come from (the inbox's source line)
    delivered_turns: int = 0
    failed_turns: int = 0
    last_delivery_at: float | None = None  # when the last inbox turn completed
    last_delivery_messages: int = 0
    running_since: float | None = None  # the inbox turn in flight: when it started
    running_messages: int = 0
    stopped_at: float | None = None  # a clean stop (SIGTERM/SIGINT, --once done)
    extra: dict[str, Any] = field(default_factory=dict)


def save(root: Path, health: ServeHealth) -> None:
    atomic_write_text(Path(root) / FILE_NAME, json.dumps(asdict(health), sort_keys=True))


def load(root: Path) -> ServeHealth | None:
    """The saved health, or None (no file, a link, too big, not ours)."""
    path = Path(root) / FILE_NAME
    try:
        check_no_links(path)
        data = json_limits.load_file(path, max_bytes=MAX_BYTES)
    except (OSError, ValueError):  # ValueError: not JSON, too big or too deep (JSONRefused), not UTF-8
        return None
    if not isinstance(data, dict):
        return None
    try:
        health = ServeHealth(**{k: v for k, v in data.items() if k in ServeHealth.__dataclass_fields__})
    except TypeError:
        return None
    if not isinstance(health.pid, int) or not isinstance(health.started_at, (int, float)):
        return None
    return health


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except (OSError, OverflowError, ValueError):
        return False
    return pid > 0


def _at(stamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(stamp))


def describe(root: Path, now: float | None = None) -> list[str]:
    """Lines for ``mnemara peer status`` (one ``serve:`` line, and the last delivery and running turn)."""
    health = load(root)
    if health is None:
        path = Path(root) / FILE_NAME
        if path.exists() or path.is_symlink():
            return [f"serve: {path} is not a health record of mnemara serve (a link, too big, or not its JSON); "
                    "ignored, and rewritten when a panel serves"]
        return ["serve: no headless panel has run on this instance (mnemara serve)"]
    now = time.time() if now is None else now
    if health.stopped_at is not None:
        head = f"serve: not running (pid {health.pid} stopped cleanly at {_at(health.stopped_at)})"
    elif not alive(health.pid):
        head = f"serve: not running (pid {health.pid}, started {_at(health.started_at)}, ended without a clean stop)"
    else:
        head = f"serve: running (pid {health.pid}, since {_at(health.started_at)})"
    lines = [head, f"serve turns: {health.delivered_turns} delivered, {health.failed_turns} failed"]
    if health.last_delivery_at is not None:
        lines.append(f"last delivery: {_at(health.last_delivery_at)} ({health.last_delivery_messages} message(s), "
                     f"{max(0.0, now - health.last_delivery_at):.0f}s ago)")
    else:
        lines.append("last delivery: none yet")
    if health.running_since is not None and health.stopped_at is None and alive(health.pid):
        lines.append(f"running turn: since {_at(health.running_since)} ({health.running_messages} message(s), "
                     f"{max(0.0, now - health.running_since):.0f}s)")
    else:
        lines.append("running turn: none")
    return lines
