"""Phase 2: similar pairs, clusters and near-duplicates.

Distance is ``1 - cosine``. Two atoms within ``cluster_distance`` are linked and
a cluster is a connected component of those links (single linkage, so the
result does not depend on input order).

Finding the links must not compare all pairs. For sparse TF-IDF rows we use
*prefix filtering*: features are numbered rarest first, and each row is indexed
only under its leading features until the rest can no longer reach the
similarity bound ``t`` with any row (bounded by its norm, and by its weights
times each feature's largest weight anywhere). So a row whose dot product with
``x`` reaches ``t`` must share one of ``x``'s indexed features, so probing the index
with every feature of a row finds all its partners exactly; only those
candidates get a real dot product. Dense embeddings are compared in blocks with
one matrix product per block (exact, BLAS-fast).
"""
from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Set
from typing import Callable, Iterable

import numpy as np

from mnemara.memory.search.recency import connected_components
from mnemara.memory.search.tfidf import SparseRows

EPS = 1e-6
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Pair:
    a: int
    b: int
    similarity: float

    @property
    def distance(self) -> float:
        return max(0.0, 1.0 - self.similarity)


def sparse_pairs(
    rows: SparseRows, min_similarity: float, progress: Progress | None = None, stats: dict[str, int] | None = None
) -> list[Pair]:
    """All pairs of rows with cosine >= ``min_similarity`` (rows are unit vectors).

    ``stats["candidates"]`` (when a dict is given) counts the dot products computed.
    """
    n = len(rows)
    bound = max(min_similarity - EPS, 0.0)
    postings: list[list[int]] = [[] for _ in range(rows.width)]
    scratch = np.zeros(rows.width, dtype=np.float32)
    max_weight = np.zeros(rows.width, dtype=np.float64)
    np.maximum.at(max_weight, rows.indices, rows.data.astype(np.float64))
    pairs: list[Pair] = []
    for j in range(n):
        idx, val = rows.row(j)
        if len(idx):
            lists = [postings[f] for f in idx.tolist() if postings[f]]
            if lists:
                cand = np.unique(np.fromiter((c for lst in lists for c in lst), dtype=np.int64))
                if stats is not None:
                    stats["candidates"] = stats.get("candidates", 0) + len(cand)
                sims = _dots(rows, cand, idx, val, scratch)
                for c, s in zip(cand[sims >= bound].tolist(), sims[sims >= bound].tolist()):
                    pairs.append(Pair(c, j, min(float(s), 1.0)))
            for f in idx[: _prefix_length(val, max_weight[idx], bound)].tolist():
                postings[f].append(j)
        if progress and (j % 500 == 0 or j == n - 1):
            progress(j + 1, n)
    return pairs


def _prefix_length(values: np.ndarray, max_weight: np.ndarray, bound: float) -> int:
    """How many leading features to index so the rest cannot reach ``bound`` with any row.

    Two upper bounds on the dot product of the unindexed rest with a unit row:
    its norm (Cauchy-Schwarz) and the sum of its weights times each feature's
    largest weight in any row. Indexing stops where the smaller drops below.
    """
    v = values.astype(np.float64)
    norm = np.sqrt(np.cumsum((v * v)[::-1])[::-1])  # norm[i] = |v[i:]|
    weighted = np.cumsum((v * max_weight)[::-1])[::-1]
    below = np.nonzero(np.minimum(norm, weighted) < bound)[0]
    return int(below[0]) if len(below) else len(values)


def _dots(rows: SparseRows, cand: np.ndarray, idx: np.ndarray, val: np.ndarray, scratch: np.ndarray) -> np.ndarray:
    """Exact dot products of one row (``idx``/``val``) with the candidate rows."""
    scratch[idx] = val
    starts = rows.indptr[cand]
    lengths = rows.indptr[cand + 1] - starts
    total = int(lengths.sum())
    offsets = np.zeros(len(cand), dtype=np.int64)
    np.cumsum(lengths[:-1], out=offsets[1:])
    gather = np.repeat(starts - offsets, lengths) + np.arange(total, dtype=np.int64)
    products = scratch[rows.indices[gather]] * rows.data[gather]
    scratch[idx] = 0.0
    return np.add.reduceat(products, offsets) if total else np.zeros(len(cand), dtype=np.float32)


def dense_pairs(matrix: np.ndarray, min_similarity: float, block: int = 1024, progress: Progress | None = None) -> list[Pair]:
    """All pairs of unit row vectors with cosine >= ``min_similarity``, block by block."""
    n = len(matrix)
    bound = min_similarity - EPS
    pairs: list[Pair] = []
    for start in range(0, n, block):
        sims = matrix[start:start + block] @ matrix[start:].T
        rows_, cols = np.nonzero(sims >= bound)
        for r, c in zip(rows_.tolist(), cols.tolist()):
            a, b = start + r, start + c
            if a < b:
                pairs.append(Pair(a, b, min(float(sims[r, c]), 1.0)))
        if progress:
            progress(min(start + block, n), n)
    return pairs


def components(n: int, pairs: Iterable[Pair]) -> list[list[int]]:
    """Connected components of the pairs; each sorted, listed by smallest member."""
    return connected_components(n, ((pair.a, pair.b) for pair in pairs))


def near_duplicates(
    order: list[int], pairs: Iterable[Pair], max_distance: float, protected: set[int], retired: Set[int] = frozenset()
) -> dict[int, int]:
    """Map duplicate -> the atom it duplicates (its keeper).

    ``order`` lists atoms oldest first. Walking it, an atom closer than
    ``max_distance`` to an earlier atom that is being kept becomes a duplicate
    of the earliest such keeper; ``protected`` atoms are always kept.
    ``retired`` atoms (already archived) are neither moved nor keepers.
    """
    near: dict[int, list[int]] = {}
    for pair in pairs:
        if pair.distance < max_distance:
            near.setdefault(pair.a, []).append(pair.b)
            near.setdefault(pair.b, []).append(pair.a)
    rank = {atom: position for position, atom in enumerate(order)}
    duplicate_of: dict[int, int] = {}
    for atom in order:
        if atom in protected or atom in retired:
            continue
        keepers = [
            other for other in near.get(atom, ())
            if rank[other] < rank[atom] and other not in duplicate_of and other not in retired
        ]
        if keepers:
            duplicate_of[atom] = min(keepers, key=rank.__getitem__)
    return duplicate_of
