"""The one way to get an embedder: ``rag_embedder: local | ollama | none``.

* ``local`` (the default): WordLlama ``l2_supercat`` at 256 dimensions, a
  static token-embedding model whose 16 MB of weights ship inside the
  ``wordllama`` wheel (MIT). It is loaded from the installed package with
  downloads disabled, runs on the CPU with numpy and ``tokenizers`` (no
  torch, no server), loads in well under a second and embeds thousands of
  short texts per second. Measured against the candidates in
  ``bench/bench_similarity.py``.
* ``ollama``: the HTTP client of :mod:`mnemara.memory.search.embed` on
  ``rag_embed_url`` / ``rag_embed_model``.
* ``none``: keyword-only everywhere.

Every user of vectors (``rag_query``, dedupe on write, replay) builds its
embedder here, so they share one choice and one timeout. Vectors are stored
per model id (``model``), so switching models re-embeds instead of mixing
spaces.

**Fusion weight.** How much the vector channel counts in the fused ranking
comes from the measured quality of the model in use (:data:`MEASURED`):
``weight = min(1, MRR of the vector channel alone / MRR of the keyword
channel alone)`` on the golden set of ``bench/data/rag_golden.json``. So a
weak embedder adds its evidence but cannot outvote a correct keyword hit. A
model nobody measured gets :data:`UNMEASURED_WEIGHT`. ``bench/bench_similarity.py``
re-derives the figures.
"""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Protocol

from mnemara.memory.search.embed import EmbedError

LOCAL_CONFIG = "l2_supercat"
LOCAL_DIM = 256
LOCAL_MODEL = f"wordllama-{LOCAL_CONFIG}-{LOCAL_DIM}"
EMBEDDERS = ("local", "ollama", "none")
UNMEASURED_WEIGHT = 0.5
# below this cosine a nearest neighbour is no evidence at all (measured: unrelated pairs of short notes)
FLOORS = {LOCAL_MODEL: 0.2}
DEFAULT_FLOOR = 0.0
# model id -> (keyword MRR, vector-only MRR) on bench/data/rag_golden.json, from bench/bench_similarity.py
# (bench/bench_similarity.py, 51 golden queries, 2026-11-30: keyword-only MRR 0.819, local vector-only MRR 0.881)
MEASURED: dict[str, tuple[float, float]] = {
    LOCAL_MODEL: (0.819, 0.881),
}


class Embedder(Protocol):
    model: str

    def embed(self, texts: list[str]) -> list[list[float]]: ...


class LocalEmbedder:
    """WordLlama from the installed wheel; the model loads on first use (imported lazily)."""

    model = LOCAL_MODEL

    def __init__(self) -> None:
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self.model

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                self._model = _load_wordllama()
            return self._model

    def embed(self, texts: list[str]) -> list[list[float]]:
        """Unit vectors for ``texts``; raises :class:`EmbedError` when the model cannot run."""
        return self.embed_array(texts).tolist()

    def embed_array(self, texts: list[str]) -> Any:
        if not texts:
            import numpy as np

            return np.zeros((0, LOCAL_DIM), dtype="float32")
        model = self._load()
        try:
            return model.embed([t if t.strip() else "." for t in texts], norm=True, batch_size=256)
        except Exception as exc:  # a broken native part must not take a turn down
            raise EmbedError(f"local embedder failed: {type(exc).__name__}: {exc}") from None


def _load_wordllama() -> Any:
    """Import wordllama (through the one guarded loader) and load the weights from the package
    folder, never from the network."""
    from mnemara.core.backend_loader import load_backend

    try:
        wordllama = load_backend("wordllama", EmbedError)
    except EmbedError as exc:
        raise EmbedError(f"local embedder unavailable: {exc}; pip install wordllama, "
                         "or set rag_embedder to ollama or none") from None
    WordLlama = wordllama.WordLlama
    package = Path(wordllama.__file__ or "").resolve().parent
    try:
        return WordLlama.load(config=LOCAL_CONFIG, dim=LOCAL_DIM, cache_dir=package, disable_download=True)
    except Exception as exc:
        raise EmbedError(f"local embedder unavailable: {type(exc).__name__}: {exc}") from None


_LOCAL: LocalEmbedder | None = None


def local_embedder() -> LocalEmbedder:
    """The process-wide local embedder (its weights are loaded once)."""
    global _LOCAL
    if _LOCAL is None:
        _LOCAL = LocalEmbedder()
    return _LOCAL


EMBED_TIMEOUT = 10.0  # seconds per Ollama request, the same for rag_query, dedupe and replay


def make_embedder(config: Any, timeout: float = EMBED_TIMEOUT) -> tuple[Any, str]:
    """``(embedder or None, why there is none)`` for this config's ``rag_embedder``."""
    choice = str(getattr(config, "rag_embedder", "local") or "local")
    if choice == "none":
        return None, "no embedder (rag_embedder is none)"
    if choice == "ollama":
        from mnemara.memory.search.embed import OllamaEmbedder

        try:
            return OllamaEmbedder(config.rag_embed_url, config.rag_embed_model, timeout=timeout), ""
        except EmbedError as exc:
            return None, str(exc)
    if choice != "local":
        return None, f"unknown rag_embedder {choice!r} (use one of {', '.join(EMBEDDERS)})"
    return local_embedder(), ""


def similarity_floor(embedder: Any) -> float:
    """The cosine under which the vector channel does not return a hit for this model."""
    return FLOORS.get(str(getattr(embedder, "model", "") or ""), DEFAULT_FLOOR)


def fusion_weight(embedder: Any) -> tuple[float, str]:
    """The vector channel's weight in the fusion, and where it comes from."""
    model = str(getattr(embedder, "model", "") or "")
    measured = MEASURED.get(model)
    if measured and measured[0] > 0:
        keyword, vector = measured
        weight = round(min(1.0, vector / keyword), 3)
        return weight, (f"{model}: vector-only MRR {vector:.3f} / keyword MRR {keyword:.3f} on the golden set "
                        f"(bench/bench_similarity.py), capped at 1")
    return UNMEASURED_WEIGHT, f"{model or 'embedder'}: not measured, default weight {UNMEASURED_WEIGHT}"
