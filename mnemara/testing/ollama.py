"""A loopback stand-in for Ollama's embedding endpoints, for tests and benchmarks.

``FakeOllama`` serves ``POST /api/embed`` (batch) and ``POST /api/embeddings``
(one text) on ``127.0.0.1`` with deterministic vectors: feature hashing of the
text's lower-cased words and character trigrams, L2-normalised. Texts that share
words or word pieces get similar vectors, so the vector channel behaves like a
(crude) lexical-fuzzy embedder; it is NOT a semantic model.

It can be told to misbehave (``fail_status``, ``delay``, ``legacy_only``,
``known_models``) and records every request, so tests can prove how many texts
were embedded and when.

    with FakeOllama() as fake:
        config.rag_embed_url = fake.url("/api/embed")
"""
from __future__ import annotations

import hashlib
import json
import math
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

WORD_RE = re.compile(r"[a-z0-9]+")


def fake_vector(text: str, dim: int = 128) -> list[float]:
    """The deterministic vector the fake answers for ``text``."""
    vec = [0.0] * dim
    words = WORD_RE.findall(text.lower())
    features: list[tuple[str, float]] = [(f"w:{w}", 1.0) for w in words]
    for word in words:
        padded = f"#{word}#"
        features.extend((f"g:{padded[i:i + 3]}", 0.5) for i in range(max(len(padded) - 2, 0)))
    for feature, weight in features:
        digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
        index = int.from_bytes(digest[:4], "little") % dim
        sign = 1.0 if digest[4] & 1 else -1.0
        vec[index] += sign * weight
    norm = math.sqrt(sum(x * x for x in vec))
    if norm == 0:
        vec[0] = 1.0
        return vec
    return [x / norm for x in vec]


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that gave up (timeout test) is not an error here


class FakeOllama:
    """A threaded HTTP server on a free loopback port. Use as a context manager."""

    def __init__(self, dim: int = 128, known_models: tuple[str, ...] | None = None, port: int = 0) -> None:
        self.dim = dim
        self.known_models = known_models  # None: any model name is accepted
        self.fail_status: int | None = None  # answer every request with this HTTP status
        self.delay: float = 0.0  # seconds to sleep before answering
        self.legacy_only = False  # 404 on /api/embed, like an old Ollama
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = _QuietServer(("127.0.0.1", port), self._handler_class())
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------
    @property
    def port(self) -> int:
        return self._server.server_address[1]

    def url(self, path: str = "/api/embed") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def start(self) -> "FakeOllama":
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake-ollama", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> "FakeOllama":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- accounting --------------------------------------------------------------
    def texts_embedded(self) -> int:
        """How many texts were embedded successfully so far."""
        with self._lock:
            return sum(r.get("count", 0) for r in self.requests if r.get("status") == 200)

    def _record(self, entry: dict[str, Any]) -> None:
        with self._lock:
            self.requests.append(entry)

    # -- HTTP ----------------------------------------------------------------------
    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:  # noqa: N802 (http.server API)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                status, answer, count = fake._answer(self.path, raw)
                fake._record({"path": self.path, "status": status, "count": count})
                body = json.dumps(answer).encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        return Handler

    def _answer(self, path: str, raw: bytes) -> tuple[int, dict[str, Any], int]:
        if self.delay:
            time.sleep(self.delay)
        if self.fail_status:
            return self.fail_status, {"error": f"fake failure {self.fail_status}"}, 0
        route = path.split("?", 1)[0].rstrip("/")
        if route not in ("/api/embed", "/api/embeddings") or (route == "/api/embed" and self.legacy_only):
            return 404, {"error": "404 page not found"}, 0
        try:
            payload = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            return 400, {"error": "invalid JSON"}, 0
        model = payload.get("model")
        if self.known_models is not None and model not in self.known_models:
            return 404, {"error": f'model "{model}" not found, try pulling it first'}, 0
        if route == "/api/embed":
            inputs = payload.get("input")
            texts = [inputs] if isinstance(inputs, str) else inputs
            if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
                return 400, {"error": "input must be a string or a list of strings"}, 0
            return 200, {"model": model, "embeddings": [fake_vector(t, self.dim) for t in texts]}, len(texts)
        prompt = payload.get("prompt")
        if not isinstance(prompt, str):
            return 400, {"error": "prompt must be a string"}, 0
        return 200, {"embedding": fake_vector(prompt, self.dim)}, 1
