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

**Ranking weights.** How much each channel counts in the fused ranking
(:mod:`mnemara.memory.search.ranking`) depends on the model in use
(:data:`VECTOR_WEIGHTS`: the vector channel's share, the keyword channel gets
the rest), measured on real conversations: LoCoMo conversations 0-4
(``bench/bench_locomo.py --split tune``; 5-9 are the held-out check), with
the golden set of ``bench/data/rag_golden.json`` (``bench/bench_similarity.py``)
as the no-regression check. A model nobody measured gets
:data:`UNMEASURED_VECTOR_WEIGHT`. The date and neighbour weights are the same
for every model, and for keyword-only.
"""
from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from mnemara.memory.search.embed import EmbedError
from mnemara.memory.search.ranking import Weights

if TYPE_CHECKING:
    from mnemara.core.config import Config

LOCAL_CONFIG = "l2_supercat"
LOCAL_DIM = 256
LOCAL_MODEL = f"wordllama-{LOCAL_CONFIG}-{LOCAL_DIM}"
EMBEDDERS = ("local", "ollama", "none")
UNMEASURED_VECTOR_WEIGHT = 0.3
DATE_WEIGHT = 0.6
NEIGHBOUR_WEIGHT = 0.6
# below this cosine a nearest neighbour is no evidence at all (measured: unrelated pairs of short notes)
FLOORS = {LOCAL_MODEL: 0.2}
DEFAULT_FLOOR = 0.0
# model id -> the vector channel's weight (the keyword channel's is 1 - it): (when the keyword channel's best rows
# hold none of the question's terms, when one holds them all), linear in between (ranking.Weights.for_coverage).
# WordLlama, LoCoMo 0-4 hit@5/@10 (replay of the shipped ranking) and golden-set MRR (bench_similarity): fixed 0.45:
# 0.680/0.780, MRR 0.883; fixed 0.2: 0.692/0.796, MRR 0.835; (0.6, 0.1): 0.684/0.794, MRR 0.903 (the MRR is 0.903
# for any top of 0.6 to 0.8, 0.873 at 0.5; LoCoMo moves within 0.679-0.689 over tops 0.5-0.8 and bottoms
# 0.05-0.25); keyword-only 0.671/0.785, MRR 0.808 (2026-12-01)
VECTOR_WEIGHTS: dict[str, tuple[float, float]] = {
    LOCAL_MODEL: (0.6, 0.1),
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


def make_embedder(config: Config, timeout: float = EMBED_TIMEOUT) -> tuple[Any, str]:
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


def ranking_weights(embedder: Any) -> tuple[Weights, str]:
    """The ranking weights for this embedder (None: keyword-only), and where they come from."""
    if embedder is None:
        return Weights(1.0, 0.0, DATE_WEIGHT, NEIGHBOUR_WEIGHT), "keyword only"
    model = str(getattr(embedder, "model", "") or "")
    measured = VECTOR_WEIGHTS.get(model)
    if measured is None:
        vector = UNMEASURED_VECTOR_WEIGHT
        return (Weights(round(1.0 - vector, 6), vector, DATE_WEIGHT, NEIGHBOUR_WEIGHT),
                f"{model or 'embedder'}: not measured, default vector weight {vector}")
    vector, covered = measured
    why = (f"{model}: vector weight {vector} down to {covered} as the keyword hits cover the question, chosen on "
           "LoCoMo conversations 0-4 and the golden set (bench/bench_locomo.py, bench/bench_similarity.py)")
    return Weights(round(1.0 - vector, 6), vector, DATE_WEIGHT, NEIGHBOUR_WEIGHT,
                   covered if covered != vector else None), why
