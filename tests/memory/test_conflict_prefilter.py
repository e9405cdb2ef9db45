"""Issue 26 / 31: the cheap pre-filter of recall's conflict check changes no verdict.

:func:`apply_recency` skips :func:`relate` for a pair when :func:`may_conflict` rules a conflict
out. These tests run the old path (``prefilter=False``: relate on every pair) and the new one
over the issue-31 dev set, the claim-guard pairs and random pairs, and require the same hits, in
the same order, with the same ``may_conflict_with`` and ``conflict`` marks.
"""
from __future__ import annotations

import copy
import itertools
import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mnemara.memory.search.recency import apply_recency, best_with_conflicts
from mnemara.memory.search.similarity import CONFLICT, may_conflict, relate

HERE = Path(__file__).parent
DEV = json.loads((HERE / "truth_dev.json").read_text(encoding="utf-8"))
CLAIMS = json.loads((HERE.parents[1] / "bench" / "data" / "claims.json").read_text(encoding="utf-8"))["pairs"]
PAIRS = [(p["older"], p["newer"]) for group in ("corrections", "copies", "siblings") for p in DEV[group]]
PAIRS += [(p["older"], p["newer"]) for p in CLAIMS]
TEXTS = list(dict.fromkeys(t for pair in PAIRS for t in pair))
DAY = datetime(2026, 5, 4, 9, tzinfo=timezone.utc)


def _hits(texts: list[str], kinds: list[str] | None = None) -> list[dict[str, Any]]:
    """Hits as rag_query ranks them: the given order, timestamps shuffled against it."""
    return [{"id": f"n{i}", "kind": (kinds[i] if kinds else "memory"), "text": text,
             "created_at": (DAY + timedelta(hours=(i * 7) % 11)).isoformat()} for i, text in enumerate(texts)]


def _same_both_ways(hits: list[dict[str, Any]], k: int) -> list[dict[str, Any]]:
    old = best_with_conflicts(copy.deepcopy(hits), k, prefilter=False)
    new = best_with_conflicts(copy.deepcopy(hits), k)
    assert new == old
    assert apply_recency(copy.deepcopy(hits)) == apply_recency(copy.deepcopy(hits), prefilter=False)
    return new


def test_every_conflict_of_the_dev_set_and_claim_pairs_passes_the_prefilter() -> None:
    conflicts = 0
    for a, b in itertools.permutations(TEXTS, 2):
        if relate(a, b).kind == CONFLICT:
            conflicts += 1
            assert may_conflict(a, b), (a, b)
    assert conflicts >= len(DEV["corrections"])  # the check is not empty


def test_recall_marks_the_dev_set_exactly_as_relate_on_every_pair() -> None:
    for older, newer in PAIRS:
        _same_both_ways(_hits([older, newer]), 1)
        _same_both_ways(_hits([newer, older]), 1)
    flagged = 0
    for start in range(0, len(TEXTS), 10):  # overlapping windows of the size rag_query checks (k + margin)
        out = _same_both_ways(_hits(TEXTS[start:start + 20]), 10)
        flagged += sum("may_conflict_with" in h for h in out)
    assert flagged  # the comparison is not empty


# random notes in the patterns of team notes: the same words, a value, a name or the order changed
WORDS = ("the deploy timeout cache worker queue billing checkout service retries backups run at night "
         "is are not never only before after enabled disabled Redis Postgres alice@example.com redis-a "
         "redis-b logs/ log/ 30 60 5% 2025-03-04 2025-04-03 MB/s Mb/s GiB GB seconds s daily weekly "
         "and or == != users user table Exports/ exports/ \"warn\" \"warning\" (dev, staging) retired").split()
sentence = st.lists(st.sampled_from(WORDS), min_size=1, max_size=10).map(" ".join)


@st.composite
def related_pair(draw: st.DrawFn) -> tuple[str, str]:
    words = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=10))
    other = list(words)
    for _ in range(draw(st.integers(min_value=0, max_value=3))):
        how = draw(st.sampled_from(["swap", "replace", "add", "drop", "upper", "dot"]))
        i = draw(st.integers(min_value=0, max_value=len(other) - 1)) if other else 0
        if how == "swap" and len(other) > 1:
            j = draw(st.integers(min_value=0, max_value=len(other) - 1))
            other[i], other[j] = other[j], other[i]
        elif how == "replace" and other:
            other[i] = draw(st.sampled_from(WORDS))
        elif how == "add":
            other.insert(i, draw(st.sampled_from(WORDS)))
        elif how == "drop" and len(other) > 1:
            other.pop(i)
        elif how == "upper" and other:
            other[i] = other[i].upper()
        elif how == "dot":
            other.append(".")
    return " ".join(words), " ".join(other)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(related_pair())
def test_a_random_pair_is_a_conflict_only_when_it_passes_the_prefilter(pair: tuple[str, str]) -> None:
    a, b = pair
    for x, y in ((a, b), (b, a)):
        if relate(x, y).kind == CONFLICT:
            assert may_conflict(x, y)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(related_pair(), st.tuples(sentence, sentence)), min_size=1, max_size=6),
       st.integers(min_value=0, max_value=12), st.lists(st.sampled_from(["memory", "doc"]), min_size=12, max_size=12))
def test_random_hit_lists_are_marked_the_same_both_ways(pairs: list[tuple[str, str]], k: int, kinds: list[str]) -> None:
    texts = [t for pair in pairs for t in pair]
    _same_both_ways(_hits(texts, kinds[:len(texts)]), k)
