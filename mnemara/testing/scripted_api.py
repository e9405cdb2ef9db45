"""A scripted Anthropic Messages API on 127.0.0.1, for testing agents offline.

The real Claude Code CLI (driven by the real claude-agent-sdk) talks to this
server exactly as it would to Anthropic: ``POST /v1/messages`` (streamed as
Server-Sent Events or as one JSON body) and ``POST /v1/messages/count_tokens``.
Every request is recorded; every answer comes from a script you queue::

    from mnemara.testing.scripted_api import ScriptedAPI, reply, text, tool_use

    with ScriptedAPI() as api:
        api.push(reply(tool_use("mcp__mnemara__write_memory", {"text": "hi"})),
                 reply(text("Saved.")))
        os.environ.update(api.env())          # ANTHROPIC_BASE_URL etc.
        ...run a turn...
        assert api.requests[1].tool_results()

Failures are scripted the same way: :func:`http_error` (429, 500, 529
overloaded, 401, 403), :func:`drop` (the connection closes mid-answer),
:func:`stall` (the stream goes silent mid-answer and stays open) and
``reply(..., delay=...)`` (a slow answer, e.g. to test ``/stop``).
When the queue is empty the server answers with ``default`` (a short text);
set ``api.default = http_error(500)`` for a fault that persists on every retry.
Every request is priced under Anthropic's prompt-cache rules (:mod:`mnemara.testing.prompt_cache`):
the answer's ``usage`` carries ``input_tokens``, ``cache_read_input_tokens``,
``cache_creation_input_tokens`` and the 5-minute/1-hour split, and so does
``api.requests[i].usage``. Pass ``clock=ManualClock()`` to test expiry without sleeping; a
reply's own ``usage`` keys override the computed ones. Only the standard library and
``mnemara.core`` are used, so importing this module is cheap.
"""
from __future__ import annotations

import json
import select
import socket
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterator

from mnemara.testing.prompt_cache import CacheRuleError, ManualClock, PromptCache

__all__ = [
    "ScriptedAPI",
    "Reply",
    "RecordedRequest",
    "reply",
    "text",
    "thinking",
    "tool_use",
    "http_error",
    "drop",
    "stall",
    "test_env",
    "PromptCache",
    "ManualClock",
]

# -- the script -------------------------------------------------------------------


def text(value: str) -> dict[str, Any]:
    """A text block of a scripted answer."""
    return {"type": "text", "text": value}


def thinking(value: str, signature: str = "scripted-signature") -> dict[str, Any]:
    """A thinking block of a scripted answer."""
    return {"type": "thinking", "thinking": value, "signature": signature}


def tool_use(name: str, input: dict[str, Any] | None = None, id: str | None = None) -> dict[str, Any]:
    """A tool_use block; the CLI runs the tool and sends its result in the next request."""
    return {"type": "tool_use", "id": id or f"toolu_{uuid.uuid4().hex[:20]}", "name": name, "input": input or {}}


@dataclass
class Reply:
    """One scripted answer to one ``POST /v1/messages``.

    ``blocks`` are sent in order. ``stop_reason`` defaults to ``tool_use`` when a
    tool_use block is present, else ``end_turn``. ``delay`` seconds pass before
    every streamed chunk (the whole answer when not streaming). ``status`` other
    than 200 makes it an HTTP error with ``error_type``; ``drop_after`` closes
    the connection after that many streamed events; ``stall_after`` sends that
    many events and then nothing more, holding the connection open until the
    client gives up or the server stops.
    """

    blocks: list[dict[str, Any]] = field(default_factory=list)
    stop_reason: str | None = None
    delay: float = 0.0
    status: int = 200
    error_type: str = ""
    error_message: str = ""
    drop_after: int | None = None
    stall_after: int | None = None
    chunk_size: int = 8
    usage: dict[str, Any] = field(default_factory=lambda: {"output_tokens": 7})  # input side: from the cache emulation

    @property
    def final_stop_reason(self) -> str:
        if self.stop_reason:
            return self.stop_reason
        return "tool_use" if any(b["type"] == "tool_use" for b in self.blocks) else "end_turn"


def reply(*blocks: dict[str, Any] | str, **kwargs: Any) -> Reply:
    """An answer made of blocks (a bare string is a text block)."""
    return Reply(blocks=[text(b) if isinstance(b, str) else b for b in blocks], **kwargs)


_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


def http_error(status: int, message: str = "", error_type: str = "") -> Reply:
    """An HTTP error answer (e.g. 401, 429, 500, 529 = overloaded)."""
    kind = error_type or _ERROR_TYPES.get(status, "api_error")
    return Reply(status=status, error_type=kind, error_message=message or f"scripted {kind}")


def drop(after_events: int = 2, *blocks: dict[str, Any] | str) -> Reply:
    """An answer whose connection is closed after ``after_events`` SSE events."""
    return reply(*(blocks or ("this answer will be cut off",)), drop_after=after_events)


def stall(after_events: int = 3, *blocks: dict[str, Any] | str) -> Reply:
    """An answer whose stream goes silent after ``after_events`` SSE events (connection kept open)."""
    return reply(*(blocks or ("this answer will stall",)), stall_after=after_events)


# -- recording --------------------------------------------------------------------


@dataclass
class RecordedRequest:
    """One request as it reached the server."""

    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    at: float
    usage: dict[str, Any] = field(default_factory=dict)  # the usage answered (messages requests)

    @property
    def is_messages(self) -> bool:
        return self.path.split("?")[0] == "/v1/messages"

    @property
    def system_text(self) -> str:
        """The request's ``system`` joined into one string."""
        system = self.body.get("system", "")
        if isinstance(system, str):
            return system
        return "\n".join(b.get("text", "") for b in system if isinstance(b, dict))

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages", []))

    def blocks(self, role: str | None = None) -> list[dict[str, Any]]:
        """Every content block of every message (of ``role`` if given), in order."""
        out: list[dict[str, Any]] = []
        for message in self.messages:
            if role and message.get("role") != role:
                continue
            content = message.get("content")
            if isinstance(content, str):
                out.append(text(content))
            elif isinstance(content, list):
                out.extend(b for b in content if isinstance(b, dict))
        return out

    def user_text(self) -> str:
        """All text the user side sent in this request, joined by newlines."""
        return "\n".join(b.get("text", "") for b in self.blocks("user") if b.get("type") == "text")

    def tool_results(self) -> list[dict[str, Any]]:
        """Every tool result of the request (a continued CLI conversation holds earlier turns' too)."""
        return [b for b in self.blocks("user") if b.get("type") == "tool_result"]

    def new_tool_results(self) -> list[dict[str, Any]]:
        """The tool results this request answers with: those of its last message."""
        last = self.messages[-1] if self.messages else {}
        content = last.get("content") if last.get("role") == "user" else None
        return [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"] if isinstance(content, list) else []

    def tool_names(self) -> list[str]:
        return [t.get("name", "") for t in self.body.get("tools", []) if isinstance(t, dict)]


# -- the server ---------------------------------------------------------------------


class ScriptedAPI:
    """A threaded HTTP server speaking the Messages API from a script.

    Use as a context manager or call :meth:`start` / :meth:`stop`. Thread-safe:
    tests push replies from the main thread while the CLI calls from another.
    """

    def __init__(self, replies: list[Reply] | None = None, *, default: Reply | None = None, host: str = "127.0.0.1",
                 port: int = 0, responder: Callable[[RecordedRequest], Reply | None] | None = None,
                 clock: Callable[[], float] | None = None, prompt_cache: PromptCache | None = None) -> None:
        self._lock = threading.Lock()
        self.prompt_cache = prompt_cache or PromptCache(clock or time.monotonic)
        self._queue: list[Reply] = list(replies or [])
        self.default = default or reply("(scripted API: no reply was queued)")
        self.responder = responder  # asked when the queue is empty: a reply built from the request, or None
        self.requests: list[RecordedRequest] = []
        self._arrived = threading.Condition(self._lock)
        self._open = 0  # connections a handler is serving right now
        self._stopping = threading.Event()  # releases stalled answers when the server stops
        self._server = _CountingServer(self, (host, port), _make_handler(self))
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    # lifecycle
    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> "ScriptedAPI":
        if self._thread is None:
            self._thread = threading.Thread(target=self._server.serve_forever, name="scripted-api", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._server.server_close()

    def __enter__(self) -> "ScriptedAPI":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def env(self, api_key: str = "sk-ant-scripted-test-key", max_retries: int = 0) -> dict[str, str]:
        """Environment variables that point the Claude CLI at this server."""
        return test_env(self.base_url, api_key=api_key, max_retries=max_retries)

    # script
    def push(self, *replies: Reply | str) -> None:
        """Queue answers (a bare string is a one-text-block reply)."""
        with self._lock:
            self._queue.extend(reply(r) if isinstance(r, str) else r for r in replies)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def clear(self) -> None:
        """Forget the queue and the recorded requests (the prompt cache stays: ``prompt_cache.clear()``)."""
        with self._lock:
            self._queue.clear()
            self.requests.clear()

    # inspection
    def message_requests(self) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.is_messages]

    @property
    def last(self) -> RecordedRequest:
        reqs = self.message_requests()
        if not reqs:
            raise AssertionError("the scripted API has received no /v1/messages request")
        return reqs[-1]

    def wait_for_requests(self, count: int, timeout: float = 30.0) -> bool:
        """Block until ``count`` messages requests have arrived (or timeout)."""
        deadline = time.monotonic() + timeout
        with self._arrived:
            while sum(1 for r in self.requests if r.is_messages) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._arrived.wait(left)
        return True

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """Block until no connection is open or waiting to be accepted (or timeout): every request a
        client that has since gone sent is then recorded. Use it instead of sleeping before asserting
        that no further request arrived."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._arrived:  # atomic with the server's accept: a connection is either queued or counted
                if self._open == 0 and not select.select([self._server.socket], [], [], 0)[0]:
                    return True
            time.sleep(0.02)
        return False

    # used by the handler
    def _record(self, req: RecordedRequest) -> Reply | None:
        with self._arrived:
            self.requests.append(req)
            self._arrived.notify_all()
            if not req.is_messages:
                return None
            try:  # in arrival order, under the lock: each request sees the cache its predecessors left
                cached = self.prompt_cache.account(req.body).as_usage()
            except CacheRuleError as exc:
                return http_error(400, str(exc))  # refused before the model: the script is not consumed
            answer = self._queue.pop(0) if self._queue else None
        if answer is None:
            answer = self.responder(req) if self.responder is not None else None  # outside the lock: it may be slow
            answer = answer or self.default
        req.usage = {**cached, **answer.usage}
        return answer


def test_env(base_url: str, *, api_key: str = "sk-ant-scripted-test-key", max_retries: int = 0) -> dict[str, str]:
    """The environment that sends the CLI to ``base_url`` with bounded retries and no side traffic."""
    return {
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": api_key,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "CLAUDE_CODE_MAX_RETRIES": str(max_retries),
    }


def _sse_events(rep: Reply, model: str, usage: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """The SSE (event, data) pairs of a streamed answer; ``usage`` is the whole answer's."""
    msg_id = f"msg_{uuid.uuid4().hex[:24]}"
    usage_in = {**usage, "output_tokens": 1}
    yield "message_start", {"type": "message_start", "message": {
        "id": msg_id, "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": usage_in}}
    for index, block in enumerate(rep.blocks):
        kind = block["type"]
        if kind == "text":
            yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}
            for piece in _chunks(block["text"], rep.chunk_size):
                yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}}
        elif kind == "thinking":
            yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}
            for piece in _chunks(block["thinking"], rep.chunk_size):
                yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": {"type": "thinking_delta", "thinking": piece}}
            yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": {"type": "signature_delta", "signature": block.get("signature", "sig")}}
        elif kind == "tool_use":
            yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": {
                "type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}}
            for piece in _chunks(json.dumps(block.get("input", {})), max(rep.chunk_size, 16)):
                yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": piece}}
        else:
            raise ValueError(f"unknown scripted block type {kind!r}")
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield "message_delta", {"type": "message_delta", "delta": {"stop_reason": rep.final_stop_reason, "stop_sequence": None},
                            "usage": {k: v for k, v in usage.items() if k != "cache_creation"}}
    yield "message_stop", {"type": "message_stop"}


def _chunks(value: str, size: int) -> list[str]:
    size = max(1, size)
    return [value[i:i + size] for i in range(0, len(value), size)] or [""]


def _message_json(rep: Reply, model: str, usage: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": f"msg_{uuid.uuid4().hex[:24]}", "type": "message", "role": "assistant", "model": model,
        "content": rep.blocks, "stop_reason": rep.final_stop_reason, "stop_sequence": None, "usage": usage,
    }


class _CountingServer(ThreadingHTTPServer):
    """Counts the connections it has accepted and not yet closed in ``api._open``.

    The count goes up under the API's lock in the same step as ``accept()``, so
    :meth:`ScriptedAPI.wait_idle` (which looks at the count and the listening queue under that lock)
    never sees a connection in neither place, as it could when a handler thread counted it later.
    """

    def __init__(self, api: ScriptedAPI, address: tuple[str, int], handler: type[BaseHTTPRequestHandler]) -> None:
        self.api = api
        super().__init__(address, handler)

    def get_request(self) -> tuple[socket.socket, Any]:
        with self.api._arrived:
            request, address = self.socket.accept()
            self.api._open += 1
        return request, address

    def shutdown_request(self, request: Any) -> None:  # once per accepted connection, whatever happened
        try:
            super().shutdown_request(request)
        finally:
            with self.api._arrived:
                self.api._open -= 1


def _make_handler(api: ScriptedAPI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # silence stderr
            return

        def _send_json(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("request-id", f"req_{uuid.uuid4().hex[:16]}")
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            api._record(RecordedRequest("GET", self.path, dict(self.headers), {}, time.time()))
            self._send_json(404, {"type": "error", "error": {"type": "not_found_error", "message": "not found"}})

        def do_HEAD(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                body = {"_raw": raw.decode("utf-8", "replace")}
            path = self.path.split("?")[0]
            rec = RecordedRequest("POST", self.path, dict(self.headers), body, time.time())
            if path == "/v1/messages/count_tokens":
                api._record(rec)
                self._send_json(200, {"input_tokens": max(1, len(raw) // 4)})
                return
            if path != "/v1/messages":
                api._record(rec)
                self._send_json(404, {"type": "error", "error": {"type": "not_found_error", "message": f"no route {path}"}})
                return
            rep = api._record(rec)
            assert rep is not None
            self._answer(rep, body, {"output_tokens": 0, **rec.usage})

        def _hold_silently(self) -> None:
            """Send nothing and keep the connection open until the client closes it or the server stops."""
            while not api._stopping.wait(0.2):
                readable, _, _ = select.select([self.connection], [], [], 0)
                if readable and not self.connection.recv(1, socket.MSG_PEEK):
                    return  # the client hung up

        def _answer(self, rep: Reply, body: dict[str, Any], usage: dict[str, Any]) -> None:
            model = str(body.get("model", "claude-scripted"))
            if rep.status != 200:
                if rep.delay:
                    time.sleep(rep.delay)
                headers = {"retry-after": "0"} if rep.status in (429, 529) else {}
                if rep.status >= 500 or rep.status == 429:
                    headers["x-should-retry"] = "true"
                self._send_json(rep.status, {"type": "error", "error": {"type": rep.error_type, "message": rep.error_message}}, headers)
                return
            if not body.get("stream"):
                if rep.delay:
                    time.sleep(rep.delay)
                if rep.drop_after is not None:
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                self._send_json(200, _message_json(rep, model, usage))
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            try:
                for count, (event, data) in enumerate(_sse_events(rep, model, usage)):
                    if rep.drop_after is not None and count >= rep.drop_after:
                        self.wfile.flush()
                        self.connection.shutdown(2)
                        return
                    if rep.stall_after is not None and count >= rep.stall_after:
                        self.wfile.flush()
                        self._hold_silently()
                        return
                    if rep.delay:
                        time.sleep(rep.delay)
                    self.wfile.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
                    self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError, OSError):
                return

    return Handler
