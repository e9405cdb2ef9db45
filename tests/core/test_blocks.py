"""One content-block model: every view of a tool result uses the same text."""
from __future__ import annotations

from mnemara.core import events as ev
from mnemara.core.blocks import block_text, result_text
from mnemara.context.blocks import result_text as stored_result_text
from mnemara.store.rows import Turn
from mnemara.core.tokens import estimate_blocks, estimate_text
from mnemara.context.transcript import render_block
from mnemara.context.transcript_text import format_turn
from mnemara.ui.tui.transcript_view import result_entry

LIST_CONTENT = [{"type": "text", "text": "line one"}, {"type": "image", "source": {"kind": "png"}},
                {"type": "text", "text": "line two"}]
EXPECTED = 'line one\n{"source": {"kind": "png"}, "type": "image"}\nline two'


def test_result_text_rules() -> None:
    assert result_text("plain") == "plain"
    assert result_text(None) == ""
    assert result_text(LIST_CONTENT) == EXPECTED
    assert result_text({"a": 1}) == '{"a": 1}'
    assert result_text({"type": "tool_result", "tool_use_id": "t", "content": "inner"}) == "inner"


def test_every_view_of_a_result_agrees() -> None:
    block = {"type": "tool_result", "tool_use_id": "t1", "content": LIST_CONTENT, "is_error": True}
    assert ev.ToolResult("t1", LIST_CONTENT, True).text == EXPECTED
    assert stored_result_text(block) == EXPECTED
    assert render_block(block) == f"[tool_result error for=t1]\n{EXPECTED}"
    assert result_entry(LIST_CONTENT, True).detail == EXPECTED
    turn = Turn(id=1, role="user", blocks=[block], tokens=0, created_at="2026-01-01T00:00:00+00:00")
    assert "result (error): line one" in format_turn(turn)
    assert block_text(block) == EXPECTED and estimate_blocks([block]) == estimate_text(EXPECTED)
