"""Never only the old: a note that recall returns comes with every newer note on its subject (issue 40).

A search ranks notes by how well they match the question, and a correction is often worded
unlike the question ("How long do we keep logs in Datadog?" matches "Log retention in Datadog
is 15 days" far better than "We cut the Datadog log retention to 7 days"). So the ranking alone
hands the agent the old fact. :func:`attach_newer` runs after the ranking: for each note hit it
looks up the notes on the same subject (the candidates of dedupe on write: the notes sharing the
rarest words, and with an embedder the nearest vectors), keeps those *newer* than the hit that
the claim guard calls a conflict (:func:`mnemara.memory.search.similarity.relate`, whose
pre-filter :func:`~mnemara.memory.search.similarity.may_conflict` is the one every conflict
goes through) or a possible copy (a restatement: the newer wording may add or drop detail, and
which of the two holds is the user's merge to decide, so the newer one is never left out; round 4
of issue 40: it is marked newer, never flagged as a conflict, and never for the turns of a chat), and

* adds each one the answer lacks (``added_as``), newest first, right before the note it is newer
  than: a statement of fact is read newest first ("Who is my manager?" finds "My manager is Greg"
  first and the note it missed, "After the reorg I report to Fatima", takes its place, Greg's note
  right after it). A turn of a chat (:data:`~mnemara.memory.search.similarity.SPEAKER_RE`) is no
  statement a later turn corrects: a newer turn goes after every ranked hit, never in a ranked
  note's place (put beside the older turn, such turns pushed the ranked ones down: LoCoMo held-out
  hit@5 fell from 0.688 to 0.385, chat turns having many a newer turn on a subject);
* orders every group of ranked hits so joined newest first in the slots it holds (a chain
  A -> B -> C found by the ranking reads C, B, A);
* marks the older note ``newer_notes`` (id, date, why) and each newer one ``newer_than`` (id,
  date), and both ``may_conflict_with`` / ``conflict`` as any conflicting hits are.

Nothing is dropped and nothing is decided: which note holds is the user's call. A newer note the
user superseded or deprecated is never added (``skip``), nor one the user judged distinct from
the older note (``distinct``).
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, TypedDict

from mnemara.memory.search.recency import connected_components, hit_moment
from mnemara.memory.search.similarity import CONFLICT, POSSIBLE_COPY, SPEAKER_RE, may_conflict, relate

CHAIN_DEPTH = 3  # rounds of lookup: the newer note of a newer note (A -> B -> C) is found too
LOOKUP = 12  # candidates per hit and channel
# the newer notes linked to one hit, newest first, and the notes added to one answer: notes written in one pattern
# ("The deploy note 4411: ...") are each other's newer notes by the hundred, and an answer of 15 hits grew to ~1,900
# (2-7 s a query at 10,000 notes, every one a candidate for the prompt; round 12 of issue 40). The newest notes are
# the ones that tell the current truth, so they are looked at first; a hit whose lookup stopped says so
# (``newer_notes_capped``) and ``mnemara memory search`` finds the rest
NEWER_PER_HIT = 8
ADDED_PER_ANSWER = 48
WEIGHED_PER_ANSWER = 600  # candidates the claim guard weighs for one answer (15 hits x 24 candidates fit)


class NewerMark(TypedDict):
    """One side of an older/newer pair as the answer shows it."""

    id: str
    created_at: str
    why: str


Hit = dict[str, Any]
# hits -> for each hit id, the hits of the notes that may be on its subject
Lookup = Callable[[list[Hit]], dict[str, list[Hit]]]


def attach_newer(hits: list[Hit], lookup: Lookup, skip: Callable[[str], bool] = lambda _id: False,
                 distinct: Callable[[str, str], bool] = lambda _a, _b: False) -> list[Hit]:
    """``hits`` with the newer notes on each note hit's subject added, marked and ordered newest first."""
    out = list(hits)
    tail: list[Hit] = []  # the newer chat turns the ranking did not return: after every ranked hit
    before: list[Hit] = []  # the newer statements the ranking did not return: before their group's best
    by_id: dict[str, Hit] = {h["id"]: h for h in out if h.get("id")}
    edges: list[tuple[str, str, tuple[str, ...]]] = []  # (older id, newer id, why)
    linked: set[tuple[str, str]] = set()
    restated: set[tuple[str, str]] = set()  # (older id, newer id) pairs of a possible copy: marked, never flagged
    todo = [h for h in out if _is_note(h)]
    added_in_all = weighed = 0
    for _round in range(CHAIN_DEPTH):
        if not todo:
            break
        found = lookup(todo)
        added: list[Hit] = []
        for older in todo:
            links = 0
            for cand in sorted(found.get(older["id"], []), key=hit_moment, reverse=True):  # newest first
                cid = cand.get("id")
                if not cid or cid == older["id"] or not _is_note(cand) or skip(cid) or distinct(older["id"], cid):
                    continue
                if hit_moment(cand) <= hit_moment(older) or (older["id"], cid) in linked:
                    continue
                bound = (NEWER_PER_HIT if links >= NEWER_PER_HIT
                         else ADDED_PER_ANSWER if added_in_all >= ADDED_PER_ANSWER and cid not in by_id
                         else WEIGHED_PER_ANSWER if weighed >= WEIGHED_PER_ANSWER else 0)
                if bound:  # a newer candidate left unweighed: the hit says its lookup stopped
                    older["newer_notes_capped"] = bound
                    continue
                weighed += 1
                a, b = older.get("text", ""), cand.get("text", "")
                chat = bool(SPEAKER_RE.match(a) or SPEAKER_RE.match(b))
                if not may_conflict(a, b):  # a restatement shares its words: the same pre-filter lets it in
                    continue
                rel = relate(a, b)
                if rel.kind != CONFLICT and not (rel.kind == POSSIBLE_COPY and not chat):
                    continue
                linked.add((older["id"], cid))
                links += 1
                if rel.kind == POSSIBLE_COPY:
                    restated.add((older["id"], cid))
                edges.append((older["id"], cid, rel.reasons))
                if cid not in by_id:
                    cand = dict(cand, channels=cand.get("channels", {}), added_as=f"newer note on the subject of {older['id']}")
                    by_id[cid] = cand
                    added.append(cand)
                    added_in_all += 1
                    (tail if chat else before).append(cand)
        todo = added
    if edges:
        _mark(by_id, edges, restated)
        out = _newest_first(out, edges)
    if before:
        out = _before_their_group(out, before, edges)
    return out + sorted(tail, key=hit_moment, reverse=True)


def _before_their_group(out: list[Hit], added: list[Hit], edges: list[tuple[str, str, tuple[str, ...]]]) -> list[Hit]:
    """``out`` with each added note in its older/newer group, the group newest first: the group's
    first ranked slot takes its newest notes (one more per added note), its other slots the rest."""
    ids = [h.get("id") for h in out] + [c["id"] for c in added]
    index = {ident: n for n, ident in enumerate(ids)}
    pool = out + added
    groups = connected_components(len(ids), [(index[a], index[b]) for a, b, _ in edges if a in index and b in index])
    slots: dict[int, list[Hit]] = {n: [h] for n, h in enumerate(out)}
    for members in groups:
        ranked = [i for i in members if i < len(out)]
        extra = [i for i in members if i >= len(out)]
        if not ranked or not extra:
            continue
        newest = sorted((pool[i] for i in members), key=hit_moment, reverse=True)
        slots[ranked[0]] = newest[:len(extra) + 1]
        for place, hit in zip(ranked[1:], newest[len(extra) + 1:]):
            slots[place] = [hit]
    return [h for n in range(len(out)) for h in slots[n]]


def _is_note(hit: Hit) -> bool:
    return hit.get("kind") == "memory" and bool(hit.get("created_at")) and bool(hit.get("id"))


def _mark(by_id: dict[str, Hit], edges: Iterable[tuple[str, str, tuple[str, ...]]],
          restated: set[tuple[str, str]]) -> None:
    for older_id, newer_id, why in edges:
        older, newer = by_id[older_id], by_id[newer_id]
        reason = "; ".join(why)
        older.setdefault("newer_notes", []).append(
            NewerMark(id=newer_id, created_at=str(newer.get("created_at", "")), why=reason))
        newer.setdefault("newer_than", []).append(
            NewerMark(id=older_id, created_at=str(older.get("created_at", "")), why=reason))
        if (older_id, newer_id) in restated:
            continue  # a restatement is no conflict: dated as newer, not flagged
        for this, other in ((older, newer_id), (newer, older_id)):
            flagged = this.setdefault("may_conflict_with", [])
            if other not in flagged:
                flagged.append(other)
            if reason and reason not in this.get("conflict", ""):
                this["conflict"] = "; ".join(x for x in (this.get("conflict", ""), reason) if x)


def _newest_first(hits: list[Hit], edges: list[tuple[str, str, tuple[str, ...]]]) -> list[Hit]:
    """Each group of notes joined by an older/newer pair takes the slots it holds, newest in the best."""
    slot = {h.get("id"): n for n, h in enumerate(hits)}
    pairs = [(slot[a], slot[b]) for a, b, _ in edges if a in slot and b in slot]
    out = list(hits)
    for members in connected_components(len(hits), pairs):
        if len(members) < 2:
            continue
        newest = sorted(members, key=lambda i: (hit_moment(hits[i]), -i), reverse=True)
        for place, i in zip(sorted(members), newest):
            out[place] = hits[i]
    return out
