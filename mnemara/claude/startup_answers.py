"""What the SDK answered a CLI's start-up messages, kept so the next early CLI is answered without the SDK.

A Claude CLI asks Mnemara's in-process MCP server for its handshake and its
tool list before it sends the first request to the API; without an answer the
request waits for ``import claude_agent_sdk``. The answers are a function of
the server's tools and of the SDK and ``mcp`` versions only, so
:class:`~mnemara.claude.adopted.AdoptedTransport` records the SDK's own answers,
and the next ``mnemara run`` hands them to its early CLI
(:class:`~mnemara.claude.early_channel.EarlyChannel`) when the key (:func:`tools_key`:
those versions and every enabled tool's name, description and input schema)
is the same. When the SDK then adopts the process, the answers given early
are asked of the SDK again and compared (a difference is logged and replaces
the record). Before they are handed over, the recorded tool list is compared
with the current tools (:func:`misfit`: each tool's name, description and input
schema, in order): a record edited by hand or planted is dropped and logged
before the first request, never sent in it.

The file also says which SDK version the early start's own copies of the SDK's
wire format (the command line, the environment, ``initialize`` and the user
message line) were checked against on this machine: a first message is sent
before the SDK is imported only for that version (:func:`verified`).

It lives next to the CLI launcher, in the user's private cache folder.
"""
from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mnemara.core.mcp_names import SERVER_NAME

from mnemara.claude.child_guard import cache_dir, read_cached_json, write_cached_json

if TYPE_CHECKING:
    from mnemara.tools import ToolSpec

FILE_NAME = "cli-startup.json"


def cache_path() -> Path:
    return cache_dir() / FILE_NAME


@functools.cache
def sdk_version() -> str:
    """The installed claude-agent-sdk's version, read without importing it (once per process: the first
    turn asks it for the early message, the adoption and the tools key)."""
    import importlib.util
    import re

    spec = importlib.util.find_spec("claude_agent_sdk")
    if spec is not None and spec.submodule_search_locations:
        version_file = Path(next(iter(spec.submodule_search_locations))) / "_version.py"
        try:
            match = re.search(r"""__version__\s*=\s*["']([^"']+)["']""", version_file.read_text(encoding="utf-8"))
        except OSError:
            match = None
        if match:
            return match.group(1)
    return ""


@functools.cache
def mcp_version() -> str:
    """The installed ``mcp`` package's version, from its ``dist-info`` folder beside it ("" when unknown;
    ``importlib.metadata`` would cost 20 ms of the first message's path)."""
    import importlib.util

    spec = importlib.util.find_spec("mcp")
    if spec is None or not spec.submodule_search_locations:
        return ""
    folder = Path(next(iter(spec.submodule_search_locations))).parent
    names = sorted(p.name for p in folder.glob("mcp-*.dist-info"))
    return names[0][len("mcp-"):-len(".dist-info")] if len(names) == 1 else ""


def tools_key(specs: list[ToolSpec], sdk_version: str, mcp: str) -> str:
    """Everything the SDK's answers to the start-up messages are made from."""
    material = {"server": SERVER_NAME, "sdk": sdk_version, "mcp": mcp,
                "tools": [[s.name, s.description, s.input_schema] for s in specs]}
    return hashlib.sha256(json.dumps(material, sort_keys=True, default=str).encode()).hexdigest()


def _read(path: Path | None = None) -> dict[str, Any]:
    return read_cached_json(path or cache_path())


def _write(data: dict[str, Any], path: Path | None = None) -> None:
    write_cached_json(path or cache_path(), data)  # none kept: the next early CLI waits for the SDK's answers


def load(key: str) -> dict[str, dict[str, Any]]:
    """The recorded answers for ``key`` (request key -> mcp_response without its id); {} when none."""
    data = _read()
    answers = data.get("answers")
    if data.get("key") != key or not isinstance(answers, dict):
        return {}
    return {k: v for k, v in answers.items() if isinstance(k, str) and isinstance(v, dict)}


def misfit(answers: dict[str, dict[str, Any]], specs: list[ToolSpec]) -> str | None:
    """Why the recorded answers do not list exactly the tools of ``specs`` (None when they do, or list none)."""
    wanted = [[s.name, s.description, s.input_schema] for s in specs]
    for request, answer in answers.items():
        try:
            method = json.loads(request).get("method")
        except (ValueError, AttributeError, RecursionError):
            return "a start-up request that is not an MCP message"
        if method != "tools/list":
            continue
        result = answer.get("result")
        tools = result.get("tools") if isinstance(result, dict) else None
        if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools):
            return "the recorded tools/list answer holds no tool list"
        listed = [[t.get("name"), t.get("description"), t.get("inputSchema")] for t in tools]
        if listed != wanted:
            names = {str(t[0]) for t in listed} ^ {s.name for s in specs}
            return "the recorded tool list is not the current tools (" + (
                ", ".join(sorted(names))[:200] if names else "a description or input schema differs") + ")"
    return None


def drop_answers() -> None:
    """Take the recorded answers out (the wire-format check stays)."""
    data = _read()
    if "answers" in data or "key" in data:
        _write({k: v for k, v in data.items() if k not in ("answers", "key")})


def record(key: str, request_key: str, response: dict[str, Any]) -> bool:
    """Keep the SDK's answer to one start-up message for ``key``; True when it differs from what was kept."""
    data = _read()
    answers = data.get("answers") if data.get("key") == key else None
    answers = dict(answers) if isinstance(answers, dict) else {}
    clean = {k: v for k, v in response.items() if k != "id"}
    if answers.get(request_key) == clean:
        return False
    changed = request_key in answers
    answers[request_key] = clean
    _write({**data, "key": key, "answers": answers})
    return changed


def verified(sdk_version: str) -> bool:
    """Were the early start's copies of the SDK's wire format found exact for ``sdk_version`` here?"""
    return bool(sdk_version) and _read().get("verified_sdk") == sdk_version


def mark_verified(sdk_version: str) -> None:
    data = _read()
    if data.get("verified_sdk") != sdk_version:
        _write({**data, "verified_sdk": sdk_version})


def forget_verified() -> None:
    """A copy was found wrong: no first message goes out before the SDK is imported until checked again."""
    data = _read()
    if "verified_sdk" in data:
        _write({k: v for k, v in data.items() if k != "verified_sdk"})
