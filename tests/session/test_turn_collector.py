"""TurnCollector.feed: each kind of SDK message gives its events and adds to the assistant row.

The messages are the SDK's own types, built as the CLI's stream would deliver them.
"""
from __future__ import annotations

from claude_agent_sdk import (
    AssistantMessage,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)

from mnemara.core import events as ev
from mnemara.claude.bridge import TurnCollector


def _delta(text: str, parent: str | None = None) -> StreamEvent:
    return StreamEvent("u", "s", {"type": "content_block_delta", "delta": {"type": "text_delta", "text": text}}, parent)


def test_one_turn_with_a_tool_call_is_collected_in_order() -> None:
    c = TurnCollector(stream=True)
    out = [*c.feed(StreamEvent("u", "s", {"type": "message_start"})), *c.feed(_delta("Let me ")), *c.feed(_delta("look."))]
    assert [e.text for e in out if isinstance(e, ev.TextDelta)] == ["Let me ", "look."]
    out = c.feed(AssistantMessage([TextBlock("Let me look."), ThinkingBlock("which file?", "sig"),
                                   ToolUseBlock("t1", "Read", {"file_path": "a.py"})], "m"))
    assert out == [ev.AssistantText("Let me look."), ev.ThinkingBlock("which file?"), ev.ToolUse("t1", "Read", {"file_path": "a.py"})]
    out = c.feed(UserMessage([ToolResultBlock("t1", "x = 1", True), TextBlock("ignored")]))
    assert out == [ev.ToolResult("t1", "x = 1", True)]
    result = ResultMessage("success", 1, 1, False, 1, "s", total_cost_usd=0.25, usage={"output_tokens": 7})
    assert c.feed(result) == [] and c.result is result and c.cost_usd == 0.25 and c.usage == {"output_tokens": 7}
    assert c.blocks == [{"type": "text", "text": "Let me look."}, {"type": "thinking", "thinking": "which file?"},
                        {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "a.py"}},
                        {"type": "tool_result", "tool_use_id": "t1", "content": "x = 1", "is_error": True}]


def test_a_subagents_messages_are_not_part_of_the_row() -> None:
    c = TurnCollector(stream=True)
    assert c.feed(_delta("sub", parent="t9")) == []
    assert c.feed(AssistantMessage([TextBlock("sub answer")], "m", parent_tool_use_id="t9")) == []
    assert c.feed(UserMessage([ToolResultBlock("t8", "r")], parent_tool_use_id="t9")) == []
    assert c.feed(UserMessage("plain text")) == [] and c.blocks == [] and c.unconfirmed_text == ""


def test_a_failed_call_is_remembered_not_shown() -> None:
    c = TurnCollector()
    assert c.feed(AssistantMessage([TextBlock("API Error: 529 overloaded")], "m", error="rate_limit")) == []
    assert (c.api_error, c.api_error_text, c.blocks) == ("rate_limit", "API Error: 529 overloaded", [])


def test_system_messages_notices_tasks_and_retries() -> None:
    c = TurnCollector()
    out = c.feed(SystemMessage("init", {"mcp_servers": [{"name": "db", "status": "failed"}, {"name": "ok", "status": "connected"},
                                                        {"name": "gh", "status": "needs-auth"}, "junk"]}))
    assert [e.message for e in out] == [
        "MCP server 'db' failed: its tools are unavailable this turn (check mcp_servers in config.json)",
        "MCP server 'gh' needs auth: its tools are unavailable this turn (check mcp_servers in config.json)"]
    assert c.feed(SystemMessage("task_started", {})) == [] and c.tasks_started == 1
    out = c.feed(SystemMessage("api_retry", {"error_status": 529, "error": "overloaded", "retry_delay_ms": 1200,
                                             "attempt": 2, "max_retries": 5}))
    assert out == [ev.Notice("API overloaded (HTTP 529); retrying in 1.2s (attempt 2 of 5)", "info")] and c.retries == 1
    assert c.feed(SystemMessage("something_new", {})) == [] and c.feed(object()) == []
