"""``write_memory(text, category)``: the agent appends a note to today's memory file.

Same on-disk format as ``mnemara note`` and ``/note`` (see :mod:`mnemara.memory.notes`).
Policy name ``WriteMemory``; model-facing name ``mcp__mnemara__write_memory``.
"""
from __future__ import annotations

from typing import Any

from mnemara.errors import MnemaraError
from mnemara.memory.notes import DEFAULT_CATEGORY, append_note
from mnemara.tools import ToolContext, ToolSpec

WRITE_MEMORY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "text": {"type": "string", "description": "The note to remember, in plain prose."},
        "category": {
            "type": "string",
            "description": "A short tag for the note, e.g. insight, decision, todo, self_observation.",
        },
    },
    "required": ["text"],
}


def write_memory(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    """Append one note; refuse empty text or a bad category with ``ok: false``."""
    text = args.get("text")
    if not isinstance(text, str):
        return {"ok": False, "error": "text must be a string"}
    category = args.get("category") or DEFAULT_CATEGORY
    if not isinstance(category, str):
        return {"ok": False, "error": "category must be a string"}
    from mnemara.memory.dedupe import check_before_write

    duplicate = check_before_write(ctx.instance.memory_dir, text, ctx.config) if text.strip() else None
    if duplicate is not None:
        return duplicate
    try:
        path, stamp = append_note(ctx.instance.memory_dir, text, category)
    except MnemaraError as exc:
        return {"ok": False, "error": exc.message}
    return {"ok": True, "file": f"memory/{path.name}", "timestamp": stamp, "category": category.strip()}


def specs() -> list[ToolSpec]:
    return [
        ToolSpec(
            name="write_memory",
            description=(
                "Append a note to this agent's long-term memory (today's memory file). "
                "Use it for facts, decisions and observations worth keeping across sessions."
            ),
            input_schema=WRITE_MEMORY_SCHEMA,
            handler=write_memory,
            policy_name="WriteMemory",
        )
    ]
