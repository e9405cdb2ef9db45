"""Dedupe on write: a note already held by an atom is not appended again; a correction always is.

Only active notes count: a superseded or deprecated note may be written again
(the fact became true again), and the writers say so (:func:`inactive_copies`).

Two tests, cheapest first:

* **same text**: equal after :func:`similarity.normalize` (case, whitespace,
  emphasis marks and trailing punctuation do not count). Needs nothing but the
  day files, so ``mnemara note`` uses only this one and stays light.
* **same claim**: the new text and the few atoms closest to it by shared
  words are compared with :func:`similarity.relate`: embedded (when an
  embedder answers, for the similarity shown) and checked by the claim guard.
  A *copy* (the same content words AND the same numbers, negations, polarity
  and names; a similarity never decides) is not appended. A
  *conflict* (same topic, different claim: "30 s" vs "60 s", "on" vs "off")
  is written, and the answer names the note it conflicts with so the user
  can resolve it (``mnemara lint --fix``). An embedder failure never blocks
  the write: the answer says the similarity check was skipped.
"""
from __future__ import annotations

import math
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, Sequence

from mnemara.core.errors import ConfigError
from mnemara.memory.notes import Atom, day_files, parse_text
from mnemara.memory.search.similarity import COPY, CONFLICT, contradicts, cosine, normalize, relate, strip_marks, tokens
from mnemara.memory.status import StatusBook, all_atoms, note_moment, propose_supersessions

SIMILAR_CANDIDATES = 5


class Embedder(Protocol):
    def embed(self, texts: list[str]) -> list[list[float]]: ...


@dataclass(frozen=True)
class Duplicate:
    """The atom that already holds a note, and how that was decided."""

    atom: Atom
    how: str  # "same text" | "same claim"
    similarity: float
    status: str = "active"

    def describe(self) -> dict[str, object]:
        return {"id": self.atom.id, "file": f"memory/{self.atom.file.name}", "timestamp": self.atom.timestamp,
                "category": self.atom.category, "text": self.atom.text[:500], "how": self.how,
                "similarity": round(self.similarity, 4), "status": self.status}


def _same_text(memory_dir: Path, text: str, atoms: Sequence[Atom] | None = None) -> list[Atom]:
    """Every note whose normalised text equals ``text``'s, oldest first.

    Without ``atoms``, day files that do not even contain the note's longest
    word (a plain substring test on the case-folded file) are not parsed.
    """
    want = normalize(text)
    if not want:
        return []
    if atoms is None:
        key = max(want.split(), key=len)
        atoms = []
        for path in day_files(memory_dir):
            try:
                raw = path.read_bytes().decode("utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if key in strip_marks(unicodedata.normalize("NFKC", raw).casefold()):
                atoms.extend(parse_text(raw, path))
    return [atom for atom in atoms if normalize(atom.text) == want]


def _book(memory_dir: Path) -> StatusBook | None:
    try:
        return StatusBook.load(memory_dir)
    except ConfigError:  # a broken sidecar: every note counts as active
        return None


def find_same_text(memory_dir: Path, text: str, atoms: Sequence[Atom] | None = None) -> Atom | None:
    """The oldest *active* note whose normalised text equals ``text``'s.

    A superseded or deprecated note does not hold a fact any more, so writing it
    again is allowed (:func:`inactive_copies` names such notes).
    """
    return same_text_notes(memory_dir, text, atoms)[0]


def inactive_copies(memory_dir: Path, text: str) -> list[str]:
    """Superseded or deprecated notes with the same text, as ``<status> note <id> (memory/<file>)``."""
    return same_text_notes(memory_dir, text)[1]


def same_text_notes(memory_dir: Path, text: str, atoms: Sequence[Atom] | None = None) -> tuple[Atom | None, list[str]]:
    """:func:`find_same_text` and :func:`inactive_copies` from one read of the day files (or of ``atoms``).

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
        against = contradicted_since(memory_dir, newest, text, atoms, book)
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
    query = Counter(tokens(text))
    if not query:
        return []
    bags = [set(tokens(a.text)) for a in atoms]
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

    duplicate: Duplicate | None = None
    conflicts: list[Conflict] = field(default_factory=list)
    note: str = ""  # why the similarity check was skipped, if it was
    restates: Atom | None = None  # a note with the same claim that a newer note contradicted since


def assess(memory_dir: Path, text: str, *, embedder: Embedder | None = None, threshold: float = 0.97) -> WriteCheck:
    """Copy (refuse), conflicts (write and name them) or nothing, for ``text`` against the atoms."""
    book = _book(memory_dir)
    atoms = [a for a in all_atoms(memory_dir) if book is None or book.status_of(a) == "active"]
    same = find_same_text(memory_dir, text, atoms)
    if same is not None:
        return WriteCheck(Duplicate(same, "same text", 1.0))
    check = WriteCheck(note="" if embedder is not None else "similarity check skipped: no embedder")
    candidates = closest_by_words(text, atoms)
    if not candidates:
        return check
    sims: list[float | None] = [None] * len(candidates)
    if embedder is not None:
        try:
            vectors = embedder.embed([text] + [a.text for a in candidates])
            sims = [cosine(vectors[0], vec) for vec in vectors[1:]]
        except Exception as exc:  # the embedder is optional: never block the write
            check.note = f"similarity check skipped: {exc}"
    best: tuple[float, Atom] | None = None
    copies: list[Atom] = []
    for atom, sim in zip(candidates, sims):
        rel = relate(text, atom.text, sim, threshold)
        if rel.kind == COPY:
            copies.append(atom)
            score = sim if sim is not None else 1.0
            if best is None or score > best[0]:
                best = (score, atom)
        elif rel.kind == CONFLICT:
            check.conflicts.append(Conflict(atom, rel.reasons, sim))
    if best is None:
        return check
    newest = max(copies, key=lambda a: note_moment(a.timestamp))
    against = contradicted_since(memory_dir, newest, text, atoms)
    if not against:
        check.duplicate = Duplicate(best[1], "same claim", best[0])
        return check
    check.restates = newest  # the newest word on the subject contradicts it: written again, conflicts named
    named = {c.atom.id for c in check.conflicts}
    check.conflicts.extend(Conflict(a, relate(text, a.text).reasons, None) for a in against if a.id not in named)
    return check


def find_duplicate(memory_dir: Path, text: str, *, embedder: Embedder | None = None,
                   threshold: float = 0.97) -> tuple[Duplicate | None, str]:
    """``(duplicate or None, note)``; ``note`` says why the similarity check was skipped, if it was."""
    check = assess(memory_dir, text, embedder=embedder, threshold=threshold)
    return check.duplicate, "" if check.duplicate and check.duplicate.how == "same text" else check.note


def embedder_for(config: Any) -> Embedder | None:
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
    """Record "``written`` may supersede <each conflicting note>" for ``mnemara lint --fix`` to offer
    first (as replay does), so the answer's "resolve with `mnemara lint --fix`" always holds: lint's
    own same-topic scan keeps only its best pairs and may not list this one. Returns how many were new;
    a broken ``memory/status.json`` records nothing (lint reports that file)."""
    pairs = [(c.atom, written, "; ".join(c.reasons)) for c in check.conflicts if c.atom.id != written.id]
    if not pairs:
        return 0
    try:
        return propose_supersessions(memory_dir, pairs, by="write_memory")
    except ConfigError:
        return 0


def conflict_report(check: WriteCheck) -> dict[str, Any]:
    """Fields added to a successful write answer when the note conflicts with older ones."""
    if not check.conflicts:
        return {}
    ids = ", ".join(c.atom.id for c in check.conflicts)
    out: dict[str, Any] = {"conflicts_with": [c.describe() for c in check.conflicts],
                           "conflict_message": f"written; conflicts with {ids}: resolve with `mnemara lint --fix` "
                                               f"(the newer note ranks first in recall meanwhile)"}
    if check.restates is not None:
        out["restates"] = check.restates.id
        out["conflict_message"] += (f"; it restates note {check.restates.id}, which a newer note "
                                    "contradicted, so it was written again as the newest word")
    return out
