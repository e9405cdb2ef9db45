"""Vectors for similarity: a local TF-IDF space (always built) and optional embeddings.

The TF-IDF rows are sparse, L2-normalised and stored CSR-style in numpy arrays
(``indptr``/``indices``/``data``) so 10k atoms stay a few megabytes. Features
are numbered rarest first, which is what :mod:`mnemara.replay.cluster` needs
for prefix filtering.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

TOKEN_RE = re.compile(r"[^\W_](?:[\w'-]*[^\W_])?")
STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further had
    has have having he her here hers him his how i if in into is it its itself just me more most my
    no nor not now of off on once only or other our ours out over own same she should so some such
    than that the their them then there these they this those through to too under until up very was
    we were what when where which while who whom why will with would you your yours""".split()
)
EMBED_CHARS = 8000

Embedder = Callable[[list[str]], Sequence[Sequence[float]]]


def stem(token: str) -> str:
    """A deliberately small suffix stripper: ``polled``/``polling``/``polls`` -> ``poll``."""
    for suffix in ("ing", "ed", "es", "s"):
        if token.endswith(suffix) and len(token) - len(suffix) >= 3 and not token.endswith(("ss", "us", "is")):
            base = token[: -len(suffix)]
            if suffix == "es" and not base.endswith(("s", "x", "z", "ch", "sh")):
                continue
            if suffix in ("ing", "ed") and len(base) > 3 and base[-1] == base[-2] and base[-1] not in "lsz":
                base = base[:-1]
            return base
    return token


def tokens(text: str) -> list[str]:
    """Lower-case, lightly stemmed word tokens without stop words or one-letter words."""
    return [stem(t) for t in TOKEN_RE.findall(text.lower()) if len(t) > 1 and t not in STOPWORDS]


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
        counted = [Counter(tokens(text)) for text in corpus]
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
        return self._build([Counter(tokens(text)) for text in texts])

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
    fn = embed.embed if hasattr(embed, "embed") else embed
    out: list[Sequence[float]] = []
    for start in range(0, len(texts), batch):
        chunk = [text[:EMBED_CHARS] for text in texts[start:start + batch]]
        out.extend(fn(chunk))
        if progress:
            progress(min(start + batch, len(texts)), len(texts))
    return normalise_dense(out, len(texts))


def embedder_name(embed: Any) -> str:
    for attr in ("name", "model", "__name__"):
        value = getattr(embed, attr, None)
        if isinstance(value, str) and value:
            return value
    return type(embed).__name__
