"""Helpers that read content blocks the way the eviction and compression passes need.

A stubbed ``tool_use`` keeps its ``id`` and ``name`` and has ``input["evicted"] is True``;
a stubbed ``tool_result`` keeps ``tool_use_id`` and ``is_error`` and its content
starts with :data:`STUB_PREFIX` (or is a ``{file_path, evicted: true}`` JSON string).
"""
from __future__ import annotations

import json
import os
from typing import Any, Callable, Iterable, Iterator

from mnemara.core.blocks import result_text as content_text
from mnemara.store.rows import Turn

WRITE_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
READ_TOOL = "Read"
STUB_PREFIX = "[evicted"
TARGET_CHARS = 80
_TARGET_KEYS = ("file_path", "notebook_path", "path", "command", "pattern", "url", "query", "label")


def is_stub_use(block: dict[str, Any]) -> bool:
    inp = block.get("input")
    return isinstance(inp, dict) and inp.get("evicted") is True


def result_text(block: dict[str, Any]) -> str:
    """The text of a ``tool_result`` block (the one rule: :func:`mnemara.core.blocks.result_text`)."""
    return content_text(block.get("content", ""))


def is_stub_result(block: dict[str, Any]) -> bool:
    text = result_text(block)
    if text.startswith(STUB_PREFIX):
        return True
    if text.startswith("{") and '"evicted"' in text:
        try:
            value = json.loads(text)
        except ValueError:
            return False
        return isinstance(value, dict) and value.get("evicted") is True
    return False


def short_target(name: str, inp: object) -> str:
    """A short human label of what a tool call touched: its path, command or pattern."""
    if not isinstance(inp, dict):
        return ""
    for key in _TARGET_KEYS:
        value = inp.get(key)
        if isinstance(value, str) and value:
            break
    else:
        value = next((v for v in inp.values() if isinstance(v, str) and v), "")
    value = " ".join(value.split())
    return value if len(value) <= TARGET_CHARS else value[: TARGET_CHARS - 1] + "…"


def file_path_of(block: dict[str, Any]) -> str | None:
    """The normalised file path a Read/Edit/Write/MultiEdit/NotebookEdit call names, if any."""
    inp = block.get("input")
    if not isinstance(inp, dict):
        return None
    value = inp.get("file_path") or inp.get("notebook_path")
    return os.path.normpath(value) if isinstance(value, str) and value else None


def _own_blocks(turn: Turn) -> list[dict[str, Any]]:
    return turn.blocks


def tool_uses(
    turns: Iterable[Turn], blocks_of: Callable[[Turn], list[dict[str, Any]]] = _own_blocks
) -> Iterator[tuple[Turn, int, dict[str, Any]]]:
    """Every ``tool_use`` block as (turn, index in turn, block), in store order.

    ``blocks_of`` gives a row's current blocks (e.g. after in-memory edits).
    """
    for turn in turns:
        for i, block in enumerate(blocks_of(turn)):
            if block.get("type") == "tool_use":
                yield turn, i, block


def result_index(
    turns: Iterable[Turn], blocks_of: Callable[[Turn], list[dict[str, Any]]] = _own_blocks
) -> dict[str, tuple[Turn, int]]:
    """Map ``tool_use_id`` -> (turn, block index) of its ``tool_result``."""
    out: dict[str, tuple[Turn, int]] = {}
    for turn in turns:
        for i, block in enumerate(blocks_of(turn)):
            if block.get("type") == "tool_result" and isinstance(block.get("tool_use_id"), str):
                out[block["tool_use_id"]] = (turn, i)
    return out


def stub_result(block: dict[str, Any], content: str) -> dict[str, Any]:
    """A copy of a ``tool_result`` block with its content replaced (ids and error flag kept)."""
    out = {k: v for k, v in block.items() if k != "content"}
    out["content"] = content
    return out
