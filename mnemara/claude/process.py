"""The Claude CLI processes a session runs turns on: handles, liveness, rewinding, failure lines.

No SDK import here: these helpers only look at what ``ClaudeSDKClient`` holds, through
:mod:`mnemara.claude._private` (the one module that reads the SDK's private names).
"""
from __future__ import annotations

import asyncio
import os
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, AsyncIterator

from mnemara.claude._private import asyncio_transport, cli_process, control_sender, mark_closed, transport_loop
from mnemara.claude.locate import bundled_cli_path as bundled_cli_path, has_credentials as has_credentials
from mnemara.core.sync_runner import running_loop

if TYPE_CHECKING:
    from claude_agent_sdk import ClaudeSDKClient

    from mnemara.context.continuation import Conversation


def no_key_message() -> str:
    """The one line shown when nothing can authenticate: both ways to fix it, exactly."""
    return ("no API key: run `export ANTHROPIC_API_KEY=sk-ant-...` in the shell that starts mnemara, or sign in "
            f"with the Claude Code CLI bundled in the SDK: `{bundled_cli_path()} auth login`; your message is saved")


def env_fingerprint() -> dict[str, str]:
    return {k: v for k, v in sorted(os.environ.items()) if k.startswith(("ANTHROPIC_", "CLAUDE_", "BASH_"))}


@dataclass
class CliHandle:
    """A CLI process prepared for a turn (and, emptied again after it, for the next ones)."""

    key: str
    client: ClaudeSDKClient
    loop: asyncio.AbstractEventLoop
    ready: asyncio.Task[None]  # connecting the client
    stderr: list[str]
    turns_served: int = 0
    cost_so_far: float = 0.0  # the CLI's running total_cost_usd after the turns it served
    #: The uuid of the first user message of the conversation the CLI still holds (None: it is empty):
    #: rewinding to it empties the conversation.
    open_since: str | None = None
    last_sent: str | None = None  # the uuid of the last user message a turn sent it (the CLI asks for it to rewind)
    #: What that conversation holds in the window's terms, set by the session once the turn is stored
    #: (None: it may not be continued, only rewound).
    conversation: Conversation | None = None


def new_message_id() -> str:
    """The uuid a turn's user message is sent with (what :func:`rewind_conversation` cuts at)."""
    return str(uuid.uuid4())


async def one_message(content: list[dict[str, Any]], message_id: str | None = None) -> AsyncIterator[dict[str, Any]]:
    message: dict[str, Any] = {"type": "user", "message": {"role": "user", "content": content},
                               "parent_tool_use_id": None, "session_id": "default"}
    if message_id is not None:
        message["uuid"] = message_id
    yield message


async def rewind_conversation(client: ClaudeSDKClient, message_id: str, last_seen: str | None = None) -> bool:
    """Empty the conversation of a CLI that just finished a turn, so it can serve the next one.

    The CLI's ``rewind_conversation`` control request cuts its conversation at the
    user message sent with ``message_id`` (the turn's only one), removing it and
    everything after: the next request holds only the next message, byte for
    byte what a fresh process would send (its read-file state is reset too).
    ``/clear`` was the other route, but it leaves three text blocks of its own
    in the next request. The SDK has no public method for this request, so it
    goes through the control channel ``ClaudeSDKClient`` keeps; when that is
    missing or the CLI says no, the answer is False and the process is not reused.
    A conversation continued over several turns is cut at its first message: the CLI then
    wants ``last_seen``, the uuid of the newest user message sent (else: "stale target").
    """
    send = control_sender(client)
    if send is None:
        return False
    request = {"subtype": "rewind_conversation", "target_message_uuid": message_id}
    if last_seen is not None and last_seen != message_id:
        request["last_seen_user_message_uuid"] = last_seen
    answer = await send(request)
    return isinstance(answer, dict) and answer.get("rewound") is True


def alive(client: ClaudeSDKClient) -> bool:
    """Is the CLI process of ``client`` still running (e.g. not killed by a terminal's Ctrl+C)?"""
    process = cli_process(client)
    return process is not None and process.returncode is None


def hard_kill(client: ClaudeSDKClient) -> None:
    """Last resort: kill the CLI process of ``client`` directly."""
    process = cli_process(client)
    try:
        if process is not None and process.returncode is None:
            process.kill()
    except (ProcessLookupError, OSError, RuntimeError):
        pass


def process_transport(client: ClaudeSDKClient) -> asyncio.SubprocessTransport | None:
    """The asyncio subprocess transport of ``client``'s CLI process (None when there is none).
    Take it before ``disconnect()``, which forgets the SDK transport that leads to it."""
    return asyncio_transport(cli_process(client))


def release_transport(transport: asyncio.SubprocessTransport | None) -> None:
    """Close a CLI process's asyncio transport (from :func:`process_transport`) on its own loop.

    anyio closes only the pipes of a process that ended normally, and nothing at all of one
    that was killed; a transport left open is closed by the garbage collector, which may run
    after its loop has stopped and print "RuntimeError: Event loop is closed" into whatever the
    process is writing at that moment. Closing it here (idempotent; it also kills a process
    still running) leaves nothing for the collector to do. A transport whose loop has closed
    already (turns run under an ``asyncio.run()`` that returned before the session was closed) is
    killed and marked closed instead.
    """
    if transport is None or transport.is_closing():
        return
    loop = transport_loop(transport)
    try:
        if loop is None or running_loop() is loop:
            transport.close()
        elif not loop.is_closed():
            loop.call_soon_threadsafe(transport.close)
        else:
            _end_without_loop(transport)
    except RuntimeError:  # its loop closed meanwhile
        _end_without_loop(transport)


def _end_without_loop(transport: asyncio.SubprocessTransport) -> None:
    """A transport whose loop has closed: kill its process and mark it closed (:func:`mark_closed`)."""
    try:
        if transport.get_returncode() is None:
            transport.kill()
    except (ProcessLookupError, OSError, RuntimeError):
        pass
    mark_closed(transport)


def cli_failure(stderr: list[str]) -> str:
    tail = " ".join(line.strip() for line in stderr[-3:] if line.strip())
    return "the Claude CLI ended before finishing the turn" + (f": {tail[:300]}" if tail else "")


def exception_message(exc: BaseException, stderr: list[str]) -> str:
    text = " ".join(str(exc).split())
    tail = " ".join(line.strip() for line in stderr[-3:] if line.strip())
    if "not found" in text.lower() and "claude" in text.lower():
        return f"the Claude CLI could not be started: {text[:300]}"
    code = getattr(exc, "exit_code", None)
    if code is not None:
        msg = f"the Claude CLI stopped unexpectedly (exit code {code}); your message is saved, send again to retry"
    else:
        msg = f"the Claude CLI failed: {text[:300]}"
    return msg + (f" ({tail[:200]})" if tail else "")
