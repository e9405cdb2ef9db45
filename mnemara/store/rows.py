"""Decode one stored row's ``content`` and ``meta`` without ever raising.

``turns.sqlite`` is a plain file: another program, a bad import or a disk error
can leave a row whose content is not JSON, not a list of typed blocks, or whose
meta has a field of the wrong type. Such a row must not take down ``run`` or
``show``: :func:`decode_row_parts` says what is wrong with it, the store marks
the :class:`~mnemara.store.turns.Turn` as damaged (shown as such, never sent to the
model) and everything else goes on.
"""
from __future__ import annotations

import json
from typing import Any

# Block fields the rest of Mnemara reads, and the types it expects of them.
_BLOCK_FIELDS: dict[str, dict[str, tuple[type, ...]]] = {
    "text": {"text": (str,)},
    "thinking": {"thinking": (str,)},
    "tool_use": {"name": (str,), "input": (dict,)},
    "tool_result": {"tool_use_id": (str,), "content": (str, list, type(None))},
}
_NUMBER = (int, float)
# Meta fields Mnemara writes and reads back, and their types (others are kept as they are).
_META_FIELDS: dict[str, tuple[type, ...]] = {
    "interrupted": (bool,),
    "usage": (dict,),
    "cost_usd": (*_NUMBER, type(None)),
    "model": (str,),
    "user_row_id": (int,),
    "error": (str,),
    "error_kind": (str,),
    "segment": (str,),
    "halted": (str,),
    "duration_ms": (*_NUMBER, type(None)),
    "num_api_calls": (int, type(None)),
}


def decode_blocks(raw: Any) -> tuple[list[dict[str, Any]], str | None]:
    """The row's blocks, or ``([], why)`` when they cannot be used."""
    try:
        value = json.loads(raw)
    except (TypeError, ValueError):
        return [], "content is not JSON"
    if not isinstance(value, list):
        return [], "content is not a list of blocks"
    for index, block in enumerate(value):
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            return [], f"content block {index} has no type"
        for name, types in _BLOCK_FIELDS.get(block["type"], {}).items():
            if name in block and not isinstance(block[name], types):
                return [], f"content block {index} ({block['type']}) has a {name!r} of the wrong type"
            if name not in block and block["type"] in ("text", "thinking"):
                return [], f"content block {index} ({block['type']}) has no {name!r}"
    return value, None


def decode_meta(raw: Any) -> tuple[dict[str, Any], str | None]:
    """The row's meta, or ``({}, why)`` when it is not an object or a known field has the wrong type."""
    try:
        value = json.loads(raw or "{}")
    except (TypeError, ValueError):
        return {}, "meta is not JSON"
    if not isinstance(value, dict):
        return {}, "meta is not a JSON object"
    for name, types in _META_FIELDS.items():
        if name in value and (not isinstance(value[name], types) or
                              (isinstance(value[name], bool) and bool not in types)):
            return {}, f"meta field {name!r} has the wrong type"
    return value, None


def decode_row_parts(content: Any, meta: Any) -> tuple[list[dict[str, Any]], dict[str, Any], str | None]:
    """Blocks, meta and why the row is damaged (None when it is sound)."""
    blocks, bad_content = decode_blocks(content)
    values, bad_meta = decode_meta(meta)
    return blocks, values, bad_content or bad_meta
