"""Recency over search hits: conflicting hits marked and put newest first, nothing dropped.

How two notes relate is :mod:`.similarity`'s (:func:`~.similarity.relate`, behind its
pre-filter :func:`~.similarity.may_conflict`); this module orders a list of hits by it:
:func:`apply_recency` (what ``rag_query`` and recall return), :func:`best_with_conflicts`
(the ``k`` best plus a newer correction ranked just below), and the pieces the newer-note
lookup (:mod:`.newer`) and replay's clusters share: :func:`connected_components` and
:func:`hit_moment`.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Iterable

from mnemara.memory.search.similarity import CONFLICT, may_conflict, relate


def apply_recency(hits: list[dict[str, Any]], prefilter: bool = True) -> list[dict[str, Any]]:
    """Mark the hits that may conflict, and order each such group newest first; nothing is dropped.

    Every member of a group of hits that may conflict (:func:`relate` says ``conflict``) gets
    ``may_conflict_with`` (the ids of the others) and ``conflict`` (why). The group's members
    take the positions the group already held, the newest in the best one; every other hit
    keeps its rank. Hits without a timestamp are left alone. Which note is true is the user's
    call (a supersession proposal), never this function's.

    ``prefilter=False`` calls :func:`relate` on every pair, skipping no pair :func:`may_conflict`
    rules out: the same result, slower (for the bench and the test that prove it the same).
    """
    n = len(hits)
    edges: list[tuple[int, int]] = []
    links: dict[int, list[tuple[int, tuple[str, ...]]]] = {}
    for i in range(n):
        for j in range(i + 1, n):
            a, b = hits[i], hits[j]
            if not a.get("created_at") or not b.get("created_at") or a.get("kind") != b.get("kind"):
                continue
            ta, tb = a.get("text", ""), b.get("text", "")
            if prefilter and not may_conflict(ta, tb):
                continue
            rel = relate(ta, tb)
            if rel.kind == CONFLICT:
                edges.append((i, j))
                links.setdefault(i, []).append((j, rel.reasons))
                links.setdefault(j, []).append((i, rel.reasons))
    groups = [g for g in connected_components(n, edges) if len(g) > 1]
    out = list(hits)
    for members in groups:
        newest_first = sorted(members, key=lambda i: (hit_moment(hits[i]), -i), reverse=True)
        for slot, i in zip(sorted(members), newest_first):
            out[slot] = hits[i]
        for i in members:
            hits[i]["may_conflict_with"] = [hits[j]["id"] for j, _ in links[i]]
            hits[i]["conflict"] = "; ".join(dict.fromkeys(r for _, rs in links[i] for r in rs))
    return out


def best_with_conflicts(hits: list[dict[str, Any]], k: int, prefilter: bool = True) -> list[dict[str, Any]]:
    """The ``k`` best hits, never pushed out, plus any hit past the cut that may conflict with one of
    them (a newer correction ranked just below), all marked and ordered by :func:`apply_recency`
    (``prefilter`` is passed on to it)."""
    top = {id(h) for h in hits[:k]}
    ordered = apply_recency(list(hits), prefilter)
    wanted = {h.get("id") for h in hits[:k]}
    keep = [h for h in ordered if id(h) in top or wanted & set(h.get("may_conflict_with", []))]
    kept = {h.get("id") for h in keep}
    for hit in keep:
        if "may_conflict_with" in hit:
            hit["may_conflict_with"] = [i for i in hit["may_conflict_with"] if i in kept]
            if not hit["may_conflict_with"]:
                hit.pop("may_conflict_with")
                hit.pop("conflict", None)
    return keep


def connected_components(n: int, edges: Iterable[tuple[int, int]]) -> list[list[int]]:
    """Groups of ``range(n)`` joined by ``edges`` (union-find); each sorted, listed by smallest member."""
    parent = list(range(n))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in edges:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    groups: dict[int, list[int]] = {}
    for i in range(n):
        groups.setdefault(find(i), []).append(i)
    return sorted(groups.values(), key=lambda g: g[0])


def hit_moment(hit: dict[str, Any]) -> str:
    """A hit's ``created_at`` as a comparable UTC ISO string (as written when it is not a time).
    Without a zone it is UTC, as notes are written, never this machine's local time."""
    return _utc_moment(str(hit.get("created_at") or ""))


@lru_cache(maxsize=65536)  # recall's newer-note check compares the same hits' times hundreds of times a query
def _utc_moment(raw: str) -> str:
    from datetime import datetime, timezone

    try:
        moment = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        return raw
    return (moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)).astimezone(timezone.utc).isoformat()
