"""Dedupe on write: only an exact copy is not appended; anything close is written and proposed.

The rule (issue 31): no automatic step refuses a note on a similarity or a claim-guard
verdict, because a wrong "copy" costs the user a correction. Only active notes count: a
superseded or deprecated note may be written again (the fact became true again), and the
writers say so (:attr:`WriteCheck.inactive`).

* **exact copy**: the same text after :func:`mnemara.memory.search.exact.copy_key`
  (whitespace, Unicode form, the case of plain words, markdown dressing). Not appended;
  the answer names the kept note. ``mnemara note`` uses only this test and stays light.
* **possible copy**: the few atoms closest to the new text by shared words are compared
  with :func:`similarity.relate`. Worded alike with the same claim, but not the same
  text: written, and a *merge* proposal is recorded for ``mnemara lint --fix``.
* **possible correction** (a conflict: same subject, different claim: "30 s" / "60 s",
  ``redis-a`` / ``redis-b``): written, named in the answer, and a *supersession*
  proposal is recorded. An embedder failure never blocks the write: the answer says the
  similarity check was skipped.
"""
from __future__ import annotations

import math
import sqlite3
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Protocol, Sequence

from mnemara.core.errors import ConfigError
from mnemara.core.fsutil import LinkRefused
from mnemara.memory.note_index import NoteIndex
from mnemara.memory.notes import Atom, day_files, parse_text
from mnemara.memory.search.exact import copy_key
from mnemara.memory.search.similarity import CONFLICT, POSSIBLE_COPY, contradicts, cosine, relate, strip_marks, subject_words
from mnemara.memory.status import StatusBook, all_atoms, note_moment, propose_supersessions

if TYPE_CHECKING:
    from mnemara.core.config import Config

SIMILAR_CANDIDATES = 5


class Embedder(Protocol):
    def embed(self, texts: list[str]) -> list[list[float]]: ...


@dataclass(frozen=True)
class Duplicate:
    """The atom that already holds a note, and how that was decided."""

    atom: Atom
    how: str  # "same text": the only kind that is acted on
    similarity: float
    status: str = "active"

    def describe(self) -> dict[str, object]:
        return {"id": self.atom.id, "file": f"memory/{self.atom.file.name}", "timestamp": self.atom.timestamp,
                "category": self.atom.category, "text": self.atom.text[:500], "how": self.how,
                "similarity": round(self.similarity, 4), "status": self.status}


def _same_text(memory_dir: Path, text: str, atoms: Sequence[Atom] | None = None) -> list[Atom]:
    """Every note that is an exact copy of ``text`` (the same :func:`copy_key`), oldest first.

    Without ``atoms``, day files that do not even contain the note's longest
    word (a plain substring test on the case-folded file) are not parsed.
    """
    want = copy_key(text)
    if not want:
        return []
    if atoms is None:
        key = max(want.split(), key=len).casefold()
        atoms = []
        for path in day_files(memory_dir):
            try:
                raw = path.read_bytes().decode("utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if key in strip_marks(unicodedata.normalize("NFKC", raw).casefold()):
                atoms.extend(parse_text(raw, path))
    return [atom for atom in atoms if copy_key(atom.text) == want]


def _book(memory_dir: Path) -> StatusBook | None:
    try:
        return StatusBook.load(memory_dir)
    except ConfigError:  # a broken sidecar: every note counts as active
        return None


def find_same_text(memory_dir: Path, text: str, atoms: Sequence[Atom] | None = None) -> Atom | None:
    """The oldest *active* note that is an exact copy of ``text``.

    A superseded or deprecated note does not hold a fact any more, so writing it
    again is allowed (:attr:`WriteCheck.inactive` names such notes).
    """
    return same_text_notes(memory_dir, text, atoms)[0]


def same_text_notes(memory_dir: Path, text: str, atoms: Sequence[Atom] | None = None, *,
                    later: Callable[[Atom], Sequence[Atom]] | None = None) -> tuple[Atom | None, list[str]]:
    """:func:`find_same_text` and the inactive notes with the same text, from one read of the day files (or of ``atoms``).

    A note with the same text that a newer active note contradicts does not hold the text any
    more (writing it again restates it: see :func:`contradicted_since`); it is named in the
    second list instead."""
    found = _same_text(memory_dir, text, atoms)
    book = _book(memory_dir) if found else None
    actives = [a for a in found if book is None or book.status_of(a) == "active"]
    others = [] if book is None else [f"{book.status_of(a)} note {a.id} ({a.location})"
                                      for a in found if book.status_of(a) != "active"]
    if actives:
        newest = max(actives, key=lambda a: note_moment(a.timestamp))
        against = contradicted_since(memory_dir, newest, text, later(newest) if later else atoms, book)
        if against:
            others.append(f"note {newest.id} ({newest.location}), contradicted since by "
                          + ", ".join(f"note {a.id} ({a.location})" for a in against))
            return None, others
    return (actives[0] if actives else None), others


def contradicted_since(memory_dir: Path, held_by: Atom, text: str, atoms: Sequence[Atom] | None = None,
                       book: StatusBook | None = None) -> list[Atom]:
    """Active notes newer than ``held_by`` that contradict ``text`` on the same subject.

    "30 s" (day 1), "300 s" (day 2): writing "30 s" on day 3 is not a copy to refuse but the
    newest word, and refusing it would leave "300 s" as the newest note (first in recall).
    Without ``atoms`` only the day files from ``held_by``'s day on are read.
    """
    since = note_moment(held_by.timestamp)
    if atoms is None:
        atoms = []
        for path in day_files(memory_dir):
            if path.name < held_by.file.name:
                continue
            try:
                atoms.extend(parse_text(path.read_bytes().decode("utf-8"), path))
            except (OSError, UnicodeDecodeError):
                continue
    return [a for a in atoms
            if note_moment(a.timestamp) > since and (book is None or book.status_of(a) == "active")
            and contradicts(text, a.text) and relate(text, a.text).kind == CONFLICT]


def closest_by_words(text: str, atoms: Sequence[Atom], n: int = SIMILAR_CANDIDATES) -> list[Atom]:
    """The ``n`` atoms sharing the most (IDF-weighted) content words with ``text``."""
    query = Counter(subject_words(text))
    if not query:
        return []
    bags = [set(subject_words(a.text)) for a in atoms]
    df: Counter[str] = Counter()
    for bag in bags:
        df.update(w for w in bag if w in query)
    total = len(atoms) + 1
    scored = []
    for atom, bag in zip(atoms, bags):
        score = sum(math.log(total / (1 + df[w])) + 1.0 for w in query if w in bag)
        if score > 0:
            scored.append((score, atom))
    scored.sort(key=lambda pair: -pair[0])
    return [atom for _, atom in scored[:n]]


@dataclass(frozen=True)
class Conflict:
    """An active atom on the same topic whose claim differs from the new note's."""

    atom: Atom
    reasons: tuple[str, ...]
    similarity: float | None

    def describe(self) -> dict[str, object]:
        out: dict[str, object] = {"id": self.atom.id, "file": f"memory/{self.atom.file.name}",
                                  "timestamp": self.atom.timestamp, "text": self.atom.text[:500],
                                  "why": "; ".join(self.reasons)}
        if self.similarity is not None:
            out["similarity"] = round(self.similarity, 4)
        return out


@dataclass
class WriteCheck:
    """What dedupe found for a note about to be written."""

    duplicate: Duplicate | None = None  # an exact copy: the only reason not to append
    conflicts: list[Conflict] = field(default_factory=list)  # possible corrections: supersession proposals
    copies: list[Conflict] = field(default_factory=list)  # possible copies: merge proposals
    note: str = ""  # why the similarity check was skipped, if it was
    restates: Atom | None = None  # an exact copy of a note that a newer note contradicted since
    inactive: list[str] = field(default_factory=list)  # superseded/deprecated notes with the same text

    def lines(self) -> list[str]:
        """What a CLI write (``mnemara note``, ``/note``) says after writing: the proposals it recorded."""
        out = [f"note: the same text is in {old}; written again" for old in self.inactive]
        out += [f"may correct note {c.atom.id} ({'; '.join(c.reasons)}): both kept; proposed for supersession"
                for c in self.conflicts]
        out += [f"may be a copy of note {c.atom.id} (not the same text): both kept; proposed for a merge"
                for c in self.copies]
        if self.conflicts or self.copies:
            out.append("review with `mnemara lint --fix` or /memory review")
        return out


def assess(memory_dir: Path, text: str, *, embedder: Embedder | None = None, threshold: float = 0.97) -> WriteCheck:
    """An exact copy (not appended), or the possible copies and corrections to propose, for ``text``.

    The copies and the closest notes are looked up in :class:`NoteIndex`, so a write does not read
    every note; when the index cannot be used, every note is read (slower, same answer)."""
    book = _book(memory_dir)
    try:
        with NoteIndex.open(memory_dir) as index:
            index.sync()
            found = index.same_key(copy_key(text))
            near = index.closest(subject_words(text), SIMILAR_CANDIDATES * 4)
            since = {a.file.name: index.since(a.file.name) for a in found}
    except (sqlite3.Error, LinkRefused):  # a broken or linked index: read every note (never write through a link)
        everything = all_atoms(memory_dir)
        found = _same_text(memory_dir, text, everything)
        near = closest_by_words(text, everything, SIMILAR_CANDIDATES * 4)
        since = {a.file.name: [b for b in everything if b.file.name >= a.file.name] for a in found}
    return _judge(memory_dir, text, book, found, near, since, embedder, threshold)


def _judge(memory_dir: Path, text: str, book: StatusBook | None, found: list[Atom], near: list[Atom],
           since: dict[str, list[Atom]], embedder: Embedder | None, threshold: float) -> WriteCheck:
    def active(atom: Atom) -> bool:
        return book is None or book.status_of(atom) == "active"

    same, others = same_text_notes(memory_dir, text, found, later=lambda a: since[a.file.name])
    if same is not None:
        return WriteCheck(Duplicate(same, "same text", 1.0))
    check = WriteCheck(note="" if embedder is not None else "similarity check skipped: no embedder",
                       inactive=others)
    restated = [a for a in found if active(a)]
    if restated:
        check.restates = max(restated, key=lambda a: note_moment(a.timestamp))
    candidates = [a for a in near if active(a) and a not in found][:SIMILAR_CANDIDATES]
    sims: list[float | None] = [None] * len(candidates)
    if embedder is not None and candidates:
        try:
            vectors = embedder.embed([text] + [a.text for a in candidates])
            sims = [cosine(vectors[0], vec) for vec in vectors[1:]]
        except Exception as exc:  # the embedder is optional: never block the write
            check.note = f"similarity check skipped: {exc}"
    for atom, sim in zip(candidates, sims):
        rel = relate(text, atom.text, sim, threshold)
        if rel.kind == POSSIBLE_COPY:
            check.copies.append(Conflict(atom, rel.reasons, sim))
        elif rel.kind == CONFLICT:
            check.conflicts.append(Conflict(atom, rel.reasons, sim))
    if check.restates is not None:
        named = {c.atom.id for c in check.conflicts}
        later = contradicted_since(memory_dir, check.restates, text, since[check.restates.file.name], book)
        check.conflicts.extend(Conflict(a, relate(text, a.text).reasons, None) for a in later if a.id not in named)
    return check


def find_duplicate(memory_dir: Path, text: str, *, embedder: Embedder | None = None,
                   threshold: float = 0.97) -> tuple[Duplicate | None, str]:
    """``(duplicate or None, note)``; ``note`` says why the similarity check was skipped, if it was."""
    check = assess(memory_dir, text, embedder=embedder, threshold=threshold)
    return check.duplicate, "" if check.duplicate and check.duplicate.how == "same text" else check.note


def embedder_for(config: Config) -> Embedder | None:
    """The configured embedder (see :mod:`mnemara.memory.search.embedders`), or None."""
    from mnemara.memory.search.embedders import make_embedder

    embedder, _problem = make_embedder(config)
    return embedder


def check_write(memory_dir: Path, text: str, config: Any | None = None) -> WriteCheck:
    """Dedupe for a write; with a ``config`` whose ``rag_enabled`` is on, the same-claim test runs too."""
    embedder = embedder_for(config) if config is not None and getattr(config, "rag_enabled", False) else None
    threshold = float(getattr(config, "dedupe_threshold", 0.97))
    return assess(memory_dir, text, embedder=embedder, threshold=threshold)


def refusal(check: WriteCheck) -> dict[str, object] | None:
    """The tool answer for a copy (nothing appended), or None to go ahead and write."""
    dup = check.duplicate
    if dup is None:
        return None
    return {"ok": True, "written": False, "duplicate": True, "existing": dup.describe(),
            "message": f"not appended: note {dup.atom.id} already holds this note ({dup.how})"}


def check_before_write(memory_dir: Path, text: str, config: Any | None = None) -> dict[str, object] | None:
    """The tool answer for a duplicate (nothing appended), or None to go ahead and write."""
    return refusal(check_write(memory_dir, text, config))


def propose_conflicts(memory_dir: Path, check: WriteCheck, written: Atom) -> int:
    """Record "``written`` may supersede <each conflicting note>" and "``written`` may be a copy of
    <each possible copy>" for ``mnemara lint --fix`` and ``/memory review`` to offer first (as replay
    does), so the answer's "resolve with `mnemara lint --fix`" always holds. Returns how many were
    new; a broken ``memory/status.json`` records nothing (lint reports that file)."""
    added = 0
    for kind, found in (("supersede", check.conflicts), ("merge", check.copies)):
        pairs = [(c.atom, written, "; ".join(c.reasons)) for c in found if c.atom.id != written.id]
        if not pairs:
            continue
        try:
            added += propose_supersessions(memory_dir, pairs, by="write_memory", kind=kind)
        except ConfigError:
            return added
    return added


def conflict_report(check: WriteCheck) -> dict[str, Any]:
    """Fields added to a successful write answer when the note may correct or copy older ones."""
    out: dict[str, Any] = {}
    messages = []
    if check.conflicts:
        ids = ", ".join(c.atom.id for c in check.conflicts)
        out["conflicts_with"] = [c.describe() for c in check.conflicts]
        messages.append(f"written; it may correct {ids}: both are kept and flagged in recall (newer first) "
                        "until you resolve it with `mnemara lint --fix` or `/memory review`")
    if check.copies:
        ids = ", ".join(c.atom.id for c in check.copies)
        out["possible_copies"] = [c.describe() for c in check.copies]
        messages.append(f"written; it may be a copy of {ids} (not the same text, so nothing was merged): "
                        "merge it with `mnemara lint --fix` or `/memory review`")
    if check.restates is not None and check.conflicts:
        out["restates"] = check.restates.id
        messages.append(f"it restates note {check.restates.id}, which a newer note contradicted, so it was "
                        "written again as the newest word")
    if messages:
        out["conflict_message"] = "; ".join(messages)
    return out
