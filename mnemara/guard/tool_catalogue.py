"""The catalogue of Mnemara's in-process tools: what the permission layer judges a call on.

One :class:`ToolEntry` per tool of the ``mnemara`` MCP server: its name, the policy name that
governs it, whether the config registers it, the arguments naming a file it reads, the policy of
one call and why one call needs the user's yes. The gate, the effective-permission probes and
:mod:`mnemara.tools` all read it here, so the gate never imports the tools (which are built on
the gate, the context and memory) and a tool module that fails to load cannot blind the gate.

:func:`mnemara.tools.declare.declare` takes a tool's entry from here by its name; the tool modules
keep its description, arguments and handler.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from mnemara.core.config import Config
from mnemara.core.errors import UsageError
from mnemara.core.mcp_names import SERVER_NAME
from mnemara.store.turns import TurnStore


class AskContext(Protocol):
    """What a tool's ask check reads: the session's store (a :class:`mnemara.tools.ToolContext`)."""

    store: TurnStore


def always(config: Config) -> bool:
    """The default of :attr:`ToolEntry.enabled`: registered under every config."""
    return True


@dataclass(frozen=True)
class ToolEntry:
    """One in-process tool as the permission layer sees it (see :class:`mnemara.tools.ToolSpec`)."""

    name: str  # the model-facing suffix: mcp__mnemara__<name>
    policy_name: str = ""  # how permission policies name it ("WriteMemory"); "" for none of its own
    enabled: Callable[[Config], bool] = always  # whether the config registers it at all
    file_args: tuple[str, ...] = ()  # the arguments naming a file it reads, in the order it picks one
    call_policy: Callable[[Mapping[str, Any]], str] | None = None  # the policy of one call, from its raw input
    asks: Callable[[AskContext, Mapping[str, Any]], str] | None = None  # why one call needs the user's yes

    @property
    def qualified_name(self) -> str:
        return f"mcp__{SERVER_NAME}__{self.name}"


#: The arguments naming the file ``read_skeleton`` reads (the first one given).
SKELETON_FILE_ARGS = ("file_path", "path")


def _rag_on(config: Config) -> bool:
    return bool(config.rag_enabled)


def _graph_on(config: Config) -> bool:
    return bool(config.graph_enabled)


def _skeleton_on(config: Config) -> bool:
    return bool(config.read_skeleton_enabled)


def _nats_inbox(config: Config) -> bool:
    return config.peer_transport == "nats" and bool(config.peer_poll_enabled)


def _graph_query_policy(raw: Mapping[str, Any]) -> str:
    """A query that may write is governed by GraphWrite, like graph_add_node (any true-ish ``write`` counts)."""
    return "GraphWrite" if raw.get("write") else ""


def users_pin(ctx: AskContext, raw: Mapping[str, Any]) -> str:
    """``unpin_row`` asks first when the row is a pin the user made (the agent's own pins it may undo)."""
    row_id = raw.get("row_id")
    if not isinstance(row_id, int) or isinstance(row_id, bool):
        return ""
    try:
        turn = ctx.store.get(row_id)
    except UsageError:
        return ""
    if not turn.pinned or turn.pinned_by_agent:
        return ""
    return f"the agent wants to unpin row {row_id} (slot {turn.pin_label!r}), which you pinned"


CATALOGUE: tuple[ToolEntry, ...] = (
    # the window (mnemara.tools.window_tools)
    ToolEntry("inspect_context", "InspectContext"),
    ToolEntry("list_window", "ListWindow"),
    ToolEntry("list_pinned", "ListPinned"),
    ToolEntry("pin_row", "PinRow"),
    ToolEntry("unpin_row", "UnpinRow", asks=users_pin),
    ToolEntry("evict_ids", "EvictIds"),
    ToolEntry("evict_last", "EvictLast"),
    ToolEntry("evict_since", "EvictSince"),
    ToolEntry("evict_older_than", "EvictOlderThan"),
    ToolEntry("mark_segment", "MarkSegment"),
    ToolEntry("tune_window", "TuneWindow"),
    ToolEntry("log_choice", "LogChoice"),
    # the context (mnemara.tools.context_tools)
    ToolEntry("upsert_slot"),
    ToolEntry("evict_thinking_blocks", "EvictThinkingBlocks"),
    ToolEntry("evict_tool_use_blocks", "EvictToolUseBlocks"),
    ToolEntry("evict_write_pairs", "EvictWritePairs"),
    ToolEntry("read_skeleton", "ReadSkeleton", enabled=_skeleton_on, file_args=SKELETON_FILE_ARGS),
    # memory notes (mnemara.tools.memory_notes, memory_status)
    ToolEntry("write_memory", "WriteMemory"),
    ToolEntry("supersede_memory"),
    ToolEntry("deprecate_memory"),
    # wiki, RAG and graph (mnemara.tools.memory_tools)
    ToolEntry("wiki_read", "WikiRead"),
    ToolEntry("wiki_write", "WikiWrite"),
    ToolEntry("wiki_list", "WikiList"),
    ToolEntry("rag_index", "RagIndex", enabled=_rag_on),
    ToolEntry("rag_query", "RagQuery", enabled=_rag_on),
    ToolEntry("graph_add_node", "GraphWrite", enabled=_graph_on),
    ToolEntry("graph_add_edge", "GraphWrite", enabled=_graph_on),
    ToolEntry("graph_query", "GraphQuery", enabled=_graph_on, call_policy=_graph_query_policy),
    ToolEntry("graph_neighbors", "GraphRead", enabled=_graph_on),
    ToolEntry("graph_match", "GraphRead", enabled=_graph_on),
    ToolEntry("graph_shortest_path", "GraphRead", enabled=_graph_on),
    ToolEntry("propose_role_amendment", "ProposeRoleAmendment"),
    # the peer bus (mnemara.tools.peer_tools)
    ToolEntry("peer_send", "PeerSend", enabled=_nats_inbox),
    ToolEntry("peer_ack", "PeerAck", enabled=_nats_inbox),
)

_BY_NAME = {entry.name: entry for entry in CATALOGUE}


def entry(name: str) -> ToolEntry:
    """The catalogue entry of the in-process tool ``name`` (a bare entry, no policy of its own, for a
    name the catalogue does not list: a test tool; ``tests/guard/test_tool_catalogue.py`` keeps
    the catalogue and the tool modules naming the same tools)."""
    return _BY_NAME.get(name) or ToolEntry(name)


def enabled_names(config: Config) -> set[str]:
    """The model-facing names of the in-process tools ``config`` registers."""
    return {e.qualified_name for e in CATALOGUE if e.enabled(config)}
