"""The request recorder: a loopback HTTP relay between the Claude CLI and the Messages API.

The CLI of a session is started with ``ANTHROPIC_BASE_URL`` pointing here
(:meth:`RequestRecorder.cli_env`). Every request goes on to the real base URL
as it came (same method, path, headers and body bytes) and the answer streams
back chunk by chunk as it arrives, its bytes untouched. For each
``POST /v1/messages`` the body is kept as the API received it, after the CLI
added its own parts; headers are never kept except a harmless few
(:data:`~mnemara.store.request_log.KEPT_HEADERS`), so no key or token reaches
the disk. The answer's ``usage`` is read from the copy streaming past.

The call is written to ``requests/`` (:class:`~mnemara.store.request_log.RequestLog`)
after its answer has been passed on, so recording never delays the first byte.

The front door: the loopback port is visible to every local user (``/proc/net/tcp``), so
the recorder serves only its own CLI. Each recorder draws a random secret and gives the CLI a
base URL whose path starts with it (``http://127.0.0.1:PORT/<secret>``; the CLI keeps a base
URL's path and puts ``/v1/messages`` after it). A request whose first path segment is not that
secret (compared in constant time, :meth:`RequestRecorder.admit`) gets 403 before its body is
read: it is neither forwarded nor recorded. A request larger than :data:`MAX_REQUEST_BYTES`
gets 413, and a body larger than :data:`MAX_LOGGED_BYTES` is forwarded but kept as a one-line
note in its place.

:func:`request_env` is what a launch asks for: one recorder per instance and API
in this process (the early CLI of ``mnemara run`` and the session share it, so
the early process is still the one the session would start), or nothing when
``request_log_calls`` is 0, the CLI talks to Bedrock, Vertex or Foundry, or it
reaches the API through a proxy, a client certificate or a unix socket
(:data:`STEP_ASIDE`).
"""
from __future__ import annotations

import hmac
import http.client
import json
import os
import secrets
import select
import socket
import ssl
import sys
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable
from urllib.parse import urlsplit

from mnemara.core.debuglog import now_iso
from mnemara.store.request_log import RecordedCall, RequestLog, safe_headers

if TYPE_CHECKING:
    from mnemara.claude.spend_gate import SpendGate

DEFAULT_BASE_URL = "https://api.anthropic.com"
HOP_BY_HOP = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailers",
              "transfer-encoding", "upgrade", "host"}
CHUNK = 64 * 1024
UPSTREAM_TIMEOUT = 600.0
POLL_SECONDS = 0.05  # how soon stop() returns (serve_forever checks for shutdown this often)
#: The largest request relayed (the Messages API's own limit is 32 MB); larger ones get 413, unread.
MAX_REQUEST_BYTES = 32 * 1024 * 1024
#: The largest request body kept in ``requests/`` per call; a larger one is relayed, and kept as a note.
MAX_LOGGED_BYTES = 4 * 1024 * 1024
#: Seconds a new connection has to present this recorder's secret (its first request line and headers, read
#: whole): an idle or dribbling connection (slowloris) is closed after them. The CLI sends its request at once.
HEADER_DEADLINE = 10.0
#: Connections open at once that have not yet shown the secret; one more closes the oldest of them, so a
#: flood from another local user can hold no thread for long and never keeps the CLI's connection out.
MAX_UNADMITTED = 32
#: Connections open at once in all (a thread each); past it a new connection is closed at once.
MAX_CONNECTIONS = 128


#: Routes on which the CLI does not talk to ANTHROPIC_BASE_URL: nothing is recorded there.
OTHER_ROUTES = ("CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY")
#: Ways of reaching the API the relay does not reproduce (a proxy, a client certificate, a socket): with
#: any of them set the CLI goes to the API itself, unrecorded, rather than through a relay that would fail.
STEP_ASIDE = (*OTHER_ROUTES, "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy",
              "CLAUDE_CODE_CLIENT_CERT", "ANTHROPIC_UNIX_SOCKET")
_running: dict[tuple[str, str], "RequestRecorder"] = {}
_running_lock = threading.Lock()


def upstream_base_url(env: dict[str, str] | None = None) -> str:
    """Where the CLI would have gone: ``ANTHROPIC_BASE_URL`` of this process, else the public API."""
    env = dict(os.environ if env is None else env)
    return (env.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")


class UsageReader:
    """Follows an answer's bytes as they pass and keeps its ``usage`` (SSE or one JSON body)."""

    def __init__(self, encoding: str = "") -> None:
        encoding = encoding.lower()
        self._inflate = zlib.decompressobj(16 + zlib.MAX_WBITS) if encoding == "gzip" else (
            zlib.decompressobj() if encoding == "deflate" else None)
        self.readable = encoding in ("", "identity", "gzip", "deflate")
        self._partial = b""
        self._whole: list[bytes] = []
        self.usage: dict[str, Any] = {}

    def feed(self, data: bytes) -> None:
        if not self.readable:
            return
        if self._inflate is not None:
            data = self._inflate.decompress(data)
        lines = (self._partial + data).split(b"\n")
        self._partial = lines.pop()
        for line in lines:
            self._line(line)
        if len(self._whole) < 64:  # a non-streamed answer: kept whole (bounded) to read its usage at the end
            self._whole.append(data)

    def _line(self, line: bytes) -> None:
        if not line.startswith(b"data:") or b'"usage"' not in line:
            return
        try:
            event = json.loads(line[5:])
        except ValueError:
            return
        usage = (event.get("message") or {}).get("usage") if event.get("type") == "message_start" else event.get("usage")
        if isinstance(usage, dict):
            self.usage.update({k: v for k, v in usage.items() if v is not None})

    def finish(self) -> dict[str, Any]:
        if self._partial:
            self._line(self._partial)
        if not self.usage and self._whole:
            try:
                body = json.loads(b"".join(self._whole))
            except ValueError:
                body = None
            if isinstance(body, dict) and isinstance(body.get("usage"), dict):
                self.usage = dict(body["usage"])
        return self.usage


class RequestRecorder:
    """One loopback relay per session, started on first use (:meth:`start`), stopped by :meth:`stop`."""

    def __init__(self, log: RequestLog, upstream: str | None = None,
                 on_call: Callable[[RecordedCall], None] | None = None) -> None:
        self.log = log
        self.upstream = (upstream or upstream_base_url()).rstrip("/")
        self.on_call = on_call
        #: The spend gate (:mod:`mnemara.claude.spend_gate`): asked before a messages call is forwarded,
        #: told of every call after; set by the session that owns this instance's CLIs.
        self.gate: SpendGate | None = None
        #: A spend cap is set: until a gate is attached, messages calls are refused, not relayed unchecked.
        self.gate_required = False
        parts = urlsplit(self.upstream)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"ANTHROPIC_BASE_URL {self.upstream!r} is not an http(s) URL")
        self._scheme, self._host, self._port = parts.scheme, parts.hostname, parts.port
        self._prefix = parts.path.rstrip("/")
        self._secret = secrets.token_urlsafe(24).encode("ascii")  # the CLI's key to this door, per recorder
        self._refusals = 0
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        assert self._server is not None, "start() the recorder first"
        return f"http://127.0.0.1:{self._server.server_address[1]}/{self._secret.decode('ascii')}"

    def admit(self, path: str) -> str | None:
        """The front door, the first thing a request meets: the path to relay (the secret segment taken
        off), or None when the request's first path segment is not this recorder's secret."""
        if not path.startswith("/"):
            return None
        first, slash, rest = path[1:].partition("/")
        if not hmac.compare_digest(first.encode("utf-8", "surrogateescape"), self._secret):
            return None
        return "/" + rest

    def note_refusal(self, status: int) -> None:
        """The first refused request of this recorder gets one debug.log line (never its path or body)."""
        self._refusals += 1
        if self._refusals == 1:
            from mnemara.core.debuglog import DEBUG_LOG, log_event

            log_event(self.log.folder.parent / DEBUG_LOG, "request_recorder_refused", level="warning",
                      status=status, why="a request without this session's secret, or too large (later ones "
                                         "are refused without a line)")

    def cli_env(self) -> dict[str, str]:
        """The environment that sends a CLI through this recorder (starting it if needed)."""
        self.start()
        return {"ANTHROPIC_BASE_URL": self.base_url}

    def start(self) -> "RequestRecorder":
        with self._lock:
            if self._server is None:
                server = _RelayServer(("127.0.0.1", 0), _handler_for(self))
                server.daemon_threads = True
                self._server = server
                self._thread = threading.Thread(target=server.serve_forever, args=(POLL_SECONDS,),
                                                name="mnemara-recorder", daemon=True)
                self._thread.start()
        return self

    def stop(self) -> None:
        with self._lock:
            server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()

    # -- used by the handler --------------------------------------------------------------------
    def connect(self) -> http.client.HTTPConnection:
        """A new connection to the upstream API (kept alive by the handler thread that opened it)."""
        if self._scheme == "https":
            conn: http.client.HTTPConnection = http.client.HTTPSConnection(
                self._host, self._port, timeout=UPSTREAM_TIMEOUT, context=_tls_context())
        else:
            conn = http.client.HTTPConnection(self._host, self._port, timeout=UPSTREAM_TIMEOUT)
        conn.connect()
        _no_delay(conn.sock)
        return conn

    def upstream_path(self, path: str) -> str:
        return self._prefix + path

    def note_failure(self, exc: BaseException, event: str = "request_recorder_upstream_failed") -> None:
        """Say in the instance's debug.log why a call could not be relayed (the CLI reports a lost connection),
        or (``request_recorder_not_kept``) why a relayed call was not written to ``requests/``."""
        from mnemara.core.debuglog import DEBUG_LOG, log_event

        log_event(self.log.folder.parent / DEBUG_LOG, event, level="warning",
                  upstream=self.upstream, error=f"{type(exc).__name__}: {exc}")

    def save(self, call: RecordedCall) -> None:
        gate = self.gate
        if gate is not None:
            gate.after(call)  # priced and counted first: a full disk must not hide what a call cost
        try:
            if self.log.keep > 0 and call.seq > 0:  # 0: relayed for the spend gate only, nothing kept
                self.log.write(call)
        except OSError as exc:
            self.note_failure(exc, "request_recorder_not_kept")
            return  # a full disk must never fail the user's turn; the call is simply not kept
        if self.on_call is not None:
            self.on_call(call)


class _RelayServer(ThreadingHTTPServer):
    """The loopback server; a CLI killed mid-connection (``/stop``, a halt) is not an error to print:
    socketserver would write its traceback on stderr, over the panel or the REPL.

    It bounds what connections can hold: at most :data:`MAX_CONNECTIONS` at once; of those, the ones that
    have not yet shown the secret (:meth:`admitted`) number at most :data:`MAX_UNADMITTED` (a new one
    closes the oldest) and each is closed :data:`HEADER_DEADLINE` seconds after it was accepted."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._open: set[socket.socket] = set()
        self._waiting: dict[socket.socket, float] = {}  # not yet admitted: when accepted (insertion order)
        self._admitted: set[socket.socket] = set()
        self._guard = threading.Lock()

    def verify_request(self, request: Any, client_address: Any) -> bool:
        with self._guard:
            if len(self._open) >= MAX_CONNECTIONS:
                return False  # closed at once by socketserver
            while len(self._waiting) >= MAX_UNADMITTED:
                _cut(self._oldest_waiting())
            self._open.add(request)
            self._waiting[request] = time.monotonic()
        return True

    def _oldest_waiting(self) -> socket.socket:
        oldest = next(iter(self._waiting))
        del self._waiting[oldest]
        return oldest

    def admitted(self, request: socket.socket) -> bool:
        """The connection showed the secret: it is the CLI's, no deadline from now on. False when it was
        already closed for its deadline."""
        with self._guard:
            if self._waiting.pop(request, None) is not None:
                self._admitted.add(request)
            return request in self._admitted

    def service_actions(self) -> None:
        """Called by ``serve_forever`` every poll: close the connections past their deadline."""
        cutoff = time.monotonic() - HEADER_DEADLINE
        with self._guard:
            late = [sock for sock, at in self._waiting.items() if at <= cutoff]
            for sock in late:
                del self._waiting[sock]
        for sock in late:
            _cut(sock)

    def shutdown_request(self, request: Any) -> None:
        with self._guard:
            self._open.discard(request)
            self._admitted.discard(request)
            self._waiting.pop(request, None)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)


def _cut(sock: socket.socket) -> None:
    """End a connection from another thread: its handler's read returns at once (the socket is closed by
    that handler as usual)."""
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


def _tls_context() -> ssl.SSLContext:
    """The system's trusted certificates, plus ``NODE_EXTRA_CA_CERTS`` (which the CLI itself trusts)."""
    context = ssl.create_default_context()
    extra = os.environ.get("NODE_EXTRA_CA_CERTS")
    if extra and os.path.isfile(extra):
        context.load_verify_locations(cafile=extra)
    return context


def _closed_by_peer(sock: socket.socket | None) -> bool:
    """Has the other end closed this idle kept-alive connection (it reads as ready, at its end)?"""
    if sock is None:
        return True
    try:
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)


def _no_delay(sock: socket.socket | None) -> None:
    """Send small writes at once: an SSE event must not wait for the peer's delayed ACK (Nagle)."""
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def _content_length(headers: Any) -> int | None:
    """The request's Content-Length (0 when absent), or None when it is not one whole number."""
    values = headers.get_all("Content-Length") or []
    if not values:
        return None if headers.get("Transfer-Encoding") else 0
    if len(set(values)) != 1 or not values[0].strip().isdigit():
        return None
    return int(values[0].strip())


def _api_error(kind: str, message: str) -> bytes:
    """An answer body in the Messages API's error shape."""
    return json.dumps({"type": "error", "error": {"type": kind, "message": message}}).encode()


def _parsed_body(raw: bytes) -> tuple[Any, bytes | None]:
    """The request body parsed, and ``raw`` itself when the file may keep those very bytes: strict UTF-8
    (``json.loads`` also reads UTF-16, a byte-order mark and encoded surrogates, none of which could go into
    a UTF-8 file as they are)."""
    if not raw:
        return {}, None
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError):
        return {"_unparsed": raw.decode("utf-8", "replace")}, None
    if json.detect_encoding(raw) != "utf-8":
        return body, None
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return body, None
    return body, raw


def is_messages_call(method: str, path: str) -> bool:
    return method == "POST" and path.split("?")[0].rstrip("/").endswith("/v1/messages")


def _handler_for(recorder: RequestRecorder) -> type[BaseHTTPRequestHandler]:
    class Relay(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        upstream: http.client.HTTPConnection | None = None

        def setup(self) -> None:
            super().setup()
            _no_delay(self.connection)

        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_POST(self) -> None:
            self._relay()

        def do_GET(self) -> None:
            self._relay()

        def do_HEAD(self) -> None:
            self._relay()

        def do_PUT(self) -> None:
            self._relay()

        def do_DELETE(self) -> None:
            self._relay()

        def _relay(self) -> None:
            path = recorder.admit(self.path)  # the front door: nothing is read, sent or kept before it
            if path is None:
                return self._turn_away(403, "permission_error", "this relay serves only its own session's CLI")
            server = self.server
            if isinstance(server, _RelayServer) and not server.admitted(self.connection):
                self.close_connection = True  # closed for its deadline meanwhile
                return
            self.path = path
            length = _content_length(self.headers)
            if length is None:
                return self._turn_away(400, "invalid_request_error", "the request has no valid Content-Length")
            if length > MAX_REQUEST_BYTES:
                return self._turn_away(413, "request_too_large",
                                    f"the request is {length} bytes, over the relay's {MAX_REQUEST_BYTES}")
            raw = self.rfile.read(length) if length else b""
            headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
            record = is_messages_call(self.command, self.path)
            gate = recorder.gate
            if record and gate is None and recorder.gate_required:
                return self._refuse(_api_error("invalid_request_error", "mnemara: a spend cap is set and this session's spend gate is not "
                                               "ready yet; the request was not sent"))
            refused = gate.before(raw) if record and gate is not None else None
            if refused is not None:  # past a spend cap or after a halt: never reaches the API
                self._refuse(refused)
                return
            try:
                response = self._send_upstream(raw, headers)
            except (http.client.HTTPException, OSError) as exc:
                if record:  # kept before the hang-up: whoever sees the lost connection finds the call kept
                    self._record(raw, None, None)
                self._hang_up(exc)  # the CLI meets the same failure it would have met going direct
                return
            reader = UsageReader(response.getheader("Content-Encoding", "") or "") if record else None
            done = [False]

            def record_once() -> None:
                if record and not done[0]:
                    done[0] = True
                    self._record(raw, response.status, reader)

            try:
                self._pass_back(response, reader, record_once)
            finally:
                record_once()  # an answer cut short is recorded too

        def _send_upstream(self, raw: bytes, headers: dict[str, str]) -> http.client.HTTPResponse:
            """Send the request once. A kept-alive connection the API has closed is replaced before sending;
            a request that may have reached the API is never sent twice."""
            if self.upstream is not None and _closed_by_peer(self.upstream.sock):
                self.upstream.close()
                self.upstream = None
            if self.upstream is None:
                self.upstream = recorder.connect()
            try:
                self.upstream.request(self.command, recorder.upstream_path(self.path), body=raw or None,
                                      headers=headers)
                return self.upstream.getresponse()
            except BaseException:
                self.upstream.close()
                self.upstream = None
                raise

        def _pass_back(self, response: http.client.HTTPResponse, reader: UsageReader | None,
                       record: Callable[[], None]) -> None:
            """Stream the answer back as it arrives, framed as the API framed it (a length, chunks, or
            the end of the connection), so a cut-off answer reaches the CLI cut off. The call is recorded
            just before its last bytes go out: on disk when the CLI has the whole answer, never before
            the first byte."""
            length = response.getheader("Content-Length")
            chunked = bool(response.chunked) and self.command != "HEAD"
            self.send_response_only(response.status, response.reason)
            for key, value in response.getheaders():
                if key.lower() not in HOP_BY_HOP and key.lower() != "content-length":
                    self.send_header(key, value)
            if length is not None:
                self.send_header("Content-Length", length)
            elif chunked:
                self.send_header("Transfer-Encoding", "chunked")
            elif self.command != "HEAD":  # the answer ends when the connection does, as the API's did
                self.send_header("Connection", "close")
                self.close_connection = True
            self.end_headers()
            self.wfile.flush()
            complete = False
            try:
                while True:
                    data = response.read1(CHUNK) if self.command != "HEAD" else b""
                    if not data:
                        break
                    if reader is not None:
                        reader.feed(data)
                    if length is not None and response.length == 0:
                        record()  # the last piece of a fixed-length answer
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data) if chunked else data)
                    self.wfile.flush()
                complete = True
                record()
                if chunked:
                    self.wfile.write(b"0\r\n\r\n")
                    self.wfile.flush()
            except (http.client.HTTPException, OSError):  # the API or the CLI broke off
                pass
            finally:
                response.close()  # read1 leaves a fully read fixed-length answer open; the next request needs it closed
            if not complete:
                self.close_connection = True  # no end marker: the CLI sees the answer broken off
            if (response.will_close or not complete) and self.upstream is not None:
                self.upstream.close()
                self.upstream = None

        def _turn_away(self, status: int, kind: str, message: str) -> None:
            """The front door's answer: ``status`` in the API's error shape, the connection closed, the
            body never read."""
            recorder.note_refusal(status)
            data = _api_error(kind, message)
            self.close_connection = True
            try:
                self.send_response_only(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(data)
                self.wfile.flush()
            except OSError:
                pass

        def _refuse(self, body: bytes) -> None:
            """Answer a request the gate stopped with its error (HTTP 400: the CLI does not retry it)."""
            self.send_response(400)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            self.wfile.flush()

        def _hang_up(self, exc: BaseException) -> None:
            """Close the CLI's connection without an answer: a connection failure stays one."""
            recorder.note_failure(exc)
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

        def _record(self, raw: bytes, status: int | None, reader: UsageReader | None) -> None:
            kept: bytes | None = None
            if len(raw) > MAX_LOGGED_BYTES:
                body: Any = {"_omitted": f"the request body was {len(raw)} bytes, over the {MAX_LOGGED_BYTES} "
                                         "kept per call; it was sent, not kept"}
            else:
                body, kept = _parsed_body(raw)
            if not isinstance(body, dict):
                body, kept = {"_unparsed": raw.decode("utf-8", "replace")}, None
            try:
                seq = recorder.log.next_seq() if recorder.log.keep > 0 else 0
            except OSError as exc:  # a full disk, a planted link: the call is priced, not kept; the answer goes on
                recorder.note_failure(exc, "request_recorder_not_kept")
                seq = 0
            call = RecordedCall(seq=seq, at=now_iso(), path=self.path, body=body,
                                headers=safe_headers(self.headers), status=status,
                                usage=reader.finish() if reader is not None else {}, bytes_sent=len(raw),
                                body_json=kept)
            recorder.save(call)

    return Relay


def request_env(root: Path, keep: int, env: dict[str, str] | None = None,
                gate: SpendGate | None = None, gate_needed: bool = False) -> dict[str, str]:
    """The environment entries that send a CLI of the instance at ``root`` through its recorder
    (started on first use, shared by every launch of this process); empty when recording is off
    (``keep`` 0) and no spend cap needs the relay (``gate_needed``). ``gate`` becomes the recorder's."""
    env = dict(os.environ if env is None else env)
    if (keep <= 0 and not gate_needed) or any(env.get(name) for name in STEP_ASIDE):
        return {}
    upstream = upstream_base_url(env)
    key = (str(Path(root).resolve()), upstream)
    with _running_lock:
        recorder = _running.get(key)
        if recorder is None:
            try:
                recorder = RequestRecorder(RequestLog(Path(root), keep), upstream)
            except ValueError:
                return {}  # a base URL the recorder cannot relay: the CLI goes there directly, as before
            _running[key] = recorder
        recorder.log.keep = keep
        recorder.gate_required = gate_needed
        if gate is not None:
            recorder.gate = gate
    return recorder.cli_env()


def stop_recorders(root: Path | None = None) -> None:
    """Stop the recorders of the instance at ``root`` (every one when None): a closing session ends its own.
    A later launch starts a new one on another port (its CLI's options change, so it is a new CLI)."""
    wanted = None if root is None else str(Path(root).resolve())
    with _running_lock:
        keys = [key for key in _running if wanted is None or key[0] == wanted]
        running = [_running.pop(key) for key in keys]
    for recorder in running:
        recorder.stop()
