"""Human-readable one-line-per-block renderings of stored turns (for `show` and `/show`)."""
from __future__ import annotations

import json

from mnemara.core.blocks import result_text
from mnemara.store.rows import Turn

PREVIEW = 400


def _short(text: str, limit: int = PREVIEW) -> str:
    text = text.replace("\n", " ⏎ ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def format_turn(turn: Turn, display_name: str = "") -> str:
    who = display_name if (turn.role == "assistant" and display_name) else turn.role
    head = f"[{turn.id}] {who}"
    if turn.pinned:
        head += f" 📌 {turn.slot_pos:02d} slot: {turn.pin_label}"
    if turn.evicted:
        head += " (evicted)"
    if turn.meta.get("no_reply"):
        head += " (no reply: its turn could not run; left out of the context)"
    marks = turn.agent_marks()
    if marks:
        head += " [" + "; ".join(marks) + "]"
    lines = [f"{head}  {turn.created_at}  ~{turn.tokens} tok"]
    if turn.damaged:
        lines.append(f"    DAMAGED ROW, left out of the context: {turn.damaged}")
    for block in turn.blocks:
        kind = block.get("type")
        if kind == "text":
            lines.append(f"    {_short(block.get('text', ''))}")
        elif kind == "thinking":
            lines.append(f"    (thinking) {_short(block.get('thinking', ''), 120)}")
        elif kind == "tool_use":
            lines.append(f"    tool: {block.get('name')} {_short(json.dumps(block.get('input', {}), ensure_ascii=False), 200)}")
        elif kind == "tool_result":
            content = result_text(block.get("content", ""))
            flag = " (error)" if block.get("is_error") else ""
            lines.append(f"    result{flag}: {_short(content, 200)}")
        else:
            lines.append(f"    ({kind})")
    return "\n".join(lines)
