"""The content blocks a turn stores and the model sees: one model, one ``result_text()``.

A stored row's ``blocks`` are Messages-API content blocks as plain dicts (JSON
in turns.sqlite). These ``TypedDict`` types name their fields, and
:func:`result_text` is the single rule for "tool result -> text" used by the
transcript the model reads, the token estimates (:mod:`mnemara.core.tokens`),
eviction and compression, ``/show`` and the panel:

* a string content is itself;
* a list content joins its items with newlines: a ``text`` item gives its text,
  any other item (an image, a resource) its JSON;
* anything else (None, a dict, a number) is its JSON (``""`` for None).
"""
from __future__ import annotations

import json
from typing import Any, Literal, TypedDict

from typing_extensions import NotRequired


class TextBlock(TypedDict):
    type: Literal["text"]
    text: str


class ThinkingBlock(TypedDict):
    type: Literal["thinking"]
    thinking: str
    signature: NotRequired[str]


class ToolUseBlock(TypedDict):
    type: Literal["tool_use"]
    id: str
    name: str
    input: dict[str, Any]


class ToolResultBlock(TypedDict):
    type: Literal["tool_result"]
    tool_use_id: str
    content: Any  # a string, or a list of content items (see result_text)
    is_error: NotRequired[bool]


Block = dict[str, Any]  # any of the above as stored; unknown block types are kept as they are


def to_json(value: object) -> str:
    """The stable JSON text of a value (same bytes for the same value, so prompt caches hit)."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(", ", ": "))


def result_text(content: object) -> str:
    """The text of a tool result's ``content`` (or of a whole ``tool_result`` block)."""
    if isinstance(content, dict) and content.get("type") == "tool_result":
        content = content.get("content", "")
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    if isinstance(content, list):
        return "\n".join(str(item.get("text", "")) if isinstance(item, dict) and item.get("type") == "text"
                         else to_json(item) for item in content)
    return to_json(content)


def block_text(block: Block) -> str:
    """What a block puts in front of the model, as text (the basis of its token estimate)."""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind == "thinking":
        return str(block.get("thinking", ""))
    if kind == "tool_use":
        return str(block.get("name", "")) + to_json(block.get("input", {}))
    if kind == "tool_result":
        return result_text(block.get("content", ""))
    return to_json(block)
