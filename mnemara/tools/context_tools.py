"""The agent's context tools: ``upsert_slot``, the three block-eviction tools and ``read_skeleton(file_path)``.

Thin adapters over :mod:`mnemara.context`; every call is logged to ``debug.log``
and answers ``{"ok": false, "error": ...}`` for bad arguments instead of raising.
``read_skeleton`` is registered only when ``read_skeleton_enabled`` is on.
"""
from __future__ import annotations

from typing import Any, Callable

from mnemara.context import eviction
from mnemara.context.row_ops import Selector, selected_ids
from mnemara.context.skeleton import read_skeleton
from mnemara.debuglog import log_event
from mnemara.errors import MnemaraError
from mnemara.store import ROLES
from mnemara.tools import ToolContext, ToolSpec
from mnemara.tools.window_tools import SELECTORS

ROW_IDS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        **SELECTORS,
        "row_ids": {
            "type": "array",
            "items": {"type": "integer"},
            "description": "Row ids (as shown in the conversation history) to act on; omit for every live row.",
        },
    },
    "additionalProperties": False,
}

SLOT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "label": {"type": "string", "description": "Slot name: letters, digits, '_', '-', '.' (1-64)."},
        "role": {"type": "string", "enum": list(ROLES), "description": "Who the slot speaks as."},
        "content": {"type": "string", "description": "The slot's new content (replaces the old one)."},
    },
    "required": ["label", "role", "content"],
}

SKELETON_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "file_path": {"type": "string", "description": "Path of a Python file."},
        "path": {"type": "string", "description": "Same as file_path (older name)."},
    },
    "additionalProperties": False,
}


def upsert_slot(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    """Update the pinned slot ``label`` in place or create it at the next position."""
    label, role, content = args.get("label"), args.get("role"), args.get("content")
    if not isinstance(label, str) or not isinstance(role, str) or not isinstance(content, str):
        return {"ok": False, "error": "label, role and content must be strings"}
    try:
        existed = any(t.pin_label == label for t in ctx.store.pinned())
        row_id = ctx.store.upsert_slot(label, role, content)
    except MnemaraError as exc:
        return {"ok": False, "error": exc.message}
    log_event(ctx.instance.debug_log_path, "slot_upsert", label=label, row_id=row_id, updated=existed)
    return {"ok": True, "row_id": row_id, "label": label, "updated": existed}


def _eviction_tool(fn: Callable[..., eviction.EvictionResult]) -> Callable[[ToolContext, dict[str, Any]], dict[str, Any]]:
    def handler(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
        try:
            ids, skipped = selected_ids(ctx.store, Selector.from_args(args))
        except MnemaraError as exc:
            return {"ok": False, "error": exc.message}
        result = fn(ctx.store, ids)
        result.skipped = sorted(set(result.skipped) | set(skipped))
        log_event(ctx.instance.debug_log_path, "eviction", strategy=result.strategy, rows=result.rows,
                  tokens_freed=result.tokens_freed, row_ids=result.row_ids, by="agent")
        return {"ok": True, **result.to_dict()}

    handler.__name__ = fn.__name__
    return handler


def skeleton_tool(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    path = args.get("file_path", args.get("path"))
    if not isinstance(path, str) or not path:
        return {"ok": False, "error": "file_path must be a non-empty string"}
    try:
        sk = read_skeleton(path, home_only=ctx.config.file_tool_home_only)
    except MnemaraError as exc:
        return {"ok": False, "error": exc.message}
    return {"ok": True, "path": sk.path, "skeleton": sk.text, "source_tokens": sk.source_tokens,
            "skeleton_tokens": sk.skeleton_tokens}


def specs() -> list[ToolSpec]:
    evict_desc = (" Selects rows by row_ids, keep_recent, older_than and/or segment (default: every live row); pinned "
                  "rows are never touched. Returns rows touched and estimated tokens freed.")
    return [
        ToolSpec(
            name="upsert_slot",
            description=(
                "Keep a piece of mutable state pinned in your context: updates the slot called `label` in place "
                "(same row id, new content and timestamp) or creates it. Slots are sent every turn in slot order "
                "and never evicted. Returns the row id."
            ),
            input_schema=SLOT_SCHEMA,
            handler=upsert_slot,
        ),
        ToolSpec(
            name="evict_thinking_blocks",
            description="Strip thinking blocks from stored turns, keeping their text and tool calls." + evict_desc,
            input_schema=ROW_IDS_SCHEMA,
            handler=_eviction_tool(eviction.evict_thinking_blocks),
            policy_name="EvictThinkingBlocks",
        ),
        ToolSpec(
            name="evict_tool_use_blocks",
            description=(
                "Reduce tool calls in stored turns to an audit shell (tool name and a short target) and stub their "
                "results." + evict_desc
            ),
            input_schema=ROW_IDS_SCHEMA,
            handler=_eviction_tool(eviction.evict_tool_use_blocks),
            policy_name="EvictToolUseBlocks",
        ),
        ToolSpec(
            name="evict_write_pairs",
            description=(
                "Stub the bodies of Edit/Write/MultiEdit/NotebookEdit calls and of earlier Reads of the same file "
                "as {file_path, evicted: true}; the files on disk are unchanged." + evict_desc
            ),
            input_schema=ROW_IDS_SCHEMA,
            handler=_eviction_tool(eviction.evict_write_pairs),
            policy_name="EvictWritePairs",
        ),
        ToolSpec(
            name="read_skeleton",
            description=(
                "Read a Python file as signatures and docstring summaries only (far smaller than a full Read). "
                "Use Read when you need the bodies."
            ),
            input_schema=SKELETON_SCHEMA,
            handler=skeleton_tool,
            policy_name="ReadSkeleton",
            enabled=lambda cfg: bool(cfg.read_skeleton_enabled),
        ),
    ]
