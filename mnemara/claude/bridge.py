"""The seam between Mnemara and claude-agent-sdk: options in, events out.

* :func:`sdk_tools` turns :class:`mnemara.tools.ToolSpec` objects into SDK
  MCP tools bound to one :class:`ToolContext` (ONE server named ``mnemara``).
* :class:`TurnCollector` maps SDK messages to Mnemara events while collecting
  the assistant row's blocks, usage and cost.
* :func:`classify_failure` turns what the CLI reports about a failed API call
  into one user-facing line.

Only :mod:`mnemara.session.agent` imports this module (it imports the SDK).
"""
from __future__ import annotations

import asyncio
import inspect
import json
from dataclasses import dataclass, field
from typing import Any

from claude_agent_sdk import (
    AssistantMessage,
    ContentBlock,
    Message,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    TextBlock,
    ThinkingBlock as SdkThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    create_sdk_mcp_server,
)
from claude_agent_sdk import SdkMcpTool

from mnemara.core import events as ev
from mnemara.claude.faults import StallWatch, auth_message, stall_message
from mnemara.core.debuglog import log_event
from mnemara.core.pricing import prompt_tokens
from mnemara.tools import SERVER_NAME, ToolContext, ToolSpec

# -- tools ------------------------------------------------------------------------


def _adapt(spec: ToolSpec, ctx: ToolContext) -> SdkMcpTool[Any]:
    async def handler(args: dict[str, Any]) -> dict[str, Any]:
        try:
            if inspect.iscoroutinefunction(spec.handler):
                result = await spec.handler(ctx, args)
            else:
                result = await asyncio.to_thread(spec.handler, ctx, args)
                if inspect.isawaitable(result):
                    result = await result
        except Exception as exc:  # a tool must never take the turn down
            log_event(ctx.instance.debug_log_path, "tool_error", level="error", tool=spec.name, error=repr(exc))
            result = {"ok": False, "error": f"{spec.name} failed: {exc}"}
        if not isinstance(result, dict):
            result = {"ok": True, "result": result}
        return {
            "content": [{"type": "text", "text": json.dumps(result, ensure_ascii=False, default=str)}],
            "is_error": result.get("ok") is False,
        }

    return SdkMcpTool(name=spec.name, description=spec.description, input_schema=spec.input_schema, handler=handler)


def sdk_tools(specs: list[ToolSpec], ctx: ToolContext) -> list[SdkMcpTool[Any]]:
    return [_adapt(spec, ctx) for spec in specs]


def mnemara_server(specs: list[ToolSpec], ctx: ToolContext) -> Any:
    """The single in-process MCP server named ``mnemara``."""
    return create_sdk_mcp_server(SERVER_NAME, tools=sdk_tools(specs, ctx))


# -- messages -> events -----------------------------------------------------------------


def _tool_result_block(block: ToolResultBlock) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "tool_result", "tool_use_id": block.tool_use_id, "content": block.content if block.content is not None else ""}
    if block.is_error:
        out["is_error"] = True
    return out


@dataclass
class TurnCollector:
    """Maps the SDK message stream of one turn to events and the assistant row."""

    stream: bool = True
    blocks: list[dict[str, Any]] = field(default_factory=list)
    result: ResultMessage | None = None
    partial_text: str = ""  # text streamed by the current attempt, not yet confirmed by an AssistantMessage
    shown_text: str = ""  # text already shown as deltas for that message, whichever attempt sent it
    api_error: str | None = None  # AssistantMessage.error of the last failed call
    api_error_text: str = ""
    retries: int = 0
    cost_base: float = 0.0  # the CLI's running cost before this turn (a reused process keeps counting)
    tasks_started: int = 0  # background tasks the CLI started (they would outlive the turn)
    auth_rejected: int | None = None  # HTTP status of a rejected key (401/403): the turn ends now
    last_prompt_tokens: int = 0  # the prompt the API counted for the turn's last call (plain + cache read + written)

    def _show(self, text: str, confirmed: bool = False) -> list[ev.Event]:
        """Deltas that bring the screen from :attr:`shown_text` to ``text``, showing nothing twice.

        After a dropped connection the CLI asks again and the new attempt streams from the
        start: what is already on screen is not repeated. When the new text (or the final,
        confirmed one) does not continue what was shown, a notice says the answer restarts.
        """
        shown = self.shown_text
        if not self.stream or text == shown or (not confirmed and shown.startswith(text)):
            return []
        self.shown_text = text
        if text.startswith(shown):
            return [ev.TextDelta(text[len(shown):])]
        return [ev.Notice("the connection dropped mid-answer; the answer starts again below", "info"), ev.TextDelta(text)]

    def feed(self, message: Message) -> list[ev.Event]:
        """The events one SDK message gives; collects the assistant row's blocks on the way.

        Messages of a subagent (``parent_tool_use_id`` set) are not part of the row.
        """
        if isinstance(message, StreamEvent):
            return self._stream_event(message)
        if isinstance(message, AssistantMessage):
            return self._assistant_message(message)
        if isinstance(message, UserMessage):
            return self._tool_results(message)
        if isinstance(message, ResultMessage):
            self.result = message
            return []
        if isinstance(message, SystemMessage):
            return self._system_message(message)
        return []

    # -- one step per kind of message ---------------------------------------------------
    def _stream_event(self, message: StreamEvent) -> list[ev.Event]:
        """A streamed text delta is shown at once; a new message starts a new partial text."""
        if message.parent_tool_use_id is not None:
            return []
        event = message.event
        if event.get("type") == "message_start":
            self.partial_text = ""
            return []
        if event.get("type") != "content_block_delta":
            return []
        delta = event.get("delta", {})
        if delta.get("type") != "text_delta" or not delta.get("text"):
            return []
        self.partial_text += delta["text"]
        return self._show(self.partial_text)

    def _assistant_message(self, message: AssistantMessage) -> list[ev.Event]:
        """A failed API call is remembered for :func:`classify_failure`; otherwise its blocks join the row."""
        if message.error:
            self.api_error = str(message.error)
            self.api_error_text = "".join(b.text for b in message.content if isinstance(b, TextBlock))
            return []
        if message.parent_tool_use_id is not None:
            return []
        counted = prompt_tokens(message.usage or {})
        if counted:
            self.last_prompt_tokens = counted
        out: list[ev.Event] = []
        for block in message.content:
            out.extend(self._assistant_block(block))
        return out

    def _assistant_block(self, block: ContentBlock) -> list[ev.Event]:
        if isinstance(block, TextBlock):
            self.blocks.append({"type": "text", "text": block.text})
            shown = self._show(block.text, confirmed=True)
            self.partial_text = self.shown_text = ""
            return [*shown, ev.AssistantText(block.text)]
        if isinstance(block, SdkThinkingBlock):
            self.blocks.append({"type": "thinking", "thinking": block.thinking})
            return [ev.ThinkingBlock(block.thinking)]
        if isinstance(block, ToolUseBlock):
            self.blocks.append({"type": "tool_use", "id": block.id, "name": block.name, "input": block.input})
            return [ev.ToolUse(block.id, block.name, dict(block.input))]
        return []

    def _tool_results(self, message: UserMessage) -> list[ev.Event]:
        """The results of this turn's tool calls (the CLI sends them as a user message)."""
        if message.parent_tool_use_id is not None or not isinstance(message.content, list):
            return []
        out: list[ev.Event] = []
        for block in message.content:
            if isinstance(block, ToolResultBlock):
                stored = _tool_result_block(block)
                self.blocks.append(stored)
                out.append(ev.ToolResult(block.tool_use_id, stored["content"], bool(block.is_error)))
        return out

    def _system_message(self, message: SystemMessage) -> list[ev.Event]:
        if message.subtype == "init":
            return _mcp_server_notices(message.data)
        if message.subtype == "task_started":
            self.tasks_started += 1
            return []
        if message.subtype == "api_retry":
            return self._api_retry(message.data)
        return []

    def _api_retry(self, data: dict[str, Any]) -> list[ev.Event]:
        """A retry the CLI makes is announced; a rejected key (401/403) ends the turn instead."""
        status = data.get("error_status")
        if status in (401, 403):  # a rejected key stays rejected: no retries, end the turn
            self.auth_rejected = int(status)
            return []
        self.retries += 1
        delay = (data.get("retry_delay_ms") or 0) / 1000
        error = data.get("error") or "error"
        why = (f"{error} (HTTP {status})" if status else
               "connection lost" if error in ("unknown", "error") else str(error))
        return [ev.Notice(f"API {why}; retrying in {delay:.1f}s "
                          f"(attempt {data.get('attempt', '?')} of {data.get('max_retries', '?')})", "info")]

    @property
    def unconfirmed_text(self) -> str:
        """The longest text of the unfinished message that any attempt streamed."""
        return max(self.shown_text, self.partial_text, key=len)

    def final_blocks(self, interrupted: bool) -> list[dict[str, Any]]:
        """The blocks to store; an interrupted turn keeps the text streamed so far, once."""
        if interrupted and self.unconfirmed_text:
            return [*self.blocks, {"type": "text", "text": self.unconfirmed_text}]
        return list(self.blocks)

    @property
    def usage(self) -> dict[str, Any]:
        return dict(self.result.usage or {}) if self.result else {}

    @property
    def cost_usd(self) -> float | None:
        if self.result is None or self.result.total_cost_usd is None:
            return None
        return round(self.result.total_cost_usd - self.cost_base, 10)


def _mcp_server_notices(init: dict[str, Any]) -> list[ev.Event]:
    """A notice per configured MCP server the CLI could not start (from its ``init`` message)."""
    out: list[ev.Event] = []
    for server in init.get("mcp_servers") or []:
        status = server.get("status") if isinstance(server, dict) else None
        if status in ("failed", "needs-auth"):
            out.append(ev.Notice(f"MCP server {server.get('name')!r} {status.replace('-', ' ')}: its tools "
                                 "are unavailable this turn (check mcp_servers in config.json)"))
    return out


def track_api_wait(watch: StallWatch, message: Message) -> None:
    """Tell ``watch`` whether the API owes an answer, from one SDK message."""
    if isinstance(message, StreamEvent):
        if message.event.get("type") == "message_stop":
            watch.idle()
        else:
            watch.activity()
    elif isinstance(message, UserMessage):
        if isinstance(message.content, list) and any(isinstance(b, ToolResultBlock) for b in message.content):
            watch.awaiting_api()  # tool results go back to the API in the next request
    elif isinstance(message, SystemMessage) and message.subtype == "api_retry":
        watch.activity(grace=(message.data.get("retry_delay_ms") or 0) / 1000)
    elif isinstance(message, ResultMessage):
        watch.idle()
    else:
        watch.activity()


# -- failures ------------------------------------------------------------------------

_KIND_BY_STATUS: dict[int, ev.ErrorKind] = {401: "auth", 403: "auth", 429: "rate_limit", 529: "overloaded"}
_KIND_BY_SDK_ERROR: dict[str, ev.ErrorKind] = {
    "authentication_failed": "auth",
    "billing_error": "auth",
    "rate_limit": "rate_limit",
    "server_error": "server",
    "overloaded": "overloaded",
    "invalid_request": "request",
}
_MESSAGES: dict[ev.ErrorKind, str] = {
    "auth": "authentication failed: the API rejected the key (check ANTHROPIC_API_KEY)",
    "rate_limit": "rate limited by the API (HTTP 429); wait a moment and send again",
    "overloaded": "the API is overloaded (HTTP 529); try again shortly",
    "server": "the API answered with a server error",
    "connection": "the connection to the API was lost before the answer finished",
    "request": "the API refused the request",
    "cli": "the Claude CLI stopped unexpectedly",
    "error": "the turn failed",
}


def failure_kind(status: int | None, sdk_error: str | None, text: str) -> ev.ErrorKind:
    lowered = text.lower()
    if status in _KIND_BY_STATUS:
        return _KIND_BY_STATUS[status]
    if status is not None and status >= 500:
        return "server"
    if sdk_error and sdk_error in _KIND_BY_SDK_ERROR:
        kind = _KIND_BY_SDK_ERROR[sdk_error]
        if kind == "server" and ("connection" in lowered or "socket" in lowered or "terminated" in lowered):
            return "connection"
        return kind
    if "overloaded" in lowered:
        return "overloaded"
    if "rate limit" in lowered or "429" in lowered:
        return "rate_limit"
    if "api key" in lowered or "authentication" in lowered or "401" in lowered or "/login" in lowered:
        return "auth"
    if "connection" in lowered or "socket" in lowered or "econn" in lowered or "terminated" in lowered:
        return "connection"
    return "error"


def api_fault(collector: TurnCollector, stall: StallWatch | None) -> ev.ErrorEvent | None:
    """The error of a turn that Mnemara itself ended: a silent stream or a rejected key."""
    if stall is not None and stall.fired:
        return ev.ErrorEvent(stall_message(stall.seconds), "stall")
    if collector.auth_rejected:
        return ev.ErrorEvent(auth_message(collector.auth_rejected), "auth")
    return None


def classify_failure(collector: TurnCollector) -> ev.ErrorEvent | None:
    """An ErrorEvent when the turn's result says the API call failed, else None."""
    result = collector.result
    failed_result = result is not None and result.is_error
    if not failed_result and collector.api_error is None:
        return None
    status = result.api_error_status if result is not None else None
    detail = collector.api_error_text or (result.result if result is not None and result.result else "")
    if result is not None and result.errors:
        detail = detail or "; ".join(result.errors)
    kind = failure_kind(status, collector.api_error, detail)
    if kind == "auth":
        return ev.ErrorEvent(auth_message(status), kind)
    message = _MESSAGES[kind]
    if kind == "server" and status:
        message += f" (HTTP {status})"
    detail = " ".join(detail.split())
    if detail and len(detail) < 300:
        message += f": {detail}"
    return ev.ErrorEvent(message, kind)
