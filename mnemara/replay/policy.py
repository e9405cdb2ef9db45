"""The replay policy: ``wiki/replay_policy.md`` (or ``replay_policy_path``), plain Markdown.

Prose is free. A line of the form ``key: value`` (optionally a ``-``/``*`` list
item, optionally inside front matter) sets a knob when ``key`` is one of
:data:`KNOWN_KEYS`; everything else is ignored. List keys may repeat and take
comma-separated values. Example::

    # Replay policy
    - threshold: 4
    - exclude_categories: scratch, todo
    - protect_categories: decision
    - archive: off

A missing file means the defaults. A known key with a bad value is a
:class:`ConfigError` naming file and line; replay then changes nothing.
"""
from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from pathlib import Path

from mnemara.core.errors import ConfigError

CLUSTER_DISTANCE = 0.35
DUPLICATE_DISTANCE = 0.10
COVER_DISTANCE = 0.5

_LIST_KEYS = ("exclude_categories", "exclude_files", "exclude_text", "protect_categories")
_INT_KEYS = {"threshold": 2, "days": 1}
_FLOAT_KEYS = ("cluster_distance", "duplicate_distance", "cover_distance")
_BOOL_KEYS = ("archive", "wiki_proposals", "role_proposals")
KNOWN_KEYS = (*_INT_KEYS, *_FLOAT_KEYS, *_LIST_KEYS, *_BOOL_KEYS)
_LINE_RE = re.compile(r"^\s*(?:[-*+]\s+)?\**([A-Za-z][A-Za-z _-]*?)\**\s*:\s*(.*?)\s*$")
_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}


@dataclass
class ReplayPolicy:
    """Thresholds and exclusions; ``None`` for a number means "not set by the policy"."""

    source: str = ""
    threshold: int | None = None
    days: int | None = None
    cluster_distance: float = CLUSTER_DISTANCE
    duplicate_distance: float = DUPLICATE_DISTANCE
    cover_distance: float = COVER_DISTANCE
    exclude_categories: list[str] = field(default_factory=list)
    exclude_files: list[str] = field(default_factory=list)
    exclude_text: list[str] = field(default_factory=list)
    protect_categories: list[str] = field(default_factory=list)
    archive: bool = True
    wiki_proposals: bool = True
    role_proposals: bool = True
    settings: dict[str, str] = field(default_factory=dict)

    def excludes(self, file_name: str, category: str, text: str) -> str | None:
        """Why an atom is excluded from replay, or ``None``."""
        if category in self.exclude_categories:
            return f"category {category}"
        if any(fnmatch.fnmatch(file_name, pattern) for pattern in self.exclude_files):
            return f"file {file_name}"
        low = text.lower()
        for needle in self.exclude_text:
            if needle.lower() in low:
                return f"text contains {needle!r}"
        return None


def policy_path(wiki_dir: Path, configured: str, instance_root: Path) -> Path:
    """Where the policy lives: ``replay_policy_path`` (relative to the instance) or the wiki page."""
    if configured.strip():
        path = Path(configured).expanduser()
        return path if path.is_absolute() else instance_root / path
    return wiki_dir / "replay_policy.md"


def read_policy(path: Path) -> ReplayPolicy:
    """Parse the policy at ``path``; a missing file gives the defaults."""
    if not path.exists():
        return ReplayPolicy()
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: replay policy is not valid UTF-8 (byte {exc.start})") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read replay policy: {exc.strerror or exc}") from None
    return parse_policy(text, str(path))


def parse_policy(text: str, source: str = "replay_policy.md") -> ReplayPolicy:
    policy = ReplayPolicy(source=source)
    for number, line in enumerate(text.splitlines(), start=1):
        match = _LINE_RE.match(line)
        if not match:
            continue
        key = re.sub(r"[\s-]+", "_", match.group(1).strip().lower())
        if key not in KNOWN_KEYS:
            continue
        value = match.group(2).strip().strip("`").strip()
        _apply(policy, key, value, f"{source} line {number}")
        policy.settings[key] = value
    if policy.duplicate_distance > policy.cluster_distance:
        raise ConfigError(
            f"{source}: duplicate_distance ({policy.duplicate_distance}) must not exceed "
            f"cluster_distance ({policy.cluster_distance})"
        )
    return policy


def _apply(policy: ReplayPolicy, key: str, value: str, where: str) -> None:
    if key in _INT_KEYS:
        low = _INT_KEYS[key]
        if not re.fullmatch(r"\d{1,6}", value) or int(value) < low:
            raise ConfigError(f"{where}: {key} must be a whole number >= {low}, got {value!r}")
        setattr(policy, key, int(value))
    elif key in _FLOAT_KEYS:
        try:
            number = float(value)
        except ValueError:
            number = -1.0
        if not 0.0 <= number <= 1.0:
            raise ConfigError(f"{where}: {key} must be a number between 0 and 1, got {value!r}")
        setattr(policy, key, number)
    elif key in _BOOL_KEYS:
        if value.lower() not in _TRUE | _FALSE:
            raise ConfigError(f"{where}: {key} must be on/off (yes/no, true/false), got {value!r}")
        setattr(policy, key, value.lower() in _TRUE)
    else:
        items = [item.strip().strip("\"'`") for item in value.split(",")]
        getattr(policy, key).extend(item for item in items if item)
