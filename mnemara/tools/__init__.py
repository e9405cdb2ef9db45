"""In-process tools of the ``mnemara`` MCP server, independent of the SDK.

Each tool family lives in its own module and contributes :class:`ToolSpec`
objects; ``session`` turns the enabled specs into ONE SDK MCP server named
``mnemara`` (model-facing names ``mcp__mnemara__<name>``). Handlers receive a
:class:`ToolContext` and the tool's arguments and return a JSON-able dict;
they never raise for a backend failure (``{"ok": false, "error": ...}``).
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Awaitable, Callable

if TYPE_CHECKING:
    from mnemara.config import Config
    from mnemara.instance import Instance
    from mnemara.store import TurnStore

SERVER_NAME = "mnemara"
FAMILY_MODULES: list[str] = []  # e.g. "mnemara.tools.memory_tools"; each exposes ``specs() -> list[ToolSpec]``


@dataclass
class ToolContext:
    """What a tool handler may touch."""

    instance: "Instance"
    config: "Config"
    store: "TurnStore"
    state: dict[str, Any] = field(default_factory=dict)  # per-session scratch (e.g. files read this session)


Handler = Callable[[ToolContext, dict[str, Any]], Awaitable[dict[str, Any]] | dict[str, Any]]


@dataclass(frozen=True)
class ToolSpec:
    """One tool: ``name`` (model-facing suffix), description, JSON schema, handler.

    ``policy_name`` is how permission policies name it (e.g. ``WriteMemory``);
    ``enabled`` decides from the config whether it is registered at all.
    """

    name: str
    description: str
    input_schema: dict[str, Any]
    handler: Handler
    policy_name: str = ""
    enabled: Callable[["Config"], bool] = lambda cfg: True

    @property
    def qualified_name(self) -> str:
        return f"mcp__{SERVER_NAME}__{self.name}"


def all_specs() -> list[ToolSpec]:
    out: list[ToolSpec] = []
    for module in FAMILY_MODULES:
        out.extend(importlib.import_module(module).specs())
    return out


def enabled_specs(config: "Config") -> list[ToolSpec]:
    return [s for s in all_specs() if s.enabled(config)]
