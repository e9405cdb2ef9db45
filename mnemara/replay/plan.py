"""Build the replay plan (phases 1-6, read-only) and apply it (the only code that writes).

:func:`build_plan` reads the instance and decides everything: the plan lists
each file it would write and each note it would archive. A dry run prints that
list; :func:`apply_plan` carries out exactly that list and then appends the
digest (phase 7).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any, Callable

import numpy as np

from mnemara.core.config import Config
from mnemara.core.errors import ConfigError, UsageError
from mnemara.core.fsutil import atomic_write_text, locked_append
from mnemara.store.instance import Instance
from mnemara.memory.search.exact import copy_key
from mnemara.memory.search.similarity import CONFLICT, COPY, POSSIBLE_COPY, contradicts, relate
from mnemara.memory.status import STATUS_FILE, StatusBook, fingerprint, note_moment, propose_supersessions
from mnemara.memory.search.tfidf import SparseRows, TfidfSpace, call_embedder, embedder_name
from mnemara.replay import cluster as clustering
from mnemara.replay.archive import ArchiveMove, apply_moves, archive_path, load_archived
from mnemara.replay.augment import Augmentation, EntityLookup, augment, entity_map
from mnemara.replay.digest import render_digest
from mnemara.replay.embedding import TextEmbedder
from mnemara.replay.load import FileIssue, LoadedAtom, LoadResult, files_in_window, load_atoms
from mnemara.replay.policy import ReplayPolicy, policy_path, read_policy
from mnemara.replay.proposals import (
    Document,
    is_self_observation,
    read_documents,
    role_proposal,
    slugify,
    wiki_proposal,
)

Progress = Callable[[str, int, int], None]
INACTIVE = ("superseded", "deprecated")


@dataclass
class Pattern:
    slug: str
    terms: list[str]
    members: list[LoadedAtom]
    augmentation: Augmentation
    covered_by: str | None = None
    self_observations: int = 0
    role_covered_by: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "slug": self.slug,
            "terms": self.terms,
            "members": [m.key for m in self.members],
            "entities": [{"name": n, "notes": c} for n, c in self.augmentation.entities],
            "causal": [{"atom": k, "sentence": s} for k, s in self.augmentation.causal],
            "covered_by": self.covered_by,
            "self_observations": self.self_observations,
            "role_covered_by": self.role_covered_by,
        }


@dataclass
class Action:
    """One thing ``--apply`` does. ``path`` is relative to the instance folder."""

    kind: str  # write_wiki_proposal | write_role_proposal | archive | propose_supersession | append_digest
    path: str
    detail: str
    content: str = ""
    move: ArchiveMove | None = None
    conflict: "Conflict | None" = None

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "path": self.path, "detail": self.detail}

    def describe(self) -> str:
        verb = {"archive": "archive", "append_digest": "append", "propose_supersession": "propose in"}.get(
            self.kind, "write")
        return f"{verb} {self.path}: {self.detail}"


@dataclass(frozen=True)
class Conflict:
    """Two notes that are close but not the same text: never archived, proposed to the user.
    ``kind`` is ``supersede`` (a possible correction: the claims differ) or ``merge`` (a possible
    copy: worded alike with the same claim)."""

    older: LoadedAtom
    newer: LoadedAtom
    reasons: tuple[str, ...]
    kind: str = "supersede"

    def describe(self) -> str:
        verb = "may be a copy of" if self.kind == "merge" else "may supersede"
        return f"{self.newer.key} {verb} {self.older.key}: {'; '.join(self.reasons)}"


@dataclass
class ReplayResult:
    written: list[str] = field(default_factory=list)
    archived: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    digest: str = ""
    proposed: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"written": self.written, "archived": self.archived, "problems": self.problems, "digest": self.digest,
                "proposed_supersessions": self.proposed}


@dataclass
class ReplayPlan:
    instance_root: Path
    stamp: str
    today: date
    days: int
    threshold: int
    cluster_distance: float
    duplicate_distance: float
    method: str
    policy_source: str
    graph_status: str
    counts: dict[str, int]
    issues: list[FileIssue]
    patterns: list[Pattern]
    actions: list[Action]
    conflicts: list[Conflict] = field(default_factory=list)
    applied: bool = False
    result: ReplayResult | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "instance": str(self.instance_root),
            "applied": self.applied,
            "stamp": self.stamp,
            "days": self.days,
            "threshold": self.threshold,
            "cluster_distance": self.cluster_distance,
            "duplicate_distance": self.duplicate_distance,
            "similarity": self.method,
            "policy": self.policy_source or None,
            "graph": self.graph_status,
            "counts": self.counts,
            "file_issues": [{"file": i.file, "reason": i.reason, "skipped": i.skipped} for i in self.issues],
            "patterns": [p.to_dict() for p in self.patterns],
            "actions": [a.to_dict() for a in self.actions],
            "conflicts": [{"older": c.older.key, "newer": c.newer.key, "why": list(c.reasons), "proposal": c.kind}
                          for c in self.conflicts],
            "result": self.result.to_dict() if self.result else None,
        }


def _when(atom: LoadedAtom) -> tuple:
    """Sort key in time order: a heading without a zone is UTC, as notes are written (never this
    machine's local time); an unreadable one sorts last."""
    moment = note_moment(atom.atom.timestamp)
    if moment == datetime.min.replace(tzinfo=timezone.utc):
        moment = datetime.max.replace(tzinfo=timezone.utc)
    return (moment, atom.archived, atom.atom.file.name, atom.atom.offset)


def build_plan(
    instance: Instance,
    *,
    days: int | None = None,
    threshold: int | None = None,
    embed: TextEmbedder | None = None,
    entity_lookup: EntityLookup | None = None,
    today: date | None = None,
    now: datetime | None = None,
    progress: Progress | None = None,
) -> ReplayPlan:
    """Decide what replay would do; reads only. One step per phase, in the order they run."""
    tick: Progress = progress or (lambda phase, done, total: None)
    now = (now or datetime.now(timezone.utc)).astimezone(timezone.utc).replace(microsecond=0)
    today = today or now.date()
    policy, days, threshold = _settings(instance, days, threshold)
    notes = _load_notes(instance, policy, days, today, tick)  # phase 1
    similar = _relate_notes(notes, policy, threshold, embed, tick)  # phase 2
    patterns, graph_status = _augment_patterns(notes.active, similar, entity_lookup, tick)  # phase 3
    _mark_coverage(patterns, similar.groups, _documents(instance, policy), similar.space, similar.dense, embed,
                   policy.cover_distance)
    actions = _proposal_actions(instance, patterns, policy, threshold, now, similar.method)  # phases 4 and 6
    actions += _archive_actions(instance, notes.active, similar.duplicate_of)  # phase 5
    actions += _supersession_actions(similar.conflicts)
    actions.append(Action("append_digest", f"sleep/{today.isoformat()}.md", "sleep digest of this run"))  # phase 7
    return ReplayPlan(
        instance.root, now.isoformat(), today, days, threshold, policy.cluster_distance, policy.duplicate_distance,
        similar.method, policy.source, graph_status, _counts(notes, similar, patterns), notes.loaded.issues, patterns,
        actions, similar.conflicts,
    )


@dataclass
class _Notes:
    """Phase 1's result: what was read, and the notes replay works on."""

    loaded: LoadResult  # the day files of the window (with every file issue, status.json's included)
    archived: list[LoadedAtom]  # notes already in memory/archive/ for those days
    active: list[LoadedAtom]  # non-empty, not excluded by the policy, not superseded or deprecated
    excluded: int  # notes of the day files left out by the policy or their status
    book: StatusBook | None


@dataclass
class _Relations:
    """Phase 2's result: vectors, similar pairs, clusters, copies to archive and conflicts to propose."""

    space: TfidfSpace
    dense: np.ndarray | None
    method: str
    pairs: list[clustering.Pair]
    all_groups: list[list[int]]
    groups: list[list[int]]  # the clusters of at least ``threshold`` notes: the patterns
    duplicate_of: dict[int, int]
    conflicts: list[Conflict]


def _settings(instance: Instance, days: int | None, threshold: int | None) -> tuple[ReplayPolicy, int, int]:
    """The policy doc and the run's window and threshold (argument, else policy, else config); refuses bad values."""
    config = Config.load(instance.config_path)
    policy = read_policy(policy_path(instance.wiki_dir, config.replay_policy_path, instance.root))
    days = days if days is not None else policy.days or config.replay_default_days
    threshold = threshold if threshold is not None else policy.threshold or config.replay_default_threshold
    if days < 1:
        raise UsageError(f"days must be at least 1, got {days}")
    if threshold < 2:
        raise UsageError(f"threshold must be at least 2, got {threshold}")
    return policy, days, threshold


def _load_notes(instance: Instance, policy: ReplayPolicy, days: int, today: date, tick: Progress) -> _Notes:
    """Phase 1: the notes of the window's day files and their archive, minus excluded and inactive ones."""
    loaded = load_atoms(instance.memory_dir, days, today)
    archived, archive_issues = load_archived(
        instance.archive_dir, files_in_window(instance.memory_dir, days, today), len(loaded.atoms)
    )
    loaded.issues.extend(archive_issues)
    tick("load", len(loaded.atoms), len(loaded.atoms))
    book = _status_book(instance, loaded.issues)
    candidates = [a for a in loaded.atoms + archived if a.atom.text.strip()]
    active = [
        a for a in candidates
        if not policy.excludes(a.atom.file.name, a.atom.category, a.atom.text)
        and (book is None or book.status_of(a.atom) not in INACTIVE)
    ]
    excluded = sum(1 for a in candidates if not a.archived) - sum(1 for a in active if not a.archived)
    return _Notes(loaded, archived, active, excluded, book)


def _relate_notes(notes: _Notes, policy: ReplayPolicy, threshold: int, embed: TextEmbedder | None, tick: Progress) -> _Relations:
    """Phase 2: vectors, similar pairs, clusters, then the claim guard splits pairs into copies and conflicts."""
    active, book = notes.active, notes.book
    space, dense, method = _vectors(active, embed, tick)
    min_similarity = 1.0 - policy.cluster_distance
    cluster_tick = lambda d, t: tick("cluster", d, t)  # noqa: E731
    if dense is not None:
        judged = clustering.dense_pairs(dense, min_similarity, progress=cluster_tick)
    else:  # shared words find a paraphrase less often than a vector: the claim guard looks further down
        judged = clustering.sparse_pairs(space.rows, min(min_similarity, LEXICAL_JUDGE_FLOOR), progress=cluster_tick)
    pairs = [p for p in judged if p.similarity >= min_similarity]
    judged = pairs + [p for p in judged if p.similarity < min_similarity and _few_words_apart(space.rows, p)]
    exact = _exact_pairs(active, judged)
    pairs, judged = pairs + exact, judged + exact
    all_groups = clustering.components(len(active), pairs)
    copies, conflicts, contrary = _judge_claims(_not_marked_distinct(judged, active, book), active,
                                                policy.duplicate_distance)
    if book is not None and book.proposals:  # a pair already proposed waits for the user, not for replay
        known = {(p.get("older_fp"), p.get("newer_fp")) for p in book.proposals}
        conflicts = [c for c in conflicts if (fingerprint(c.older.atom), fingerprint(c.newer.atom)) not in known]
    duplicate_of = _copies_to_archive(active, copies, policy) if policy.archive else {}
    duplicate_of = _keep_reassertions(active, duplicate_of, contrary)
    groups = [g for g in all_groups if len(g) >= threshold]
    return _Relations(space, dense, method, pairs, all_groups, groups, duplicate_of, conflicts)


def _few_words_apart(rows: SparseRows, pair: clustering.Pair, most: int = 3) -> bool:
    """Whether the two notes' word sets differ by at most ``most`` words: a paraphrase ("never" /
    "don't ever") or a note with a word of detail added, worth the claim guard's time below the
    clustering threshold; anything further apart is no copy or correction of the other."""
    ta = set(rows.indices[rows.indptr[pair.a]:rows.indptr[pair.a + 1]].tolist())
    tb = set(rows.indices[rows.indptr[pair.b]:rows.indptr[pair.b + 1]].tolist())
    return len(ta ^ tb) <= most


def _exact_pairs(active: list[LoadedAtom], found: list[clustering.Pair]) -> list[clustering.Pair]:
    """Exact copies (:func:`mnemara.memory.search.exact.copy_key`) the similarity missed: a vector of
    "THE PAYROLL EXPORT RUNS" is not the vector of "The payroll export runs", the text is the same."""
    by_key: dict[str, list[int]] = {}
    for i, loaded in enumerate(active):
        key = copy_key(loaded.atom.text)
        if key:
            by_key.setdefault(key, []).append(i)
    have = {(p.a, p.b) for p in found}
    return [clustering.Pair(a, b, 1.0) for same in by_key.values() for n, a in enumerate(same) for b in same[n + 1:]
            if (a, b) not in have]


def _vectors(active: list[LoadedAtom], embed: TextEmbedder | None, tick: Progress) -> tuple[TfidfSpace, np.ndarray | None, str]:
    """TF-IDF always; embeddings when an embedder is given and answers (any failure falls back to TF-IDF)."""
    space = TfidfSpace([a.atom.text for a in active])
    if embed is None or not active:
        return space, None, "lexical TF-IDF (no embedder)"
    try:
        dense = call_embedder(embed, [a.atom.text for a in active], progress=lambda d, t: tick("embed", d, t))
    except Exception as exc:  # any embedder failure degrades to the lexical floor
        reason = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
        return space, None, f"lexical TF-IDF (embedder failed: {reason})"
    return space, dense, f"embeddings ({embedder_name(embed)})"


def _copies_to_archive(active: list[LoadedAtom], copies: list[clustering.Pair], policy: ReplayPolicy) -> dict[int, int]:
    """Duplicate -> keeper (the earliest note); protected categories and archived notes are never moved.

    Every pair in ``copies`` was already judged a copy (close enough AND the same claim).
    """
    order = sorted(range(len(active)), key=lambda i: _when(active[i]))
    protected = {i for i, a in enumerate(active) if a.atom.category in policy.protect_categories}
    retired = {i for i, a in enumerate(active) if a.archived}
    return clustering.near_duplicates(order, copies, float("inf"), protected, retired)


def _keep_reassertions(active: list[LoadedAtom], duplicate_of: dict[int, int],
                       contrary: dict[int, set[int]]) -> dict[int, int]:
    """``duplicate_of`` without the copies that restate a claim after a note contradicted it
    (:func:`mnemara.memory.search.similarity.contradicts`).

    "30 s" (day 1), "300 s" (day 2), "30 s" (day 3): the day-3 note is a copy of the day-1 one,
    but it is the newest word on the subject. Archiving it would leave "300 s" as the newest
    active note, so recall would rank it first and lint would offer it as the correction. Such
    a copy stays (and its conflict with the note in between is proposed like any other).
    """
    latest_kept: dict[int, int] = {}  # keeper -> the newest copy of it that stays
    out: dict[int, int] = {}
    for dup in sorted(duplicate_of, key=lambda i: _when(active[i])):
        keeper = duplicate_of[dup]
        since, until = _when(active[latest_kept.get(keeper, keeper)]), _when(active[dup])
        between = contrary.get(dup, set()) | contrary.get(keeper, set())
        if any(since < _when(active[p]) < until for p in between):
            latest_kept[keeper] = dup
        else:
            out[dup] = keeper
    return out


def _augment_patterns(active: list[LoadedAtom], similar: _Relations, entity_lookup: EntityLookup | None,
                      tick: Progress) -> tuple[list[Pattern], str]:
    """Phase 3: one pattern per large cluster, with its top terms, recurring entities and causal statements."""
    entities, graph_status = entity_map(active, entity_lookup)
    tick("augment", len(similar.groups), len(similar.groups))
    patterns: list[Pattern] = []
    for group in similar.groups:
        members = sorted((active[i] for i in group), key=_when)
        terms = similar.space.top_terms(group)
        pattern = Pattern(slugify(terms, members[0].key), terms, members, augment(members, entities))
        pattern.self_observations = sum(1 for m in members if is_self_observation(m.atom.category))
        patterns.append(pattern)
    return patterns, graph_status


def _proposal_actions(instance: Instance, patterns: list[Pattern], policy: ReplayPolicy, threshold: int,
                      now: datetime, method: str) -> list[Action]:
    """Phases 4 and 6: per uncovered pattern a wiki proposal, and a role proposal when enough self-observations."""
    stamp = now.isoformat()
    actions: list[Action] = []
    taken: set[str] = set()
    for pattern in patterns:
        if policy.wiki_proposals and pattern.covered_by is None:
            name = _free_name(pattern.slug, taken, instance.wiki_proposals_dir)
            text = wiki_proposal(pattern.slug, pattern.terms, pattern.members, pattern.augmentation, stamp, method)
            actions.append(Action("write_wiki_proposal", f"wiki_proposals/{name}",
                                  f"pattern of {len(pattern.members)} notes", text))
        if policy.role_proposals and pattern.self_observations >= threshold and pattern.role_covered_by is None:
            name = _free_name(f"{now.strftime('%Y%m%dT%H%M%SZ')}_replay-{pattern.slug}", taken, instance.role_proposals_dir)
            text = role_proposal(pattern.slug, pattern.terms, pattern.members, pattern.augmentation, stamp, method)
            actions.append(Action("write_role_proposal", f"role_proposals/{name}",
                                  f"{pattern.self_observations} self_observation notes", text))
    return actions


def _archive_actions(instance: Instance, active: list[LoadedAtom], duplicate_of: dict[int, int]) -> list[Action]:
    """Phase 5: one move into memory/archive/ per copy, oldest first."""
    actions: list[Action] = []
    for dup in sorted(duplicate_of, key=lambda i: _when(active[i])):
        atom, keeper = active[dup], active[duplicate_of[dup]]
        move = ArchiveMove(atom.atom.file, atom.raw, keeper.key, atom.key, atom.atom.text)
        rel = archive_path(instance.archive_dir, atom.atom.file).relative_to(instance.root).as_posix()
        actions.append(Action("archive", rel, f"{atom.key} duplicates {keeper.key}", move=move))
    return actions


def _supersession_actions(conflicts: list[Conflict]) -> list[Action]:
    """Conflicting pairs are proposed for supersession in memory/status.json (the user confirms in lint --fix)."""
    if not conflicts:
        return []
    merges = sum(1 for c in conflicts if c.kind == "merge")
    return [Action("propose_supersession", f"memory/{STATUS_FILE}",
                   f"{len(conflicts) - merges} possible corrections (newer may supersede older) and {merges} possible "
                   "copies (merge): confirm in mnemara lint --fix or /memory review")]


def _counts(notes: _Notes, similar: _Relations, patterns: list[Pattern]) -> dict[str, int]:
    return {
        "files": len(notes.loaded.files),
        "atoms": len(notes.loaded.atoms),
        "archived_atoms": len(notes.archived),
        "excluded": notes.excluded,
        "clustered": len(notes.active),
        "pairs": len(similar.pairs),
        "clusters": sum(1 for g in similar.all_groups if len(g) > 1),
        "patterns": len(patterns),
        "covered": sum(1 for p in patterns if p.covered_by),
        "entities": sum(len(p.augmentation.entities) for p in patterns),
        "causal": sum(len(p.augmentation.causal) for p in patterns),
        "duplicates": len(similar.duplicate_of),
        "conflicts": len(similar.conflicts),
    }


def _documents(instance: Instance, policy: ReplayPolicy) -> list[Document]:
    skip = [Path(policy.source)] if policy.source else []
    docs: list[Document] = []
    for folder, kind in (
        (instance.wiki_dir, "wiki"),
        (instance.wiki_proposals_dir, "wiki_proposal"),
        (instance.role_proposals_dir, "role_proposal"),
    ):
        found, _ = read_documents(folder, kind, skip)
        docs.extend(found)
    return docs


def _mark_coverage(
    patterns: list[Pattern], groups: list[list[int]], docs: list[Document], space: TfidfSpace,
    dense: np.ndarray | None, embed: TextEmbedder | None, cover_distance: float,
) -> None:
    """Set ``covered_by``/``role_covered_by`` from slugs and centroid similarity."""
    if not patterns:
        return
    doc_dense: np.ndarray | None = None
    if dense is not None and docs:
        try:
            doc_dense = call_embedder(embed, [d.text for d in docs])
        except Exception:
            doc_dense = None
    doc_rows = space.transform([d.text for d in docs])
    floor = 1.0 - cover_distance - clustering.EPS
    is_wiki = np.array([d.kind in ("wiki", "wiki_proposal") for d in docs], dtype=bool)
    is_role = np.array([d.kind == "role_proposal" for d in docs], dtype=bool)
    wiki_slugs: dict[str, int] = {}
    role_slugs: dict[str, int] = {}
    for k, doc in enumerate(docs):
        if doc.kind == "role_proposal":
            match = re.fullmatch(r".*?_replay-(.+)\.md", doc.path.name)
            if match:
                role_slugs.setdefault(match.group(1), k)
        else:
            wiki_slugs.setdefault(doc.slug, k)
    for pattern, group in zip(patterns, groups):
        if doc_dense is not None and dense is not None:
            centroid = dense[group].mean(axis=0)
            centroid /= np.linalg.norm(centroid) or 1.0
            sims = doc_dense @ centroid
        else:
            centroid = space.dense(group)
            sims = _sparse_dots(doc_rows, centroid)
        close = np.asarray(sims) >= floor
        wiki_hit = _first(close & is_wiki, wiki_slugs.get(pattern.slug))
        if wiki_hit is not None:
            doc = docs[wiki_hit]
            pattern.covered_by = f"{'wiki' if doc.kind == 'wiki' else 'wiki_proposals'}/{doc.slug}.md"
        role_hit = _first(close & is_role, role_slugs.get(pattern.slug))
        if role_hit is not None:
            pattern.role_covered_by = f"role_proposals/{docs[role_hit].path.name}"


def _first(mask: np.ndarray, also: int | None) -> int | None:
    """The lowest index set in ``mask`` or equal to ``also``."""
    hits = np.flatnonzero(mask)
    found = [int(hits[0])] if len(hits) else []
    if also is not None:
        found.append(also)
    return min(found) if found else None


MAX_CONFLICTS = 50  # proposals per run; the rest wait for the next run
# TF-IDF similarity from which a pair goes to the claim guard (possible copy or correction, proposed,
# never archived): "We never deploy on Fridays" / "We don't ever deploy on Fridays" is 0.42 alike
LEXICAL_JUDGE_FLOOR = 0.4


def _judge_claims(pairs: list[clustering.Pair], active: list[LoadedAtom],
                  max_distance: float) -> tuple[list[clustering.Pair], list[Conflict], dict[int, set[int]]]:
    """Split similar pairs with the claim guard: copies (worded alike AND the same claim; the
    similarity alone never decides) may be archived; conflicts (same topic, different
    numbers/negation/polarity/names, or added detail) never are. Also returns, for every note
    of the day files, the notes it contradicts (all of them, not only the proposed ones)."""
    copies: list[clustering.Pair] = []
    conflicts: list[Conflict] = []
    contrary: dict[int, set[int]] = {}
    for pair in sorted(pairs, key=lambda p: (-p.similarity, p.a, p.b)):
        a, b = active[pair.a], active[pair.b]
        rel = relate(a.atom.text, b.atom.text, pair.similarity, 1.0 - max_distance + clustering.EPS)
        if rel.kind == COPY:  # exact copies only: the one thing replay archives on its own
            copies.append(pair)
        elif rel.kind == POSSIBLE_COPY and not (a.archived or b.archived):
            if len(conflicts) < MAX_CONFLICTS:
                older, newer = sorted((a, b), key=_when)
                conflicts.append(Conflict(older, newer, rel.reasons, kind="merge"))
        elif rel.kind == CONFLICT and not (a.archived or b.archived):
            if contradicts(a.atom.text, b.atom.text):
                contrary.setdefault(pair.a, set()).add(pair.b)
                contrary.setdefault(pair.b, set()).add(pair.a)
            if len(conflicts) < MAX_CONFLICTS:
                older, newer = sorted((a, b), key=_when)
                conflicts.append(Conflict(older, newer, rel.reasons))
    return copies, conflicts, contrary


def _sparse_dots(rows: SparseRows, vector: np.ndarray) -> np.ndarray:
    """Dot product of every sparse row with a dense vector, in one pass."""
    products = vector[rows.indices] * rows.data
    sums = np.concatenate(([0.0], np.cumsum(products, dtype=np.float64)))
    return sums[rows.indptr[1:]] - sums[rows.indptr[:-1]]


def _free_name(stem: str, taken: set[str], folder: Path) -> str:
    """``<stem>.md``, or ``<stem>-2.md`` ... when a file of that name exists or is planned."""
    n = 1
    while True:
        name = f"{stem}.md" if n == 1 else f"{stem}-{n}.md"
        if f"{folder.name}/{name}" not in taken and not (folder / name).exists():
            taken.add(f"{folder.name}/{name}")
            return name
        n += 1


def _status_book(instance: Instance, issues: list[FileIssue]) -> StatusBook | None:
    """Atom statuses from ``memory/status.json`` (lint's sidecar); unreadable means none, reported."""
    try:
        return StatusBook.load(instance.memory_dir)
    except ConfigError as exc:
        issues.append(FileIssue(STATUS_FILE, f"{exc.message}; statuses ignored", skipped=True))
        return None


def _not_marked_distinct(pairs: list[clustering.Pair], active: list[LoadedAtom], book: StatusBook | None) -> list[clustering.Pair]:
    """Pairs minus those the user marked *distinct* in ``mnemara lint --fix`` (never archive one for the other)."""
    if book is None or not book.distinct:
        return pairs
    marked = {frozenset(p) for p in book.distinct if isinstance(p, list) and len(p) == 2}
    return [p for p in pairs if frozenset((fingerprint(active[p.a].atom), fingerprint(active[p.b].atom))) not in marked]


def apply_plan(plan: ReplayPlan, instance: Instance) -> ReplayResult:
    """Carry out ``plan.actions`` in order, then append the digest. Never deletes."""
    result = ReplayResult()
    moves: dict[Path, list[ArchiveMove]] = {}
    for action in plan.actions:
        if action.kind in ("write_wiki_proposal", "write_role_proposal"):
            target = instance.root / action.path
            if target.exists():
                result.problems.append(f"{action.path} appeared since the plan; left as it is")
                continue
            atomic_write_text(target, action.content)
            result.written.append(action.path)
        elif action.kind == "archive" and action.move is not None:
            moves.setdefault(action.move.source, []).append(action.move)
        elif action.kind == "propose_supersession" and plan.conflicts:
            try:
                for kind in ("supersede", "merge"):
                    propose_supersessions(instance.memory_dir, [(c.older.atom, c.newer.atom, "; ".join(c.reasons))
                                                                for c in plan.conflicts if c.kind == kind],
                                          by="replay", kind=kind)
                result.proposed = [c.describe() for c in plan.conflicts]
            except ConfigError as exc:
                result.problems.append(f"supersession proposals not recorded: {exc.message}")
    for source, batch in moves.items():
        done, problems = apply_moves(instance.archive_dir, source, batch, plan.stamp)
        result.archived.extend(f"{m.atom_key} -> memory/archive/{source.name} (duplicate of {m.keeper})" for m in done)
        result.problems.extend(problems)
    digest_rel = f"sleep/{plan.today.isoformat()}.md"
    digest_path = instance.root / digest_rel
    heading = "" if digest_path.exists() else f"# Sleep digest {plan.today.isoformat()}\n\n"
    locked_append(digest_path, heading + render_digest(plan, result.archived, result.written, result.problems,
                                                       [c.describe() for c in plan.conflicts]))
    result.digest = digest_rel
    plan.applied = True
    plan.result = result
    return result
