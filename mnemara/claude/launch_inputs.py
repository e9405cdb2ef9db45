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

A record is data, not code: the agent's tools may not write the cache folder
(:mod:`mnemara.guard.guarded_files`), and still a recorded launch is used only
when :func:`fits` finds it equal to what config.json itself says would be
launched now (the MCP servers' commands, arguments and environments, the model,
the environment entries, whether a spend cap is set); otherwise it is dropped (:func:`drop`) and logged,
and the config is validated as if nothing were recorded.
"""
from __future__ import annotations

import hashlib
import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mnemara.claude.additions import CACHE_TTL_ENV, QUIET_ENV, RETRY_ENV
from mnemara.claude.child_guard import PARENT_ENV, cache_dir, read_cached_json, write_cached_json
from mnemara.core import json_limits
from mnemara.core.mcp_names import SERVER_NAME
from mnemara.core.native_tools import DEFAULT_NATIVE_TOOLS, NATIVE_TOOLS
from mnemara.guard.budget import FIELDS as CAP_FIELDS

if TYPE_CHECKING:
    from mnemara.core.config import Config

FILE_NAME = "early-launch.json"
_KEPT = 8  # records kept (one per distinct config.json)
_PACKAGE = Path(__file__).resolve().parents[1]
_SOURCES = ("core/config.py", "core/native_tools.py", "claude/options.py", "claude/faults.py", "claude/additions.py", "claude/child_guard.py",
            "claude/launch_inputs.py")


@dataclass(frozen=True)
class LaunchInputs:
    """What a launch takes from the config (JSON-able)."""

    role_doc_path: str
    model: str | None
    servers: dict[str, dict[str, Any]]  # the --mcp-config servers
    env: dict[str, str]  # launch_env(): Bash timeouts, retries, the child guard's, the quiet flags
    request_log_calls: int
    native_tools: list[str]  # the built-in tools offered (``--tools``)
    #: A spend cap is set: the CLI goes through the recorder's gate even with ``request_log_calls`` 0.
    spend_capped: bool


def of(cfg: Config, with_tools: bool | None = None) -> LaunchInputs:
    """The inputs for ``cfg`` (``with_tools`` as in :func:`~mnemara.claude.options.cli_servers`)."""
    from mnemara.claude.options import cli_servers, launch_env

    return LaunchInputs(str(cfg.role_doc_path), cfg.model, cli_servers(cfg, with_tools=with_tools), launch_env(cfg),
                        int(cfg.request_log_calls), list(cfg.native_tools),
                        any(getattr(cfg, name) is not None for name in CAP_FIELDS.values()))


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


#: A model name as an argument: it cannot be taken for an option of the CLI.
_MODEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@/\[\]-]{0,127}$")
_MS_ENTRIES = ("BASH_DEFAULT_TIMEOUT_MS", "BASH_MAX_TIMEOUT_MS")


def fits(inputs: LaunchInputs, config: Any) -> str | None:
    """Why the recorded ``inputs`` are not what ``config`` (config.json as parsed JSON) launches now, or
    None when they are: the MCP servers (command, arguments, environment), the model, the environment
    entries. Read without pydantic; a doubt answers a reason (the config is then validated again)."""
    if not isinstance(config, dict):
        return "config.json is not an object"
    servers = config.get("mcp_servers", [])
    servers = [servers] if isinstance(servers, dict) else servers
    if not isinstance(servers, list) or not all(isinstance(s, dict) for s in servers):
        return "mcp_servers is not a list of servers"
    wanted = {s.get("name"): {"type": "stdio", "command": s.get("command"), "args": list(s.get("args") or []),
                              "env": dict(s.get("env") or {})} for s in servers}
    recorded = dict(inputs.servers)
    own = recorded.pop(SERVER_NAME, None)
    if own is not None and own != {"type": "sdk", "name": SERVER_NAME}:
        return f"the {SERVER_NAME} server is not the in-process one"
    if recorded != wanted:
        return "MCP servers: " + ", ".join(sorted(str(n) for n in recorded.keys() ^ wanted.keys()
                                                 or {n for n in wanted if recorded[n] != wanted[n]}))[:200]
    native = config.get("native_tools", list(DEFAULT_NATIVE_TOOLS))
    if not isinstance(inputs.native_tools, list) or native != inputs.native_tools or not all(
            name in NATIVE_TOOLS for name in inputs.native_tools):
        return "native_tools"
    if inputs.spend_capped is not any(config.get(name) is not None for name in CAP_FIELDS.values()):
        return "spend caps"  # a record without the caps would start the early CLI past the spend gate
    model = config.get("model")
    if not isinstance(inputs.model, str) or not _MODEL.match(inputs.model) or (
            isinstance(model, str) and model != inputs.model):
        return "model"
    return _env_misfit(inputs.env, config)


def _env_misfit(env: Any, config: dict[str, Any]) -> str | None:
    if not isinstance(env, dict):
        return "environment"
    allowed = {*_MS_ENTRIES, RETRY_ENV, PARENT_ENV, CACHE_TTL_ENV, *QUIET_ENV}
    extra = sorted(str(k) for k in env if k not in allowed)
    if extra:
        return "environment: " + ", ".join(extra)[:200]
    if any(env.get(k) != v for k, v in QUIET_ENV.items()):
        return "environment: " + ", ".join(QUIET_ENV)
    numbers = {k: env[k] for k in (*_MS_ENTRIES, RETRY_ENV, PARENT_ENV) if k in env}
    if not all(isinstance(v, str) and v.isdigit() for v in numbers.values()) or set(_MS_ENTRIES) - set(numbers):
        return "environment: " + ", ".join(sorted(numbers) or _MS_ENTRIES)
    seconds = config.get("bash_timeout_seconds")
    if isinstance(seconds, int) and any(env[k] != str(seconds * 1000) for k in _MS_ENTRIES):
        return "environment: " + ", ".join(_MS_ENTRIES)
    retries = config.get("api_max_retries")
    if isinstance(retries, int) and RETRY_ENV in env and env[RETRY_ENV] != str(retries):
        return f"environment: {RETRY_ENV}"
    if CACHE_TTL_ENV in env and env[CACHE_TTL_ENV] != config.get("cache_ttl", "5m"):
        return f"environment: {CACHE_TTL_ENV}"
    return None


def drop(config_bytes: bytes) -> None:
    """Take the record of these config.json bytes out of the cache folder (the others stay)."""
    data = _read()
    if data.pop(_key(config_bytes), None) is not None:
        write_cached_json(_path(), data)


def parse_config(config_bytes: bytes) -> Any:
    """config.json's bytes as JSON for :func:`fits` (None when they are not JSON: then nothing fits)."""
    try:
        return json_limits.loads(config_bytes.decode("utf-8"))
    except ValueError:
        return None
