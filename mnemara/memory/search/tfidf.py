"""Vectors for similarity: a TF-IDF space over the one tokenizer, and dense embedder output.

TF-IDF rows are sparse, L2-normalised and stored CSR-style in numpy arrays
(``indptr``/``indices``/``data``) so 10k atoms stay a few megabytes. Features
are numbered rarest first, which is what :mod:`mnemara.replay.cluster` needs
for prefix filtering. Tokens come from :func:`mnemara.memory.search.similarity.tokens`
(the same tokenizer as the full-text index). A similarity here says "same
topic"; whether two notes make the same claim is for
:func:`mnemara.memory.search.similarity.relate`.
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from mnemara.memory.search.similarity import tokens

EMBED_CHARS = 8000

Embedder = Callable[[list[str]], Sequence[Sequence[float]]]


def topic_tokens(text: str) -> list[str]:
    """The tokens a TF-IDF similarity weighs: those of :func:`tokens` but bare numbers. A number
    says what a note claims, not what it is about, and a rare one outweighed every shared word:
    "timeout is 30 s" and "timeout is 300 s" came out dissimilar, so the claim guard never saw
    the pair and the correction was never proposed."""
    return [t for t in tokens(text) if not t.isdigit()]


@dataclass
class SparseRows:
    """CSR rows: row ``i`` has features ``indices[indptr[i]:indptr[i+1]]`` (ascending)."""

    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    width: int

    def __len__(self) -> int:
        return len(self.indptr) - 1

    def row(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        lo, hi = self.indptr[i], self.indptr[i + 1]
        return self.indices[lo:hi], self.data[lo:hi]

    def nnz(self, i: int) -> int:
        return int(self.indptr[i + 1] - self.indptr[i])


class TfidfSpace:
    """TF-IDF fitted on a corpus (atoms, plus wiki pages so coverage compares like with like)."""

    def __init__(self, corpus: Sequence[str]) -> None:
        counted = [Counter(topic_tokens(text)) for text in corpus]
        df: Counter[str] = Counter()
        for counts in counted:
            df.update(counts.keys())
        n = len(corpus)
        # rarest first; ties broken by the term itself so runs are deterministic
        order = sorted(df, key=lambda term: (df[term], term))
        self.vocab = {term: i for i, term in enumerate(order)}
        self.terms = order
        self.idf = np.array([math.log((1 + n) / (1 + df[t])) + 1.0 for t in order], dtype=np.float32)
        self.rows = self._build(counted)

    def transform(self, texts: Sequence[str]) -> SparseRows:
        """Rows for texts outside the fitted corpus (terms it never saw are dropped)."""
        return self._build([Counter(topic_tokens(text)) for text in texts])

    def _build(self, counted: Sequence[Counter[str]]) -> SparseRows:
        indptr = [0]
        indices: list[int] = []
        data: list[float] = []
        for counts in counted:
            items = sorted((self.vocab[t], c) for t, c in counts.items() if t in self.vocab)
            if items:
                ids = np.fromiter((i for i, _ in items), dtype=np.int64, count=len(items))
                tf = np.fromiter((1.0 + math.log(c) for _, c in items), dtype=np.float32, count=len(items))
                weights = tf * self.idf[ids]
                weights /= np.linalg.norm(weights)
                indices.extend(ids.tolist())
                data.extend(weights.tolist())
            indptr.append(len(indices))
        return SparseRows(
            np.asarray(indptr, dtype=np.int64),
            np.asarray(indices, dtype=np.int64),
            np.asarray(data, dtype=np.float32),
            len(self.terms),
        )

    def dense(self, rows: Sequence[int]) -> np.ndarray:
        """Mean of the given rows as a dense unit vector (a cluster centroid)."""
        out = np.zeros(len(self.terms), dtype=np.float32)
        for i in rows:
            idx, val = self.rows.row(i)
            out[idx] += val
        norm = np.linalg.norm(out)
        return out / norm if norm else out

    def cosine_to(self, vector: np.ndarray, i: int) -> float:
        idx, val = self.rows.row(i)
        return float(np.dot(vector[idx], val))

    def top_terms(self, rows: Sequence[int], k: int = 3) -> list[str]:
        """The ``k`` heaviest terms of the centroid of ``rows`` (for slugs and titles)."""
        centroid = self.dense(rows)
        best = np.argsort(-centroid, kind="stable")[:k]
        return [self.terms[i] for i in best if centroid[i] > 0]


def normalise_dense(vectors: Sequence[Sequence[float]], expected: int) -> np.ndarray:
    """Check and L2-normalise embedder output; raises ``ValueError`` on a bad answer."""
    if len(vectors) != expected:
        raise ValueError(f"embedder returned {len(vectors)} vectors for {expected} texts")
    matrix = np.asarray(vectors, dtype=np.float32)
    if matrix.ndim != 2 or matrix.shape[1] == 0 or not np.isfinite(matrix).all():
        raise ValueError("embedder returned vectors of uneven or empty dimension")
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return matrix / norms


def call_embedder(embed: Any, texts: list[str], batch: int = 64, progress: Callable[[int, int], None] | None = None) -> np.ndarray:
    """Embed ``texts`` with a callable or an object with ``.embed``; raises on any failure."""
    fn = getattr(embed, "embed_array", None) or getattr(embed, "embed", None) or embed
    out: list[Sequence[float]] = []
    for start in range(0, len(texts), batch):
        chunk = [text[:EMBED_CHARS] for text in texts[start:start + batch]]
        out.extend(list(fn(chunk)))
        if progress:
            progress(min(start + batch, len(texts)), len(texts))
    return normalise_dense(out, len(texts))


def embedder_name(embed: Any) -> str:
    for attr in ("name", "model", "__name__"):
        value = getattr(embed, attr, None)
        if isinstance(value, str) and value:
            return value
    return type(embed).__name__


@dataclass(frozen=True)
class TopicPair:
    a: int  # index of the older atom
    b: int  # index of the newer atom
    similarity: float
    shared: tuple[str, ...]


def same_topic_pairs(texts: Sequence[str], threshold: float = 0.35, max_df: int = 50,
                     limit: int = 50) -> list[TopicPair]:
    """Pairs (i < j) of texts whose TF-IDF cosine is at least ``threshold``, best first."""
    bags = [Counter(topic_tokens(t)) for t in texts]
    df: Counter[str] = Counter()
    for bag in bags:
        df.update(bag.keys())
    n = max(len(texts), 1)
    idf = {w: math.log((1 + n) / (1 + c)) + 1.0 for w, c in df.items()}
    vectors: list[dict[str, float]] = []
    for bag in bags:
        vec = {w: (1 + math.log(c)) * idf[w] for w, c in bag.items()}
        norm = math.sqrt(sum(v * v for v in vec.values())) or 1.0
        vectors.append({w: v / norm for w, v in vec.items()})
    postings: dict[str, list[int]] = {}
    for i, bag in enumerate(bags):
        for word in bag:
            if df[word] <= max_df:
                postings.setdefault(word, []).append(i)
    seen: set[tuple[int, int]] = set()
    out: list[TopicPair] = []
    for ids in postings.values():
        for x in range(len(ids)):
            for y in range(x + 1, len(ids)):
                key = (ids[x], ids[y])
                if key in seen:
                    continue
                seen.add(key)
                va, vb = vectors[key[0]], vectors[key[1]]
                small, big = (va, vb) if len(va) <= len(vb) else (vb, va)
                sim = sum(v * big.get(w, 0.0) for w, v in small.items())
                if sim >= threshold:
                    shared = tuple(sorted(set(va) & set(vb), key=lambda w: -idf[w])[:5])
                    out.append(TopicPair(key[0], key[1], round(sim, 4), shared))
    out.sort(key=lambda p: (-p.similarity, p.a, p.b))
    return out[:limit]
