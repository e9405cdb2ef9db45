"""Text normalisation and a model-free same-topic scan over atoms.

``normalize`` defines what "the same note" means for dedupe on write: case,
whitespace, markdown emphasis and trailing punctuation do not count.

``same_topic_pairs`` narrows the O(n^2) pairs of atoms down to candidates for a
supersession judgement: TF-IDF cosine over content words, compared only for
atoms that share a word rarer than ``max_df``. Similar topic is not the same as
"B supersedes A"; the output is a candidate list for a person (or a model) to
judge, never a verdict.
"""
from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from typing import Sequence

WORD_RE = re.compile(r"[a-z0-9][a-z0-9_.\-]*[a-z0-9]|[a-z0-9]")
STOPWORDS = frozenset("""
a an and are as at be been but by can could did do does for from had has have how i if in into is it its
just me my no not of on or our so some than that the their them then there these they this to too use
used using was we were what when where which while who why will with would you your about after again all
also any because before being both each few more most other over own same should such only very
""".split())


def normalize(text: str) -> str:
    """Canonical form for exact-duplicate checks."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = re.sub(r"[*_`~]+", "", text)
    text = " ".join(text.split())
    return text.rstrip(" .!?;:")


def content_words(text: str) -> list[str]:
    """Lower-cased words without stopwords; a trailing plural 's' is dropped."""
    out = []
    for word in WORD_RE.findall(unicodedata.normalize("NFKC", text).casefold()):
        word = word.strip(".-")
        if len(word) < 2 or word in STOPWORDS:
            continue
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        out.append(word)
    return out


@dataclass(frozen=True)
class Pair:
    a: int  # index of the older atom
    b: int  # index of the newer atom
    similarity: float
    shared: tuple[str, ...]


def same_topic_pairs(texts: Sequence[str], threshold: float = 0.35, max_df: int = 50,
                     limit: int = 50) -> list[Pair]:
    """Pairs (i < j) of texts whose TF-IDF cosine is at least ``threshold``, best first."""
    bags = [Counter(content_words(t)) for t in texts]
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
    out: list[Pair] = []
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
                    out.append(Pair(key[0], key[1], round(sim, 4), shared))
    out.sort(key=lambda p: (-p.similarity, p.a, p.b))
    return out[:limit]


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity of two vectors (0.0 when either is all zeros)."""
    dot = sum(x * y for x, y in zip(a, b))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0
