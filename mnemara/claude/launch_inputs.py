"""What a CLI's launch takes from config.json, and a record of it so the early start needs no pydantic.

:func:`of` reads a validated :class:`~mnemara.core.config.Config` into
:class:`LaunchInputs` (the role doc's path, the model, the ``--mcp-config``
servers, the environment entries); the early start and the session's check
before a first message goes early both build the launch spec from it
(:func:`~mnemara.claude.early.session_spec`), so they cannot compute it two ways.

Importing ``Config`` (pydantic) costs about 60 ms before the early CLI could be
spawned, so :func:`recorded` answers the inputs the last validation of the same
config.json bytes gave, kept in the user's cache folder; the key also holds
``$HOME`` and the modules that turn a config into inputs (a Mnemara update
validates again). A stale record can only make the early process another one
than the session's: it is then not used, as any mismatch.
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mnemara.claude.child_guard import cache_dir, read_cached_json, write_cached_json

if TYPE_CHECKING:
    from mnemara.core.config import Config

FILE_NAME = "early-launch.json"
_KEPT = 8  # records kept (one per distinct config.json)
_PACKAGE = Path(__file__).resolve().parents[1]
_SOURCES = ("core/config.py", "claude/options.py", "claude/faults.py", "claude/additions.py", "claude/child_guard.py",
            "claude/launch_inputs.py")


@dataclass(frozen=True)
class LaunchInputs:
    """What a launch takes from the config (JSON-able)."""

    role_doc_path: str
    model: str | None
    servers: dict[str, dict[str, Any]]  # the --mcp-config servers
    env: dict[str, str]  # launch_env(): Bash timeouts, retries, the child guard's, the quiet flags
    request_log_calls: int


def of(cfg: Config, with_tools: bool | None = None) -> LaunchInputs:
    """The inputs for ``cfg`` (``with_tools`` as in :func:`~mnemara.claude.options.cli_servers`)."""
    from mnemara.claude.options import cli_servers, launch_env

    return LaunchInputs(str(cfg.role_doc_path), cfg.model, cli_servers(cfg, with_tools=with_tools), launch_env(cfg),
                        int(cfg.request_log_calls))


def _key(config_bytes: bytes) -> str:
    digest = hashlib.sha256(config_bytes)
    digest.update(os.environ.get("HOME", "").encode("utf-8", "surrogateescape"))
    for name in _SOURCES:
        try:
            info = (_PACKAGE / name).stat()
            digest.update(f"{name}:{info.st_mtime_ns}:{info.st_size}".encode())
        except OSError:
            digest.update(f"{name}:missing".encode())
    return digest.hexdigest()


def _path() -> Path:
    return cache_dir() / FILE_NAME


def _read() -> dict[str, Any]:
    return read_cached_json(_path())


def recorded(config_bytes: bytes) -> LaunchInputs | None:
    """The inputs the last validation of exactly these config.json bytes gave (None when not recorded)."""
    entry = _read().get(_key(config_bytes))
    try:
        return LaunchInputs(**entry) if isinstance(entry, dict) else None
    except TypeError:
        return None


def record(config_bytes: bytes, inputs: LaunchInputs) -> None:
    """Keep ``inputs`` for these config.json bytes (the latest few configs only)."""
    data = _read()
    key = _key(config_bytes)
    data.pop(key, None)
    data[key] = asdict(inputs)
    kept = dict(list(data.items())[-_KEPT:])
    write_cached_json(_path(), kept)  # none kept: the next early start validates the config first
