"""In-process tools of the ``mnemara`` MCP server, independent of the SDK.

Each tool family lives in its own module of this package (discovered, no list
to edit) and exposes ``specs() -> list[ToolSpec]``, contributing :class:`ToolSpec`
objects; ``session`` turns the enabled specs into ONE SDK MCP server named
``mnemara`` (model-facing names ``mcp__mnemara__<name>``). Handlers receive a
:class:`ToolContext` and the tool's arguments and return a JSON-able dict;
a refusal or a backend failure is an answer (``{"ok": false, "error": ...}``), never an exception.

Per-session objects the tools and turn parts share (the file tracker, the
memory backends) live in :class:`~mnemara.context.tool_state.ToolState`, one typed field each.

Declare a tool with :func:`mnemara.tools.declare.declare`: its arguments are a
pydantic model (:class:`mnemara.tools.declare.ToolArgs`) that gives the JSON
schema, the validation and the error text; the handler gets the validated model
and refuses by raising :class:`mnemara.core.errors.MnemaraError` (declare answers it).
"""
from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Awaitable, Callable

from mnemara.context.tool_state import ToolState
from mnemara.core.mcp_names import SERVER_NAME
from mnemara.guard.tool_catalogue import CATALOGUE, AskContext, always

if TYPE_CHECKING:
    from mnemara.core.config import Config
    from mnemara.core.live_config import LiveConfig
    from mnemara.store.instance import Instance
    from mnemara.store.turns import TurnStore



@dataclass
class ToolContext:
    """What a tool handler may touch."""

    instance: "Instance"
    live: "LiveConfig"  # the session's one live config (read, never copied)
    store: "TurnStore"
    state: ToolState = field(default_factory=ToolState)  # shared by the session's tools and turn parts
    cwd: str = ""  # the session's working folder: a relative file argument is read from here, as the gate judged it

    @property
    def config(self) -> "Config":
        """The live config as it is now."""
        return self.live.current

    def update_config(self, **changes: Any) -> "Config":
        """Save config.json changes through the live config (validated; every holder sees them)."""
        return self.live.update(**changes)


Handler = Callable[[ToolContext, dict[str, Any]], Awaitable[dict[str, Any]] | dict[str, Any]]


@dataclass(frozen=True)
class ToolSpec:
    """One tool: ``name`` (model-facing suffix), description, JSON schema, handler.

    The fields after ``handler`` come from the tool's entry in :mod:`mnemara.guard.tool_catalogue`,
    which the permission gate reads without importing the tools.
    ``policy_name`` is how permission policies name it (e.g. ``WriteMemory``);
    ``enabled`` decides from the config whether it is registered at all.
    ``file_args``: the arguments naming a file the tool reads, in the order the tool
    picks the first one given. Such a tool is a file tool to the permission gate:
    the Read policy governs it too, and its path is checked like Read's
    (``$HOME`` only, no per-process paths, pipes or devices).
    ``call_policy``: for a tool whose calls differ in what they may do, the policy name
    governing one call, from its raw input ("" for the tool's own): ``graph_query``
    with ``write`` set is a ``GraphWrite`` call, so denying GraphWrite denies it.
    ``asks``: why one call needs the user's yes even where its policy allows the tool ("" when it
    does not), from the session's :class:`ToolContext` and the raw input: ``unpin_row`` on a row
    the user pinned asks first.
    """

    name: str
    description: str
    input_schema: dict[str, Any]
    handler: Handler
    policy_name: str = ""
    enabled: Callable[["Config"], bool] = always
    file_args: tuple[str, ...] = ()
    call_policy: Callable[[Mapping[str, Any]], str] | None = None
    asks: Callable[[AskContext, Mapping[str, Any]], str] | None = None

    @property
    def qualified_name(self) -> str:
        return f"mcp__{SERVER_NAME}__{self.name}"


def all_specs() -> list[ToolSpec]:
    """Every tool of every family module, sorted by name."""
    out: list[ToolSpec] = []
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        if hasattr(module, "specs"):
            out.extend(module.specs())
    return sorted(out, key=lambda s: s.name)


def enabled_specs(config: "Config") -> list[ToolSpec]:
    return [s for s in all_specs() if s.enabled(config)]


def enabled_tool_names(config: "Config") -> list[str]:
    """The names of :func:`enabled_specs`, sorted, from the tool catalogue alone: no tool module is asked for
    its specs (building them, schemas copied, costs about a millisecond; the catalogue test keeps both alike)."""
    return sorted(e.name for e in CATALOGUE if e.enabled(config))
