"""The Ollama client against the loopback fake: both endpoints, fallbacks and failures."""
from __future__ import annotations

import socket

import pytest

from mnemara.memory.search.embed import EmbedError, OllamaEmbedder
from mnemara.testing.ollama import FakeOllama, fake_vector


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_batch_endpoint_returns_one_vector_per_text() -> None:
    with FakeOllama(dim=32) as fake:
        emb = OllamaEmbedder(fake.url("/api/embed"), "nomic-embed-text")
        vectors = emb.embed(["alpha", "beta"])
        assert vectors == [fake_vector("alpha", 32), fake_vector("beta", 32)]
        assert [r["path"] for r in fake.requests] == ["/api/embed"]


def test_legacy_url_prefers_batch_then_falls_back_for_good() -> None:
    with FakeOllama(dim=16) as fake:
        emb = OllamaEmbedder(fake.url("/api/embeddings"), "m")
        assert emb.embed(["a", "b"]) == [fake_vector("a", 16), fake_vector("b", 16)]
        assert [r["path"] for r in fake.requests] == ["/api/embed"]
        fake.legacy_only = True
        fresh = OllamaEmbedder(fake.url("/api/embeddings"), "m")
        assert fresh.embed(["a", "b"]) == [fake_vector("a", 16), fake_vector("b", 16)]
        assert fresh.embed(["c"]) == [fake_vector("c", 16)]
        paths = [r["path"] for r in fake.requests[1:]]
        assert paths == ["/api/embed", "/api/embeddings", "/api/embeddings", "/api/embeddings"]


def test_failures_raise_embed_error_with_a_reason() -> None:
    with pytest.raises(EmbedError, match="cannot reach"):
        OllamaEmbedder(f"http://127.0.0.1:{free_port()}/api/embed", "m").embed(["x"])
    with FakeOllama(known_models=("nomic-embed-text",)) as fake:
        with pytest.raises(EmbedError, match="ollama pull other"):
            OllamaEmbedder(fake.url("/api/embed"), "other").embed(["x"])
        fake.fail_status = 500
        with pytest.raises(EmbedError, match="HTTP 500: fake failure 500"):
            OllamaEmbedder(fake.url("/api/embed"), "nomic-embed-text").embed(["x"])
        fake.fail_status = None
        fake.delay = 0.5
        with pytest.raises(EmbedError, match="cannot reach|timed out"):
            OllamaEmbedder(fake.url("/api/embed"), "nomic-embed-text", timeout=0.1).embed(["x"])


@pytest.mark.parametrize("url,model,reason", [
    ("", "m", "empty"), ("ftp://host/api/embed", "m", "not an http"), ("localhost:11434", "m", "not an http"),
    ("http://127.0.0.1:1/api/embed", " ", "no embedding model"),
])
def test_bad_configuration_is_refused(url: str, model: str, reason: str) -> None:
    with pytest.raises(EmbedError, match=reason):
        OllamaEmbedder(url, model)
