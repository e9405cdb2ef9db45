"""What the model is shown each turn: pinned slots, the rolling window, the new message.

A rebuilt turn is a fresh CLI conversation whose single user message carries
Mnemara's context as separate text blocks (a continued one sends only its own
part, no rows: :mod:`mnemara.context.continuation`).
With ``request_layout`` ``"cache"`` (the default) the order keeps what stays put first,
so Anthropic's prompt cache reads it back at a tenth of the price:

1. the rolling window, oldest first (omitted when empty): an opening block
   (``<conversation_history>`` and its preamble), one block per row, then the closing tag;
   the last row carries the cache breakpoint (``cache_control``), so the next turn reads
   every row that is still in the window from the cache;
2. ``<pinned_slots>``: pinned rows in slot order (omitted when there are none);
3. any per-turn context blocks (auto-recall, the file-stat manifest, ...), each its own block;
4. the user's new message, verbatim.

``request_layout`` ``"spec"`` is the order the spec gives: slots, then the whole window as one
``<conversation_history>`` block, then the per-turn blocks and the message (no breakpoint of ours).
Both send the same rows in the same bytes; only the layout and the breakpoint differ.

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


HISTORY_OPEN = "<conversation_history>\n" + HISTORY_PREAMBLE
HISTORY_CLOSE = "</conversation_history>"
#: The values of ``request_layout``: see the module docstring.
LAYOUTS = ("cache", "spec")


def render_history(rows: Sequence[Turn]) -> str:
    return HISTORY_OPEN + "\n" + "\n".join(render_turn(t) for t in rows) + "\n" + HISTORY_CLOSE


def history_blocks(rows: Sequence[Turn], ttl: str = "5m") -> list[dict[str, Any]]:
    """The window as blocks, one per row, the last row marked as a cache breakpoint of ``ttl``."""
    if not rows:
        return []
    blocks: list[dict[str, Any]] = [{"type": "text", "text": HISTORY_OPEN}]
    blocks += [{"type": "text", "text": render_turn(t)} for t in rows]
    blocks[-1]["cache_control"] = cache_mark(ttl)
    blocks.append({"type": "text", "text": HISTORY_CLOSE})
    return blocks


def cache_mark(ttl: str) -> dict[str, str]:
    """The ``cache_control`` of a breakpoint: 5 minutes is the API's default, 1 hour must be asked for."""
    return {"type": "ephemeral", "ttl": "1h"} if ttl == "1h" else {"type": "ephemeral"}


def build_user_content(
    pinned: Sequence[Turn],
    rows: Sequence[Turn],
    message: str,
    extra_blocks: Iterable[str] = (),
    *,
    layout: str = "cache",
    ttl: str = "5m",
) -> list[dict[str, Any]]:
    """The content blocks of the single user message sent for this turn (``layout``: see the module)."""
    blocks: list[dict[str, Any]] = []
    if layout == "spec":
        if pinned:
            blocks.append({"type": "text", "text": render_slots(pinned)})
        if rows:
            blocks.append({"type": "text", "text": render_history(rows)})
    else:
        blocks += history_blocks(rows, ttl)
        if pinned:
            blocks.append({"type": "text", "text": render_slots(pinned)})
    for extra in extra_blocks:
        if extra and extra.strip():
            blocks.append({"type": "text", "text": extra})
    blocks.append({"type": "text", "text": message})
    return blocks
