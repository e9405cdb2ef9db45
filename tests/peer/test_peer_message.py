"""The text of an injected inbox turn."""
from __future__ import annotations

import pytest

from mnemara.peer.message import MAX_PAYLOAD_CHARS, format_turn
from mnemara.peer.rows import PeerRow


def row(i: int, payload: str = '{"ask": "review"}', to: str | None = "eng", **kw) -> PeerRow:
    return PeerRow.from_db(id=i, agent_role="lead", recipient_role=to, payload_json=payload, **kw)


def test_batched_turn_lists_every_row_and_names_tools() -> None:
    text = format_turn([row(3, task_id="T-1"), row(9, '{"type": "note", "x": 1}', to=None)], "eng",
                       ack_tool="mcp__bus__ack", submit_tool="mcp__bus__send")
    assert text.startswith("[peer inbox] 2 new peer messages for eng")
    assert "message 1 of 2 · row 3 · from lead · to you (eng) · task T-1" in text
    assert "message 2 of 2 · row 9 · from lead · broadcast · type note" in text
    assert '{"ask": "review"}' in text and '{"type": "note", "x": 1}' in text
    assert "`mcp__bus__ack` (row ids: 3, 9)" in text and "`mcp__bus__send`" in text


def test_generic_wording_without_tools() -> None:
    text = format_turn([row(1)], "eng")
    assert "1 new peer message for eng" in text
    assert "through your peer-message system, marking it done (row ids: 1)" in text
    assert "`" not in text


def test_stable_bytes_and_malformed_and_long_payloads() -> None:
    rows = [row(1, "{broken"), row(2, '"' + "x" * (MAX_PAYLOAD_CHARS + 50) + '"')]
    a, b = format_turn(rows, "eng"), format_turn(rows, "eng")
    assert a == b
    assert "not valid JSON" in a and "{broken" in a
    assert "read row 2 of the peer database for the rest" in a


def test_no_rows_is_refused() -> None:
    with pytest.raises(ValueError):
        format_turn([], "eng")
