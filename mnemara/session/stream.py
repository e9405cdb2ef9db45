"""One turn's message through its CLI process, and the events streamed back.

The exchange ends when the CLI's result arrives, or early: the runtime
sentinel halts the turn after a tool result (it reads every tool_use and result here, so
calls the CLI rejects before any hook count too); the API rejected the key (the CLI
would go on retrying it for minutes, so the call is stopped); or the API went
silent for ``api_stall_seconds`` (:class:`~mnemara.claude.faults.StallWatch` ends
the call). Which process serves the turn and what a failure means is the
session's business; this module only talks to the process it is given.
"""
from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncGenerator
from typing import Any

from mnemara.core import events as ev
from mnemara.claude.faults import StallWatch, end_stalled_call, stop_calling
from mnemara.claude.process import CliHandle, hard_kill, one_message
from mnemara.session.state import RunningTurn


async def exchange(turn: RunningTurn, handle: CliHandle, content: list[dict[str, Any]],
                   message_id: str) -> AsyncGenerator[ev.Event, None]:
    """Send ``content`` as one user message and yield what the CLI streams back, fed through the
    turn's collector, until the result or an early end."""
    from mnemara.claude.bridge import track_api_wait

    watch, collector = turn.watch, turn.collector
    stall = turn.stall = StallWatch(turn.cfg.api_stall_seconds, functools.partial(end_stalled_call, handle.client, hard_kill))
    watchdog = asyncio.ensure_future(stall.run())
    try:
        stall.awaiting_api()
        await handle.client.query(one_message(content, message_id))
        async for message in handle.client.receive_response():
            track_api_wait(stall, message)
            halted = False
            for event in [*turn.take_spend_notices(), *collector.feed(message)]:
                yield event
                if watch is not None and isinstance(event, ev.ToolUse):
                    watch.saw_tool_use(event.id, event.name, event.input)
                elif watch is not None and isinstance(event, ev.ToolResult):
                    watch.saw_result(event.tool_use_id, event.text, event.is_error)  # also calls no hook saw
                    halted = halted or watch.stop_after_tool_result(event.tool_use_id)
            if halted or collector.auth_rejected or turn.capped:  # sentinel / rejected key / spend cap: end now
                break
    finally:
        watchdog.cancel()
    if collector.auth_rejected:  # the CLI would go on retrying the rejected key for minutes
        await stop_calling(handle.client, hard_kill)
