"""The SDK's custom transport over a Claude CLI process that was started before the SDK was imported.

``ClaudeSDKClient(options, transport=...)`` takes any
:class:`claude_agent_sdk.Transport`; the SDK then runs its control protocol
(initialize, hooks, in-process MCP servers, permission prompts) over it as over
the process it would have started itself. :class:`AdoptedTransport` speaks to
the process through its :class:`~mnemara.claude.early_channel.EarlyChannel`,
which has served it since it was spawned, and reconciles what happened before:

* the SDK's ``initialize`` is answered with the CLI's answer to the same request
  the channel wrote at spawn (a different request fails ``connect()``, and the
  launcher starts a CLI of its own);
* the MCP start-up messages the channel answered from recorded answers are asked
  of the SDK's own server again, in order, before anything else reaches the SDK
  (its server then has the handshake the CLI made; a different answer is logged
  and replaces the record);
* a user message the session already sent before the SDK was imported
  (:meth:`~mnemara.claude.early.EarlyCli.presend`) is not written twice: the SDK's
  line must be exactly the one written, else the process is killed and the write fails.

The SDK's answers to start-up messages, and whether the early start's copies of
its wire format were exact, are kept for the next run (:mod:`mnemara.claude.startup_answers`).

Its ``_process`` attribute answers what :mod:`mnemara.claude._private` reads of the
SDK's own transport (``returncode``, ``kill()``, and ``_transport`` for
:func:`~mnemara.claude.process.release_transport`), so the session's pool keeps,
rewinds and ends an adopted process like any other.
"""
from __future__ import annotations

import asyncio
import json
import subprocess
from collections import deque
from collections.abc import AsyncIterator
from typing import Any

from claude_agent_sdk import CLIConnectionError, CLIJSONDecodeError, ProcessError, Transport

from mnemara.claude import startup_answers
from mnemara.claude.early_channel import STARTUP_METHODS, BadLine, EarlyChannel, Item, mcp_request_key, user_message_line
from mnemara.core.mcp_names import SERVER_NAME

_REPLAY_ID = "mnemara_replay_"


class _Pipes:
    """What ``release_transport`` closes: the process (its pipes belong to the channel's threads)."""

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        self.popen = popen
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False

    def is_closing(self) -> bool:
        return self._closed

    def close(self) -> None:
        """A process still running is killed (as closing an asyncio subprocess does)."""
        self._closed = True
        if self.popen.poll() is None:
            try:
                self.popen.kill()
            except OSError:
                pass


class _ProcessView:
    """What :mod:`mnemara.claude.process` reads of a CLI process, over a ``Popen``."""

    def __init__(self, popen: subprocess.Popen[bytes], pipes: _Pipes) -> None:
        self.popen = popen
        self._transport = pipes

    @property
    def pid(self) -> int:
        return self.popen.pid

    @property
    def returncode(self) -> int | None:
        return self.popen.poll()

    def kill(self) -> None:
        if self.popen.poll() is None:
            self.popen.kill()


class AdoptedTransport(Transport):
    """A running CLI process, served until now by an :class:`EarlyChannel`, handed to the SDK."""

    def __init__(self, channel: EarlyChannel, options: Any, tools_key: str = "", sdk_version: str = "") -> None:
        self.channel = channel
        self.popen = channel.popen
        self.tools_key = tools_key  # where the SDK's answers to start-up messages are recorded ("" = not)
        self.sdk_version = sdk_version
        self._stderr_callback = options.stderr
        self._pipes = _Pipes(self.popen)
        self._process: _ProcessView | None = _ProcessView(self.popen, self._pipes)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._inbox: asyncio.Queue[Item] | None = None
        self._held: deque[Item] = deque()  # from the CLI while the SDK is asked the replays
        self._replays: list[dict[str, Any]] = []
        self._replayed = 0
        self._startup_requests: dict[str, dict[str, Any]] = {}  # request id -> MCP start-up message
        self._init_matched = False
        self._present_pending = channel.present is not None
        self._ready = False

    async def connect(self) -> None:
        if self._ready:
            return
        if self.popen.poll() is not None or self.channel.ended.is_set():
            raise CLIConnectionError(f"the Claude CLI started early has ended (exit code {self.popen.poll()})")
        loop = self._loop = asyncio.get_running_loop()
        self._pipes._loop = loop
        self._inbox = asyncio.Queue()
        self.channel.take_over(lambda item: _on_loop(loop, self._from_cli, item), self._stderr_callback)
        self._replays = list(self.channel.answered)  # frozen now: the channel answers nothing more
        if self._replays:
            self._ask_replay()
        self._ready = True

    # -- from the CLI --------------------------------------------------------------------------
    def _from_cli(self, item: Item) -> None:
        if isinstance(item, dict) and item.get("type") == "control_request":
            request = item.get("request") or {}
            message = request.get("message") if isinstance(request, dict) else None
            if (request.get("subtype") == "mcp_message" and request.get("server_name") == SERVER_NAME
                    and isinstance(message, dict) and message.get("method") in STARTUP_METHODS):
                self._startup_requests[str(item.get("request_id"))] = message
        if self._replayed < len(self._replays):
            self._held.append(item)
        elif self._inbox is not None:
            self._inbox.put_nowait(item)

    def _ask_replay(self) -> None:
        assert self._inbox is not None
        message = self._replays[self._replayed]
        self._inbox.put_nowait({"type": "control_request", "request_id": f"{_REPLAY_ID}{self._replayed}",
                                "request": {"subtype": "mcp_message", "server_name": SERVER_NAME, "message": message}})

    def _replay_answered(self, response: dict[str, Any]) -> None:
        assert self._inbox is not None
        message = self._replays[self._replayed]
        sdk_answer = ((response.get("response") or {}).get("mcp_response")
                      if response.get("subtype") == "success" else None)
        given = self.channel.answer_for(message)
        if not isinstance(sdk_answer, dict) or {k: v for k, v in sdk_answer.items() if k != "id"} != given:
            self.channel.note("early_mcp_answer_changed", level="warning", method=message.get("method"))
        if isinstance(sdk_answer, dict):
            self._record(message, sdk_answer)
        self._replayed += 1
        if self._replayed < len(self._replays):
            self._ask_replay()
            return
        while self._held:
            self._inbox.put_nowait(self._held.popleft())

    def _record(self, message: dict[str, Any], mcp_response: dict[str, Any]) -> None:
        if self.tools_key:
            startup_answers.record(self.tools_key, mcp_request_key(message), mcp_response)

    # -- to the CLI ----------------------------------------------------------------------------
    async def write(self, data: str) -> None:
        if not self._ready or self._inbox is None:
            raise CLIConnectionError("ProcessTransport is not ready for writing")
        code = self.popen.poll()
        if code is not None:
            raise CLIConnectionError(f"Cannot write to terminated process (exit code: {code})")
        try:
            message = json.loads(data)
        except ValueError:
            message = None
        if isinstance(message, dict) and self._handled_here(message, data):
            return
        await self._send(data)

    def _handled_here(self, message: dict[str, Any], data: str) -> bool:
        """Answer or drop what the process already had before the SDK came; False to write it."""
        kind = message.get("type")
        request = message.get("request") if kind == "control_request" else None
        if isinstance(request, dict) and request.get("subtype") == "initialize" and not self._init_matched:
            if request != self.channel.init_request["request"]:
                self._fail("early_cli_initialize_differs", "the SDK's initialize differs from the one written at spawn")
            self._init_matched = True
            loop, inbox, request_id = self._loop, self._inbox, message.get("request_id")
            assert loop is not None and inbox is not None
            self.channel.on_init_response(lambda answer: _on_loop(
                loop, inbox.put_nowait, {"type": "control_response", "response": {**answer, "request_id": request_id}}))
            return True
        response = message.get("response") if kind == "control_response" else None
        if isinstance(response, dict):
            request_id = str(response.get("request_id"))
            if request_id.startswith(_REPLAY_ID) and self._replayed < len(self._replays):
                self._replay_answered(response)
                return True
            startup = self._startup_requests.pop(request_id, None)
            mcp_response = (response.get("response") or {}).get("mcp_response")
            if startup is not None and response.get("subtype") == "success" and isinstance(mcp_response, dict):
                self._record(startup, mcp_response)
            return False
        if kind == "user":
            return self._user_message(message, data)
        return False

    def _user_message(self, message: dict[str, Any], data: str) -> bool:
        inner = message.get("message") or {}
        content, uuid = inner.get("content"), message.get("uuid")
        exact = isinstance(content, list) and isinstance(uuid, str) and user_message_line(content, uuid) == data
        if self._present_pending:
            self._present_pending = False
            if data != self.channel.present:
                self._fail("early_presend_differs", "the first message was sent before the SDK came, and differs")
            return True  # written before the SDK was imported
        if exact and self._init_matched and self.sdk_version:
            startup_answers.mark_verified(self.sdk_version)  # the early copies of the wire format held here
        return False

    def _fail(self, event: str, why: str) -> None:
        self.channel.note(event, level="error")
        startup_answers.forget_verified()
        self._pipes.close()
        self._ready = False
        raise CLIConnectionError(why)

    async def _send(self, data: str) -> None:
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()

        def settle(error: BaseException | None) -> None:
            if done.done():
                return
            if error is None:
                done.set_result(None)
            else:
                done.set_exception(CLIConnectionError(f"Failed to write to process stdin: {error}"))

        self.channel.write(data, lambda error: _on_loop(loop, settle, error))
        try:
            await done
        except CLIConnectionError:
            self._ready = False
            raise

    async def end_input(self) -> None:
        self.channel.end_input()

    def read_messages(self) -> AsyncIterator[dict[str, Any]]:
        return self._read_messages()

    async def _read_messages(self) -> AsyncIterator[dict[str, Any]]:
        if self._inbox is None:
            raise CLIConnectionError("Not connected")
        while (item := await self._inbox.get()) is not None:
            if isinstance(item, BadLine):
                raise CLIJSONDecodeError(item.text[:200], ValueError(item.error))
            yield item
        code = await self._wait(None)
        if code is not None and code != 0:
            raise ProcessError(f"Command failed with exit code {code}", exit_code=code,
                               stderr="Check stderr output for details")

    async def _wait(self, seconds: float | None) -> int | None:
        """The exit code once the process has ended (None when ``seconds`` pass first)."""
        loop = asyncio.get_running_loop()
        deadline = None if seconds is None else loop.time() + seconds
        while (code := self.popen.poll()) is None:
            if deadline is not None and loop.time() >= deadline:
                return None
            await asyncio.sleep(0.02)
        return code

    async def close(self) -> None:
        """Close stdin, give the CLI 5 s to exit, then SIGTERM, then SIGKILL (as the SDK's transport)."""
        if self._process is None:
            self._ready = False
            return
        try:
            self._ready = False
            self.channel.end_input()
            if await self._wait(5) is None:
                self.popen.terminate()
                if await self._wait(5) is None:
                    self.popen.kill()
                    await self._wait(5)
        finally:
            self._pipes.close()
            self._process = None

    def is_ready(self) -> bool:
        return self._ready


def _on_loop(loop: asyncio.AbstractEventLoop, callback: Any, item: Any) -> None:
    """Run ``callback(item)`` on ``loop`` from a channel thread; nothing when the loop has closed meanwhile
    (the session ended while the process was still printing)."""
    try:
        loop.call_soon_threadsafe(callback, item)
    except RuntimeError:
        pass
