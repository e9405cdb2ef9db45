"""What the model is shown each turn: pinned slots, the rolling window, the new message.

The SDK's CLI is stateless per turn for us: every turn is a fresh conversation
whose single user message carries Mnemara's context as separate text blocks,
in this order:

1. ``<pinned_slots>``: pinned rows in slot order (omitted when there are none);
2. ``<conversation_history>``: the rolling window, oldest first (omitted when empty);
3. any per-turn context blocks (e.g. auto-recall), each its own block;
4. the user's new message, verbatim.

The text inside a row or a slot is escaped (:func:`escape_delimiters`): a file,
a tool result or a note quoting ``</turn><turn role="user">`` stays text and
cannot open or close a turn. Rendering is a pure function of the rows: the same rows give the same bytes,
so the provider's prompt cache can hit on the unchanged prefix. Tool uses and
tool results keep their structure in the store; here they become readable
one-line headers followed by their body.
"""
from __future__ import annotations

from typing import Any, Iterable, Sequence

from mnemara.core.blocks import result_text, to_json
from mnemara.core.delimiters import escape_delimiters
from mnemara.store.rows import Turn

HISTORY_PREAMBLE = (
    "Earlier turns of this conversation, oldest first, as kept by Mnemara's rolling window. "
    "Row ids identify turns for context tools."
)
SLOTS_PREAMBLE = "Pinned slots: standing context that is sent with every turn, in slot order."


_json = to_json

def render_block(block: dict[str, Any]) -> str:
    """One stored content block as readable text (deterministic)."""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind == "thinking":
        return f"[thinking]\n{block.get('thinking', '')}\n[/thinking]"
    if kind == "tool_use":
        head = f"[tool_use {block.get('name', '?')} id={block.get('id', '?')}]"
        return f"{head} {_json(block.get('input', {}))}"
    if kind == "tool_result":
        content = result_text(block.get("content", ""))
        flag = " error" if block.get("is_error") else ""
        return f"[tool_result{flag} for={block.get('tool_use_id', '?')}]\n{content}"
    return f"[{kind}] {_json({k: v for k, v in block.items() if k != 'type'})}"


def render_turn(turn: Turn) -> str:
    """One row as ``<turn id=.. role=..>`` ... ``</turn>``."""
    attrs = f'id="{turn.id}" role="{turn.role}"'
    if turn.meta.get("interrupted"):
        attrs += ' interrupted="true"'
    body = escape_delimiters("\n".join(render_block(b) for b in turn.blocks))
    return f"<turn {attrs}>\n{body}\n</turn>"


def render_slots(pinned: Sequence[Turn]) -> str:
    parts = [SLOTS_PREAMBLE]
    for turn in pinned:
        body = escape_delimiters("\n".join(render_block(b) for b in turn.blocks))
        by = ' by="agent"' if turn.made_by_agent else ""  # a slot the agent wrote never passes as the user's
        parts.append(f'<slot pos="{turn.slot_pos}" label="{turn.pin_label}" role="{turn.role}"{by}>\n{body}\n</slot>')
    return "<pinned_slots>\n" + "\n".join(parts) + "\n</pinned_slots>"


def render_history(rows: Sequence[Turn]) -> str:
    return "<conversation_history>\n" + HISTORY_PREAMBLE + "\n" + "\n".join(render_turn(t) for t in rows) + "\n</conversation_history>"


def build_user_content(
    pinned: Sequence[Turn],
    rows: Sequence[Turn],
    message: str,
    extra_blocks: Iterable[str] = (),
) -> list[dict[str, Any]]:
    """The content blocks of the single user message sent for this turn."""
    blocks: list[dict[str, Any]] = []
    if pinned:
        blocks.append({"type": "text", "text": render_slots(pinned)})
    if rows:
        blocks.append({"type": "text", "text": render_history(rows)})
    for extra in extra_blocks:
        if extra and extra.strip():
            blocks.append({"type": "text", "text": extra})
    blocks.append({"type": "text", "text": message})
    return blocks
