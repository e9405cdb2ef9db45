"""Phase 2: the blocked pair search finds exactly the pairs all-pairs comparison finds."""
from __future__ import annotations

import random

import numpy as np
import pytest

from mnemara.replay.cluster import Pair, components, dense_pairs, near_duplicates, sparse_pairs
from mnemara.memory.search.similarity import stem, tokens
from mnemara.memory.search.tfidf import TfidfSpace

WORDS = "lease timeout server balancer idle connection build status poll progress wait retry cache disk".split()


def _brute(matrix: np.ndarray, bound: float) -> set[tuple[int, int]]:
    sims = matrix @ matrix.T
    n = len(matrix)
    return {(a, b) for a in range(n) for b in range(a + 1, n) if sims[a, b] >= bound - 1e-6}


def _corpus(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)
    base = [rng.sample(WORDS, rng.randint(2, 6)) for _ in range(max(2, n // 6))]
    out = []
    for _ in range(n):
        words = list(rng.choice(base))
        for _ in range(rng.randint(0, 3)):
            words.append(rng.choice(WORDS + [f"w{rng.randint(0, 40)}"]))
        out.append(" ".join(words))
    return out


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("bound", [0.65, 0.9])
def test_sparse_prefix_filter_is_exact(seed, bound):
    space = TfidfSpace(_corpus(seed, 120))
    matrix = np.stack([space.dense([i]) for i in range(len(space.rows))])
    found = {(p.a, p.b) for p in sparse_pairs(space.rows, bound)}
    assert found == _brute(matrix, bound)
    assert len(found) > 0


def test_dense_blocks_are_exact():
    rng = np.random.default_rng(3)
    centres = rng.normal(size=(5, 16))
    matrix = np.concatenate([c + 0.3 * rng.normal(size=(40, 16)) for c in centres]).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    found = {(p.a, p.b) for p in dense_pairs(matrix, 0.65, block=17)}
    assert found == _brute(matrix, 0.65) and found


def test_components_are_single_linkage_and_order_free():
    pairs = [Pair(0, 1, 0.9), Pair(1, 2, 0.7), Pair(4, 5, 0.8)]
    assert components(6, pairs) == [[0, 1, 2], [3], [4, 5]]
    assert components(6, list(reversed(pairs))) == [[0, 1, 2], [3], [4, 5]]


def test_near_duplicates_point_at_the_earliest_kept_atom():
    pairs = [Pair(0, 1, 0.95), Pair(1, 2, 0.95), Pair(0, 2, 0.85), Pair(3, 4, 0.99)]
    # chronological order 2, 0, 1, 4, 3
    dup = near_duplicates([2, 0, 1, 4, 3], pairs, 0.10, protected=set())
    assert dup == {1: 2, 3: 4}  # 0 is not within 0.10 of 2, so both are kept; 1 points at the earliest, 2
    assert near_duplicates([2, 0, 1, 4, 3], pairs, 0.10, protected={3}) == {1: 2}


def test_tokens_stem_and_drop_stop_words():
    assert tokens("The builds were POLLED, polling polls!") == ["build", "poll", "poll", "poll"]
    assert stem("status") == "status" and stem("boxes") == "box" and stem("dropped") == "drop"


def test_empty_rows_have_no_pairs():
    space = TfidfSpace(["", "the and of", "lease timeout"])
    assert sparse_pairs(space.rows, 0.65) == []
