"""The text of an injected inbox turn: the peer messages plus what to do with them.

Stable wording (same rows -> same bytes) so the turn is cacheable and testable.
When ``peer_poll_ack_tool`` / ``peer_poll_submit_tool`` are set the instruction
names those tools; otherwise it describes the steps in generic prose.
"""
from __future__ import annotations

from typing import Sequence

from mnemara.peer.rows import PeerRow

HEADER = "[peer inbox]"
MAX_PAYLOAD_CHARS = 16_000


def _describe(row: PeerRow, index: int, total: int, role: str) -> str:
    to = f"to you ({role})" if row.recipient_role else "broadcast"
    parts = [f"message {index} of {total}", f"row {row.id}", f"from {row.agent_role or '(unknown sender)'}", to]
    if row.task_id:
        parts.append(f"task {row.task_id}")
    if row.message_type:
        parts.append(f"type {row.message_type}")
    if row.submitted_at:
        parts.append(f"submitted {row.submitted_at}")
    return "--- " + " · ".join(parts)


def _body(row: PeerRow) -> str:
    text = row.payload_json.strip()
    note = ""
    if row.payload_error:
        note = f"({row.payload_error}; shown as raw text)\n"
    if len(text) > MAX_PAYLOAD_CHARS:
        note += (f"(payload is {len(text)} characters; the first {MAX_PAYLOAD_CHARS} follow; "
                 f"read row {row.id} of the peer database for the rest)\n")
        text = text[:MAX_PAYLOAD_CHARS]
    return note + text


def _instructions(ids: Sequence[int], ack_tool: str, submit_tool: str) -> str:
    id_list = ", ".join(str(i) for i in ids)
    if ack_tool:
        ack = f"acknowledge every row you processed by calling `{ack_tool}` (row ids: {id_list})"
    else:
        ack = (f"acknowledge every row you processed through your peer-message system, marking it done "
               f"(row ids: {id_list})")
    if submit_tool:
        send = f"send any reply with `{submit_tool}`"
    else:
        send = "send any reply through your peer-message system"
    return (
        f"Handle these together: do what they ask, {ack}, and {send}. "
        "Make sending the last action of this turn, then stop and wait for answers. "
        "Reply only when the reply carries new content; do not acknowledge acknowledgments. "
        "A message may have crossed one of yours in flight: check row ids and timestamps before acting on it."
    )


def format_turn(rows: Sequence[PeerRow], role: str, ack_tool: str = "", submit_tool: str = "") -> str:
    """One user turn carrying ``rows`` (oldest first) and the instruction on handling them."""
    if not rows:
        raise ValueError("format_turn needs at least one row")
    total = len(rows)
    noun = "message" if total == 1 else "messages"
    lines = [f"{HEADER} {total} new peer {noun} for {role}, delivered by the inbox poller (not typed by the user)."]
    for i, row in enumerate(rows, 1):
        lines.append("")
        lines.append(_describe(row, i, total, role))
        lines.append(_body(row))
    lines.append("")
    lines.append(_instructions([r.id for r in rows], ack_tool, submit_tool))
    return "\n".join(lines)
