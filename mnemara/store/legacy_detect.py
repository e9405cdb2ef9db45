"""Which files of an instance folder are still in Mnemara 0.18's format (read-only checks)."""
from __future__ import annotations

from mnemara.core import json_limits
import sqlite3
from pathlib import Path

#: 0.18's peer watermark file (a bare integer) and ours (JSON naming the database).
LEGACY_WATERMARK = "peer_poll_watermark"
#: Keys only 0.18 writes; any of them in a config without ``schema_version`` marks a 0.18 file.
LEGACY_ONLY_KEYS = frozenset({
    "auto_evict_tool_use_blocks", "replay_cluster_within_category", "v2_role", "prompt_caching",
    "mud_host", "mud_port", "mud_account", "mud_password", "mud_character",
})


def legacy_config(raw: object) -> bool:
    """A config dict 0.18 wrote: no ``schema_version`` and a 0.18-only key or its ``null`` silent types."""
    if not isinstance(raw, dict) or "schema_version" in raw:
        return False
    return bool(LEGACY_ONLY_KEYS & raw.keys()) or ("peer_poll_silent_types" in raw and raw["peer_poll_silent_types"] is None)


def legacy_turns(path: Path) -> bool:
    """``turns.sqlite`` with 0.18's schema (a ``turns`` table with ``ts`` and no ``meta`` table)."""
    path = Path(path)
    if not path.is_file() or path.stat().st_size == 0:
        return False
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            if "turns" not in tables or "meta" in tables:
                return False
            cols = {r[1] for r in conn.execute("PRAGMA table_info(turns)")}
        finally:
            conn.close()
    except sqlite3.DatabaseError:
        return False
    return {"ts", "role", "content"} <= cols


def readable_store(path: Path) -> bool:
    """Whether ``turns.sqlite`` is missing/empty, one of ours, or 0.18's (anything else: damaged or foreign)."""
    path = Path(path)
    if not path.is_file() or path.stat().st_size == 0 or legacy_turns(path):
        return True
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return dict(conn.execute("SELECT key, value FROM meta")).get("app") == "mnemara-turns"
        finally:
            conn.close()
    except sqlite3.DatabaseError:
        return False


def legacy_permissions(raw: object) -> bool:
    """0.18's ``{"Bash": {"allowed_patterns": [...]}}`` (ours is ``{"allowed_patterns": {"Bash": [...]}}``)."""
    if not isinstance(raw, dict):
        return False
    return any(isinstance(v, dict) and "allowed_patterns" in v for k, v in raw.items() if k != "allowed_patterns")


def _read_json(path: Path) -> object:
    try:
        return json_limits.load_file(path)
    except (OSError, ValueError):
        return None


def legacy_parts(root: Path) -> list[str]:
    """Names of the files of ``root`` still in 0.18's format (empty: nothing to migrate)."""
    root = Path(root)
    parts = []
    if legacy_config(_read_json(root / "config.json")):
        parts.append("config.json")
    if legacy_turns(root / "turns.sqlite"):
        parts.append("turns.sqlite")
    if legacy_permissions(_read_json(root / "permissions.json")):
        parts.append("permissions.json")
    if (root / LEGACY_WATERMARK).is_file():
        parts.append(LEGACY_WATERMARK)
    return parts
