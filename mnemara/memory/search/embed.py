"""Ollama embeddings over plain HTTP (stdlib only).

Two endpoints exist in the wild: the batch ``POST /api/embed``
(``{"model", "input": [...]}`` -> ``{"embeddings": [[...], ...]}``) and the older
one-text ``POST /api/embeddings`` (``{"model", "prompt"}`` -> ``{"embedding": [...]}``).
The configured URL names one of them; when it names the older one we still try
the batch endpoint on the same host first (much faster for indexing) and fall
back for good if that server does not have it.

Every failure (refused connection, timeout, HTTP error, malformed answer)
raises :class:`EmbedError` with a short reason; callers degrade to keyword-only
retrieval instead of failing.
"""
from __future__ import annotations

import json
import math
import urllib.error
import urllib.request
from urllib.parse import urlsplit, urlunsplit

from mnemara.core.errors import BackendUnavailable

BATCH_PATH = "/api/embed"
SINGLE_PATH = "/api/embeddings"


class EmbedError(BackendUnavailable):
    """The embedder could not produce vectors; ``str(exc)`` is a one-line reason."""


class OllamaEmbedder:
    """Client for one Ollama model. ``embed`` returns one vector per text."""

    def __init__(self, url: str, model: str, timeout: float = 10.0) -> None:
        if not url or not url.strip():
            raise EmbedError("no embedder URL configured (rag_embed_url is empty)")
        parts = urlsplit(url.strip())
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise EmbedError(f"rag_embed_url {url!r} is not an http(s) URL")
        if not model or not model.strip():
            raise EmbedError("no embedding model configured (rag_embed_model is empty)")
        self.url = url.strip()
        self.model = model.strip()
        self.timeout = timeout
        path = parts.path.rstrip("/")
        self._base = urlunsplit((parts.scheme, parts.netloc, "", "", ""))
        self._batch_ok: bool | None = True if path.endswith(BATCH_PATH) else None
        self._single_url = self.url if path.endswith(SINGLE_PATH) else self._base + SINGLE_PATH
        self._batch_url = self.url if path.endswith(BATCH_PATH) else self._base + BATCH_PATH
        if not path.endswith(BATCH_PATH) and not path.endswith(SINGLE_PATH):
            # an unusual path: treat it as the older single-text endpoint, as configured
            self._single_url = self.url
            self._batch_ok = False

    @property
    def name(self) -> str:
        return self.model

    def embed(self, texts: list[str]) -> list[list[float]]:
        """Vectors for ``texts`` (same order). Raises :class:`EmbedError`."""
        if not texts:
            return []
        if self._batch_ok is not False:
            try:
                vectors = self._embed_batch(texts)
                self._batch_ok = True
                return vectors
            except _NotFound:
                if self._batch_ok is True and self.url.rstrip("/").endswith(BATCH_PATH):
                    raise EmbedError(f"{self._batch_url} answered 404 (is the model pulled? ollama pull {self.model})")
                self._batch_ok = False
        return [self._embed_one(text) for text in texts]

    # -- endpoints -------------------------------------------------------------
    def _embed_batch(self, texts: list[str]) -> list[list[float]]:
        answer = self._post(self._batch_url, {"model": self.model, "input": texts})
        vectors = answer.get("embeddings")
        if not isinstance(vectors, list) or len(vectors) != len(texts):
            raise EmbedError(f"{self._batch_url} answered without one embedding per input")
        return [_check_vector(v, self._batch_url) for v in vectors]

    def _embed_one(self, text: str) -> list[float]:
        try:
            answer = self._post(self._single_url, {"model": self.model, "prompt": text})
        except _NotFound:
            raise EmbedError(f"{self._single_url} answered 404 (is the model pulled? ollama pull {self.model})") from None
        return _check_vector(answer.get("embedding"), self._single_url)

    def _post(self, url: str, payload: dict) -> dict:
        data = json.dumps(payload).encode("utf-8")
        request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"}, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                body = response.read()
        except urllib.error.HTTPError as exc:
            if exc.code == 404:
                raise _NotFound() from None
            detail = _error_detail(exc)
            raise EmbedError(f"{url} answered HTTP {exc.code}{': ' + detail if detail else ''}") from None
        except urllib.error.URLError as exc:
            raise EmbedError(f"cannot reach {url}: {getattr(exc, 'reason', exc)}") from None
        except (TimeoutError, OSError) as exc:
            raise EmbedError(f"cannot reach {url}: {exc or type(exc).__name__}") from None
        try:
            answer = json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise EmbedError(f"{url} answered something that is not JSON") from None
        if not isinstance(answer, dict):
            raise EmbedError(f"{url} answered JSON that is not an object")
        if "error" in answer and not any(k in answer for k in ("embedding", "embeddings")):
            raise EmbedError(f"{url} answered an error: {str(answer['error'])[:200]}")
        return answer


class _NotFound(Exception):
    pass


def _error_detail(exc: urllib.error.HTTPError) -> str:
    try:
        payload = json.loads(exc.read() or b"{}")
        return str(payload.get("error", ""))[:200] if isinstance(payload, dict) else ""
    except Exception:
        return ""


def _check_vector(vector: object, url: str) -> list[float]:
    if not isinstance(vector, list) or not vector:
        raise EmbedError(f"{url} answered an empty or missing embedding")
    try:
        values = [float(x) for x in vector]
    except (TypeError, ValueError):
        raise EmbedError(f"{url} answered an embedding with non-numeric values") from None
    if not all(math.isfinite(x) for x in values):
        raise EmbedError(f"{url} answered an embedding with non-finite values")
    return values
