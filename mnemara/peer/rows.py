"""One row of the ``returns`` table as the inbox sees it.

The payload is the writer's JSON text. It is parsed only to learn the message
type (the payload's ``"type"`` key, unless the table has a ``message_type`` or
``type`` column); a payload that is not valid JSON is still delivered, as raw
text, so a malformed message is never silently lost.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Union

#: One column value as SQLite returns it (NATS headers are str or None).
Cell = Union[str, bytes, bytearray, int, float, None]


@dataclass(frozen=True)
class PeerRow:
    id: int
    agent_role: str
    recipient_role: str | None
    payload_json: str
    task_id: str | None = None
    submitted_at: str | None = None
    message_type: str | None = None
    payload: Any = None
    payload_error: str | None = None

    @property
    def is_broadcast(self) -> bool:
        return not self.recipient_role

    @classmethod
    def from_db(cls, *, id: int, agent_role: Cell, recipient_role: Cell, payload_json: Cell,
                task_id: Cell = None, submitted_at: Cell = None, column_type: Cell = None) -> "PeerRow":
        """A row from the peer db's columns (or a NATS message's headers), each as SQLite returns it."""
        text = _text(payload_json) or ""
        payload: Any = None
        error: str | None = None
        if payload_json is None:
            error = "payload_json is NULL"
        else:
            try:
                payload = json.loads(text)
            except (json.JSONDecodeError, RecursionError) as exc:
                error = f"payload_json is not valid JSON ({exc})"
        mtype = _text(column_type)
        if not mtype and isinstance(payload, dict):
            mtype = _text(payload.get("type"))
        return cls(
            id=int(id),
            agent_role=_text(agent_role) or "",
            recipient_role=_text(recipient_role),
            payload_json=text,
            task_id=_text(task_id),
            submitted_at=_text(submitted_at),
            message_type=mtype,
            payload=payload,
            payload_error=error,
        )


def _text(value: object) -> str | None:
    """A column value (or a JSON value) as text; None for NULL or empty."""
    if value is None:
        return None
    if isinstance(value, (bytes, bytearray)):
        value = bytes(value).decode("utf-8", errors="replace")
    value = str(value)
    return value if value != "" else None
