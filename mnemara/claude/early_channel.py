"""The pipes of the Claude CLI started early, served by two threads from the moment it is spawned.

Before the SDK is imported nobody else reads or writes the early CLI's pipes, so
:class:`EarlyChannel` does, with no SDK import:

* at spawn it writes the ``initialize`` control request the SDK would write for
  Mnemara's options (:func:`initialize_request`) and keeps the CLI's answer, so
  the SDK's own ``initialize`` is answered at once when it adopts the process;
* it answers the CLI's start-up MCP messages to Mnemara's in-process server
  (``initialize``, ``notifications/initialized``, ``tools/list``) from answers
  the SDK itself gave for the same messages and the same tools
  (:mod:`mnemara.claude.startup_answers`), once the session hands them over;
  any other message (a tool call, a hook, a permission prompt) waits for the SDK;
* it writes the first user message the session pre-sends
  (:meth:`~mnemara.claude.early.EarlyCli.presend`), without waiting for the SDK.

Everything the CLI prints that the channel did not answer is kept, in order,
and handed to the adopting transport (:meth:`take_over`), which reads on
through the same thread. Writes go through one writer thread, in order, so a
big message never blocks the caller while the CLI is still booting.
"""
from __future__ import annotations

import json
import logging
import os
import queue
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mnemara.core.debuglog import log_event
from mnemara.core.mcp_names import SERVER_NAME

#: The MCP methods whose answers depend only on the server's tools (never on a call's arguments or state).
STARTUP_METHODS = ("initialize", "notifications/initialized", "tools/list")
MAX_LINE = 1024 * 1024  # the SDK's default limit for one message
_STDERR_KEPT = 50


def initialize_request(request_id: str) -> dict[str, Any]:
    """The ``initialize`` control request the SDK writes for the hooks of
    :meth:`~mnemara.claude.options.CliLauncher.options` (one ``PreToolUse`` hook that blocks on
    failure, one ``PostToolUse`` hook; callback ids numbered from 0 in that order)."""
    hooks = {"PreToolUse": [{"matcher": None, "hookCallbackIds": ["hook_0"], "onFailure": "block"}],
             "PostToolUse": [{"matcher": None, "hookCallbackIds": ["hook_1"]}]}
    return {"type": "control_request", "request_id": request_id, "request": {"subtype": "initialize", "hooks": hooks}}


def user_message_line(content: list[dict[str, Any]], message_id: str) -> str:
    """The line the SDK writes for :func:`~mnemara.claude.process.one_message` with
    ``verbatim_prompts`` on (``ClaudeSDKClient.query``)."""
    message = {"type": "user", "message": {"role": "user", "content": content}, "parent_tool_use_id": None,
               "session_id": "default", "uuid": message_id, "client_composed": True}
    return json.dumps(message) + "\n"


def mcp_request_key(message: dict[str, Any]) -> str:
    """An MCP message as a lookup key: everything but its JSON-RPC id, keys sorted."""
    return json.dumps({k: v for k, v in message.items() if k != "id"}, sort_keys=True)


@dataclass
class BadLine:
    """A stdout line that is not a JSON object the SDK could read (the transport raises on it)."""

    text: str
    error: str


Item = dict[str, Any] | BadLine | None  # None: stdout ended
Sink = Callable[[Item], object]


class EarlyChannel:
    """Reads and writes one early CLI's pipes until (and after) an SDK transport adopts it."""

    def __init__(self, popen: subprocess.Popen[bytes], log: logging.Logger) -> None:
        self.popen = popen
        self.log = log
        self._lock = threading.Lock()
        self._kept: list[Item] = []  # what the CLI printed that the channel did not answer, in order
        self._sink: Sink | None = None
        self._writes: queue.Queue[tuple[bytes | None, Callable[[BaseException | None], object] | None]] = queue.Queue()
        self._answers: dict[str, dict[str, Any]] = {}  # mcp_request_key -> the SDK's mcp_response (no id)
        self.answered: list[dict[str, Any]] = []  # the MCP messages answered here, in order (replayed to the SDK)
        self.init_id = f"mnemara_init_{os.urandom(4).hex()}"
        self.init_request = initialize_request(self.init_id)
        self._init_response: dict[str, Any] | None = None
        self._init_waiters: list[Callable[[dict[str, Any]], object]] = []
        self._stderr: list[str] = []
        self._stderr_sink: Callable[[str], None] | None = None
        self.present: str | None = None  # the user message line written before the SDK was imported
        self.ended = threading.Event()  # stdout reached its end
        threading.Thread(target=self._read, name="mnemara-early-cli-out", daemon=True).start()
        threading.Thread(target=self._read_stderr, name="mnemara-early-cli-err", daemon=True).start()
        threading.Thread(target=self._write_loop, name="mnemara-early-cli-in", daemon=True).start()
        self.write(json.dumps(self.init_request) + "\n")

    # -- writing -------------------------------------------------------------------------------
    def write(self, data: str, done: Callable[[BaseException | None], object] | None = None) -> None:
        """Queue ``data`` for the CLI's stdin (written in order); ``done`` is called from the writer thread."""
        self._writes.put((data.encode("utf-8"), done))

    def end_input(self) -> None:
        """Close the CLI's stdin once everything queued before is written."""
        self._writes.put((None, None))

    def _write_loop(self) -> None:
        stdin = self.popen.stdin
        while True:
            data, done = self._writes.get()
            error: BaseException | None = None
            try:
                if stdin is None:
                    raise BrokenPipeError("the CLI has no stdin")
                if data is None:
                    stdin.close()
                else:
                    stdin.write(data)
                    stdin.flush()
            except (OSError, ValueError) as exc:
                error = exc
            if done is not None:
                _call(done, error)
            if data is None:
                return

    # -- reading -------------------------------------------------------------------------------
    def _read(self) -> None:
        stdout = self.popen.stdout
        try:
            for raw in iter(stdout.readline, b"") if stdout is not None else ():
                item = _parse(raw)
                if item is not None:
                    self._route(item)
        except (OSError, ValueError):
            pass
        self.ended.set()
        self._route(None)

    def _read_stderr(self) -> None:
        stderr = self.popen.stderr
        try:
            for raw in iter(stderr.readline, b"") if stderr is not None else ():
                line = raw.decode("utf-8", "replace").rstrip()
                if not line:
                    continue
                with self._lock:
                    sink = self._stderr_sink
                    if sink is None:
                        self._stderr.append(line)
                        del self._stderr[:-_STDERR_KEPT]
                if sink is not None:
                    _call(sink, line)
        except (OSError, ValueError):
            pass

    def _route(self, item: Item) -> None:
        with self._lock:
            if self._init_answer(item):
                return
            if self._sink is None:
                if not self._answer(item):
                    self._kept.append(item)
                return
            sink = self._sink
        _call(sink, item)

    def _init_answer(self, item: Item) -> bool:
        """Keep the CLI's answer to the ``initialize`` written at spawn (lock held), whoever reads by then."""
        response = item.get("response") if isinstance(item, dict) and item.get("type") == "control_response" else None
        if not isinstance(response, dict) or response.get("request_id") != self.init_id:
            return False
        self._init_response = response
        waiters, self._init_waiters = self._init_waiters, []
        for waiter in waiters:
            _call(waiter, response)
        return True

    def _answer(self, item: Item) -> bool:
        """Answer ``item`` here (lock held); False when it is for the SDK."""
        if not isinstance(item, dict):
            return False
        request = item.get("request") if item.get("type") == "control_request" else None
        if not isinstance(request, dict) or request.get("subtype") != "mcp_message":
            return False
        message = request.get("message")
        if request.get("server_name") != SERVER_NAME or not isinstance(message, dict):
            return False
        if message.get("method") not in STARTUP_METHODS:
            return False
        answer = self._answers.get(mcp_request_key(message))
        if answer is None:
            return False
        mcp_response = dict(answer)
        if "id" in message:
            mcp_response = {"jsonrpc": answer.get("jsonrpc", "2.0"), "id": message["id"],
                            **{k: v for k, v in answer.items() if k != "jsonrpc"}}
        self.answered.append(message)
        self.write(json.dumps({"type": "control_response", "response": {
            "subtype": "success", "request_id": item.get("request_id"), "response": {"mcp_response": mcp_response}}})
            + "\n")
        return True

    # -- what the session hands over ------------------------------------------------------------
    def provide_answers(self, answers: dict[str, dict[str, Any]]) -> None:
        """Answer the CLI's start-up MCP messages with ``answers`` (also those already waiting)."""
        with self._lock:
            if self._sink is not None:
                return
            self._answers = dict(answers)
            waiting, self._kept = self._kept, []
            for item in waiting:
                if not self._answer(item):
                    self._kept.append(item)

    def answer_for(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """The answer given (or to be given) here to the MCP ``message`` (without its id)."""
        return self._answers.get(mcp_request_key(message))

    def on_init_response(self, callback: Callable[[dict[str, Any]], object]) -> None:
        """Call ``callback`` with the CLI's answer to the early ``initialize`` (now, or when it comes)."""
        with self._lock:
            response = self._init_response
            if response is None:
                self._init_waiters.append(callback)
                return
        _call(callback, response)

    def take_over(self, sink: Sink, stderr_sink: Callable[[str], None] | None) -> None:
        """From now on every stdout item goes to ``sink`` (those kept so far first); the channel answers
        nothing more. Stderr lines go to ``stderr_sink``."""
        with self._lock:
            kept, self._kept = self._kept, []
            for item in kept:
                _call(sink, item)
            self._sink = sink
            lines, self._stderr = self._stderr, []
            self._stderr_sink = stderr_sink
        if stderr_sink is not None:
            for line in lines:
                _call(stderr_sink, line)

    @property
    def taken(self) -> bool:
        return self._sink is not None

    def note(self, event: str, **fields: Any) -> None:
        log_event(self.log, event, **fields)


def _parse(raw: bytes) -> Item | None:
    """One stdout line as an item; blank and non-JSON lines carry none (as in the SDK)."""
    if len(raw) > MAX_LINE:
        return BadLine(raw[:200].decode("utf-8", "replace"), f"a message over {MAX_LINE} bytes")
    line = raw.decode("utf-8", "replace").strip()
    if not line.startswith("{"):
        return None
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        return BadLine(line, str(exc))
    return data if isinstance(data, dict) else None


def _call(sink: Callable[[Any], object], item: Any) -> None:
    """Hand ``item`` on from a channel thread; a failing receiver must not end the thread."""
    try:
        sink(item)
    except Exception:
        pass
