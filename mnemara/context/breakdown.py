"""Where the input tokens of the next turn go, for the context viewer's bars.

Pure computation (no Textual; the context viewer and the agent's inspect_context share it): tool schemas, role doc, file manifest, pinned
rows and the working window, each an estimate in tokens, against the window's
token cap. Estimates use :mod:`mnemara.core.tokens` (about four characters a token).
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from mnemara.core.config import Config
from mnemara.store.rows import Window
from mnemara.core.tokens import estimate_text

# Claude Code's own definitions of the built-in tools are not visible to us; this is
# a rough size of one built-in tool schema as the CLI sends it, for the bar only.
BUILTIN_TOOL_TOKENS = 600


@dataclass(frozen=True)
class Part:
    name: str
    tokens: int
    note: str = ""


@dataclass(frozen=True)
class Breakdown:
    parts: tuple[Part, ...]
    cap: int

    @property
    def total(self) -> int:
        return sum(p.tokens for p in self.parts)


class DescribedTool(Protocol):
    """What the estimate reads of an in-process tool (a :class:`mnemara.tools.ToolSpec`)."""

    @property
    def qualified_name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def input_schema(self) -> dict[str, Any]: ...


def tool_schema_tokens(specs: Sequence[DescribedTool], native: Sequence[str]) -> tuple[int, str]:
    """Estimate of the tool definitions sent with each request (the built-ins ``native``, the config's
    ``native_tools``, and ``specs``, the in-process tools the config registers:
    ``mnemara.tools.enabled_specs``), with a note saying what was counted."""
    ours = sum(
        estimate_text(s.qualified_name + s.description + json.dumps(s.input_schema, sort_keys=True)) for s in specs
    )
    builtin = BUILTIN_TOOL_TOKENS * len(native)
    return ours + builtin, f"{len(native)} built-in + {len(specs)} mnemara (est.)"


def compute(config: Config, window: Window, role_text: str, manifest_text: str = "", *,
            tools: Sequence[DescribedTool], carried: int = 0) -> Breakdown:
    """The parts of the next turn's input; ``tools``: the in-process tools ``config`` registers;
    ``carried``: when the kept CLI continues its conversation, the tokens of the slots and per-turn
    blocks earlier turns' messages were sent with, which the model still sees
    (:class:`~mnemara.context.continuation.Conversation`)."""
    tools_tokens, tools_note = tool_schema_tokens(tools, config.native_tools)
    manifest_note = "" if config.file_stat_manifest_enabled else "off"
    parts: tuple[Part, ...] = (
        Part("tool schemas", tools_tokens, tools_note),
        Part("role doc", estimate_text(role_text)),
        Part("manifest", estimate_text(manifest_text), manifest_note),
        Part("pinned rows", sum(t.tokens for t in window.pinned), f"{len(window.pinned)} rows"),
        Part("working window", sum(t.tokens for t in window.rows), f"{len(window.rows)} rows"),
    )
    if carried:
        parts += (Part("continued conversation", carried, "earlier turns' slots and per-turn blocks, still sent"),)
    return Breakdown(parts, config.max_window_tokens)
