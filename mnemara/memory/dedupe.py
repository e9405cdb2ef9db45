"""Dedupe on write: a note already held by an atom is not appended again.

Only active notes count: a superseded or deprecated note may be written again
(the fact became true again), and the writers say so (:func:`inactive_copies`).

Two tests, cheapest first:

* **same text**: equal after :func:`similar.normalize` (case, whitespace,
  emphasis marks and trailing punctuation do not count). Needs nothing but the
  day files, so ``mnemara note`` uses only this one and stays light.
* **similar meaning**: when an embedder answers, the new text and the few
  atoms closest to it by shared words (TF-IDF) are embedded and compared; a
  cosine similarity at or above ``dedupe_threshold`` is a duplicate. An
  embedder failure never blocks the write: the note is appended and the
  answer says the similarity check was skipped.
"""
from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, Sequence

from mnemara.errors import ConfigError
from mnemara.memory.notes import Atom, day_files, parse_text
from mnemara.memory.similar import content_words, cosine, normalize
from mnemara.memory.status import StatusBook, all_atoms

SIMILAR_CANDIDATES = 5
MARKS_RE = re.compile(r"[*_`~]+")  # the emphasis marks normalize() drops


class Embedder(Protocol):
    def embed(self, texts: list[str]) -> list[list[float]]: ...


@dataclass(frozen=True)
class Duplicate:
    """The atom that already holds a note, and how that was decided."""

    atom: Atom
    how: str  # "same text" | "similar meaning"
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
            if key in MARKS_RE.sub("", unicodedata.normalize("NFKC", raw).casefold()):
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
    found = _same_text(memory_dir, text, atoms)
    book = _book(memory_dir) if found else None
    return next((a for a in found if book is None or book.status_of(a) == "active"), None)


def inactive_copies(memory_dir: Path, text: str) -> list[str]:
    """Superseded or deprecated notes with the same text, as ``<status> note <id> (memory/<file>)``."""
    found = _same_text(memory_dir, text)
    book = _book(memory_dir) if found else None
    if book is None:
        return []
    return [f"{book.status_of(a)} note {a.id} ({a.location})" for a in found if book.status_of(a) != "active"]


def closest_by_words(text: str, atoms: Sequence[Atom], n: int = SIMILAR_CANDIDATES) -> list[Atom]:
    """The ``n`` atoms sharing the most (IDF-weighted) content words with ``text``."""
    query = Counter(content_words(text))
    if not query:
        return []
    bags = [set(content_words(a.text)) for a in atoms]
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


def find_duplicate(memory_dir: Path, text: str, *, embedder: Embedder | None = None,
                   threshold: float = 0.97) -> tuple[Duplicate | None, str]:
    """``(duplicate or None, note)``; ``note`` says why the similarity check was skipped, if it was."""
    book = _book(memory_dir)
    atoms = [a for a in all_atoms(memory_dir) if book is None or book.status_of(a) == "active"]
    same = find_same_text(memory_dir, text, atoms)
    if same is not None:
        return Duplicate(same, "same text", 1.0), ""
    if embedder is None or not atoms:
        return None, "" if embedder is not None else "similarity check skipped: no embedder"
    candidates = closest_by_words(text, atoms)
    if not candidates:
        return None, ""
    try:
        vectors = embedder.embed([text] + [a.text for a in candidates])
    except Exception as exc:  # the embedder is optional: never block the write
        return None, f"similarity check skipped: {exc}"
    best: tuple[float, Atom] | None = None
    for atom, vec in zip(candidates, vectors[1:]):
        sim = cosine(vectors[0], vec)
        if best is None or sim > best[0]:
            best = (sim, atom)
    if best is not None and best[0] >= threshold:
        return Duplicate(best[1], "similar meaning", best[0]), ""
    return None, ""


def embedder_for(config: object) -> Embedder | None:
    """The configured Ollama embedder, or None when the embed client is not available."""
    try:
        from mnemara.memory.embed import EmbedError, OllamaEmbedder  # lands with the RAG layer
    except ImportError:
        return None
    try:
        return OllamaEmbedder(config.rag_embed_url, config.rag_embed_model, timeout=3.0)  # type: ignore[attr-defined]
    except EmbedError:
        return None


def check_before_write(memory_dir: Path, text: str, config: object | None = None) -> dict[str, object] | None:
    """The tool answer for a duplicate (nothing appended), or None to go ahead and write.

    With a ``config`` whose ``rag_enabled`` is on, the similarity test runs too.
    """
    embedder = embedder_for(config) if config is not None and getattr(config, "rag_enabled", False) else None
    threshold = float(getattr(config, "dedupe_threshold", 0.97))
    dup, _note = find_duplicate(memory_dir, text, embedder=embedder, threshold=threshold)
    if dup is None:
        return None
    return {"ok": True, "written": False, "duplicate": True, "existing": dup.describe(),
            "message": f"not appended: note {dup.atom.id} already holds this note ({dup.how})"}
