"""The agent's context tools: ``upsert_slot``, the three block-eviction tools and ``read_skeleton(file_path)``.

Thin adapters over :mod:`mnemara.context`, declared with
:func:`mnemara.tools.declare.declare`; every change is logged to ``debug.log`` and
bad arguments answer ``{"ok": false, "error": ...}`` and change nothing.
``read_skeleton`` is registered only when ``read_skeleton_enabled`` is on.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, Literal

from pydantic import Field, model_validator

from mnemara.context import eviction
from mnemara.context.row_ops import selected_ids
from mnemara.context.skeleton import read_skeleton
from mnemara.guard.file_roots import FileRoots, real_homes
from mnemara.core.debuglog import log_event
from mnemara.store.rows import AGENT
from mnemara.tools import ToolContext, ToolSpec
from mnemara.tools.declare import ToolArgs, declare
from mnemara.tools.window_tools import Selectors


class UpsertSlotArgs(ToolArgs):
    label: str = Field(description="Slot name: letters, digits, '_', '-', '.' (1-64).")
    role: Literal["user", "assistant", "system"] = Field(description="Who the slot speaks as.")
    content: str = Field(description="The slot's new content (replaces the old one).")


class SkeletonArgs(ToolArgs):
    file_path: str | None = Field(None, description="Path of a Python file.")
    path: str | None = Field(None, description="Same as file_path (older name).")

    @model_validator(mode="after")
    def _names_a_file(self) -> "SkeletonArgs":
        if not (self.file_path or self.path):
            raise ValueError("file_path must be a non-empty string")
        return self

    @property
    def target(self) -> str:
        """The file read: the first of ``file_path``, ``path`` given, as
        :data:`mnemara.guard.tool_catalogue.SKELETON_FILE_ARGS` tells the gate."""
        return next((value for value in (self.file_path, self.path) if value), "")


def upsert_slot(ctx: ToolContext, args: UpsertSlotArgs) -> dict[str, Any]:
    """Update the pinned slot ``label`` in place or create it at the next position."""
    label, role, content = args.label, args.role, args.content
    existed = any(t.pin_label == label for t in ctx.store.pinned())
    row_id = ctx.store.upsert_slot(label, role, content, by=AGENT)
    log_event(ctx.instance.debug_log_path, "slot_upsert", label=label, row_id=row_id, updated=existed)
    return {"ok": True, "row_id": row_id, "label": label, "updated": existed}


def _eviction_tool(fn: Callable[..., eviction.EvictionResult]) -> Callable[[ToolContext, Selectors], dict[str, Any]]:
    def handler(ctx: ToolContext, args: Selectors) -> dict[str, Any]:
        ids, skipped = selected_ids(ctx.store, args.selector())
        result = fn(ctx.store, ids)
        result.skipped = sorted(set(result.skipped) | set(skipped))
        ctx.store.mark_changed_by_agent(result.row_ids, fn.__name__)
        log_event(ctx.instance.debug_log_path, "eviction", strategy=result.strategy, rows=result.rows,
                  tokens_freed=result.tokens_freed, row_ids=result.row_ids, by="agent")
        return {"ok": True, **result.to_dict()}

    handler.__name__ = fn.__name__
    return handler


def skeleton_tool(ctx: ToolContext, args: SkeletonArgs) -> dict[str, Any]:
    target = os.path.join(ctx.cwd, os.path.expanduser(args.target)) if ctx.cwd else args.target
    roots = FileRoots.from_entries(ctx.config.file_tool_roots, *real_homes()).roots
    sk = read_skeleton(target, home_only=ctx.config.file_tool_home_only, roots=tuple(roots))
    return {"ok": True, "path": sk.path, "skeleton": sk.text, "source_tokens": sk.source_tokens,
            "skeleton_tokens": sk.skeleton_tokens}


def specs() -> list[ToolSpec]:
    evict_desc = (" Selects rows by row_ids, keep_recent, older_than and/or segment (default: every live row); pinned "
                  "rows are never touched. Returns rows touched and estimated tokens freed.")
    return [
        declare("upsert_slot", "Keep a piece of mutable state pinned in your context: updates the slot called `label` "
                "in place (same row id, new content and timestamp) or creates it. Only slots you created can be "
                "updated; rows the user typed or pinned are the user's. Slots are sent every turn in slot order and "
                "never evicted. Returns the row id.", UpsertSlotArgs, upsert_slot),
        declare("evict_thinking_blocks", "Strip thinking blocks from stored turns, keeping their text and tool calls."
                + evict_desc, Selectors, _eviction_tool(eviction.evict_thinking_blocks)),
        declare("evict_tool_use_blocks", "Reduce tool calls in stored turns to an audit shell (tool name and a short "
                "target) and stub their results." + evict_desc, Selectors,
                _eviction_tool(eviction.evict_tool_use_blocks)),
        declare("evict_write_pairs", "Stub the bodies of Edit/Write/MultiEdit/NotebookEdit calls and of earlier Reads "
                "of the same file as {file_path, evicted: true}; the files on disk are unchanged." + evict_desc,
                Selectors, _eviction_tool(eviction.evict_write_pairs)),
        declare("read_skeleton", "Read a Python file as signatures and docstring summaries only (far smaller than a "
                "full Read). Use Read when you need the bodies.", SkeletonArgs, skeleton_tool),
    ]
