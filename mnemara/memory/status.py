"""Atom status (active / superseded / deprecated) in a sidecar, ``memory/status.json``.

Why a sidecar and not a marker note appended to a day file: a marker would be
an atom itself, so it would be indexed, recalled and deduped like knowledge,
and every reader would have to replay markers in order to know an atom's
state. The day files stay exactly as written (nothing is rewritten or
deleted); the sidecar is small, written atomically under a lock, and keeps
each atom's history of changes, and every change is also logged to
``debug.log`` by the callers.

Entries are keyed by a *fingerprint* (day, heading timestamp and a hash of the
normalised text) rather than by the atom id, because an atom id carries a byte
offset that moves when a note above it is edited or forgotten. The id is kept
for display.

Atom references accepted everywhere: the atom id (``2026-04-27@2026-04-27T18:32:01+00:00#120``)
and the RAG chunk id of a note (``memory:2026-04-27.md#120``).
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mnemara.debuglog import now_iso
from mnemara.errors import ConfigError, UsageError
from mnemara.fsutil import atomic_write_text, locked
from mnemara.memory.notes import Atom, day_files, parse_file
from mnemara.memory.similarity import normalize

STATUS_FILE = "status.json"
STATUSES = ("active", "superseded", "deprecated")
ATOM_ID_RE = re.compile(r"^(\d{4}-\d{2}-\d{2})@(\S+)#(\d+)$")
CHUNK_ID_RE = re.compile(r"^memory:(\d{4}-\d{2}-\d{2})\.md#(\d+)$")


def fingerprint(atom: Atom) -> str:
    digest = hashlib.sha256(normalize(atom.text).encode("utf-8")).hexdigest()[:16]
    return f"{atom.file.stem}@{atom.timestamp}:{digest}"


def chunk_id(atom: Atom) -> str:
    """The id the RAG index gives this atom's chunk."""
    return f"memory:{atom.file.name}#{atom.offset}"


def all_atoms(memory_dir: Path) -> list[Atom]:
    """Every atom of every day file (unreadable files are skipped)."""
    out: list[Atom] = []
    for path in day_files(memory_dir):
        try:
            out.extend(parse_file(path))
        except (OSError, UnicodeDecodeError):
            continue
    return out


def find_atom(memory_dir: Path, ref: str) -> Atom:
    """The atom named by ``ref`` (atom id or memory chunk id), or :class:`UsageError`."""
    ref = (ref or "").strip()
    m = ATOM_ID_RE.match(ref)
    c = CHUNK_ID_RE.match(ref)
    if not (m or c):
        raise UsageError(
            f"not an atom reference: {ref!r} (use an atom id like 2026-04-27@<timestamp>#<offset> "
            "or a chunk id like memory:2026-04-27.md#<offset>)")
    day, offset = (m.group(1), int(m.group(3))) if m else (c.group(1), int(c.group(2)))  # type: ignore[union-attr]
    path = Path(memory_dir) / f"{day}.md"
    if not path.is_file():
        raise UsageError(f"no atom {ref!r}: memory/{day}.md does not exist")
    try:
        atoms = parse_file(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read memory/{day}.md: {exc}") from None
    for atom in atoms:
        if atom.offset == offset and (not m or atom.timestamp == m.group(2)):
            return atom
    raise UsageError(f"no atom {ref!r} in memory/{day}.md (the file changed? list atoms with `mnemara lint`)")


@dataclass
class StatusBook:
    """The parsed sidecar. ``entries`` maps fingerprint -> entry dict."""

    path: Path
    entries: dict[str, dict[str, Any]]
    distinct: list[list[str]]
    proposals: list[dict[str, Any]] = field(default_factory=list)  # supersession proposals (replay)

    @classmethod
    def load(cls, memory_dir: Path) -> "StatusBook":
        path = Path(memory_dir) / STATUS_FILE
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return cls(path, {}, [])
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ConfigError(f"{path}: cannot read atom status ({exc}); fix or remove the file") from None
        if not isinstance(raw, dict) or not isinstance(raw.get("atoms", {}), dict):
            raise ConfigError(f"{path}: expected an object with an 'atoms' object; fix or remove the file")
        distinct = raw.get("distinct", [])
        proposals = raw.get("proposals", [])
        return cls(path, dict(raw.get("atoms", {})), list(distinct) if isinstance(distinct, list) else [],
                   [p for p in proposals if isinstance(p, dict)] if isinstance(proposals, list) else [])

    def save(self) -> None:
        data: dict[str, Any] = {"version": 1, "atoms": self.entries, "distinct": self.distinct}
        if self.proposals:
            data["proposals"] = self.proposals
        atomic_write_text(self.path, json.dumps(data, indent=1, ensure_ascii=False, sort_keys=True) + "\n")

    def status_of(self, atom: Atom) -> str:
        entry = self.entries.get(fingerprint(atom))
        return str(entry.get("status", "active")) if entry else "active"

    def entry(self, atom: Atom) -> dict[str, Any] | None:
        return self.entries.get(fingerprint(atom))

    def is_distinct(self, a: Atom, b: Atom) -> bool:
        pair = sorted((fingerprint(a), fingerprint(b)))
        return pair in [sorted(p) for p in self.distinct if isinstance(p, list)]


def load_book(memory_dir: Path) -> StatusBook:
    return StatusBook.load(memory_dir)


def inactive_atoms(memory_dir: Path) -> dict[str, dict[str, Any]]:
    """Chunk id -> status entry of every superseded or deprecated atom present in the files."""
    book = StatusBook.load(memory_dir)
    if not book.entries:
        return {}
    out = {}
    for atom in all_atoms(memory_dir):
        entry = book.entries.get(fingerprint(atom))
        if entry and entry.get("status") in ("superseded", "deprecated"):
            out[chunk_id(atom)] = entry
    return out


def set_status(memory_dir: Path, old: Atom, status: str, *, new: Atom | None = None,
               reason: str = "") -> dict[str, Any]:
    """Record ``old``'s new status; returns the entry. Never touches the day files."""
    if status not in STATUSES:
        raise UsageError(f"unknown status {status!r}: use one of {', '.join(STATUSES)}")
    if status == "superseded":
        if new is None:
            raise UsageError("superseded needs the atom that replaces it")
        if fingerprint(new) == fingerprint(old):
            raise UsageError("an atom cannot supersede itself")
    reason = (reason or "").strip()[:500]
    with locked(Path(memory_dir) / ".status.lock"):
        book = StatusBook.load(memory_dir)
        if new is not None:
            chain = book.entries.get(fingerprint(new))
            if chain and chain.get("superseded_by_fp") == fingerprint(old):
                raise UsageError("refusing a cycle: the replacement is itself superseded by this atom")
        fp = fingerprint(old)
        previous = book.entries.get(fp, {})
        history = list(previous.get("history", []))
        if previous:
            history.append({k: previous.get(k) for k in ("status", "superseded_by", "reason", "at")})
        entry: dict[str, Any] = {"status": status, "atom_id": old.id, "reason": reason, "at": now_iso(),
                                 "history": history}
        if new is not None and status == "superseded":
            entry.update(superseded_by=new.id, superseded_by_fp=fingerprint(new))
        book.entries[fp] = entry
        book.save()
    return entry


def mark_distinct(memory_dir: Path, a: Atom, b: Atom) -> None:
    """Remember that a same-topic pair was judged not to supersede each other."""
    with locked(Path(memory_dir) / ".status.lock"):
        book = StatusBook.load(memory_dir)
        if not book.is_distinct(a, b):
            book.distinct.append(sorted((fingerprint(a), fingerprint(b))))
            book.save()


def propose_supersessions(memory_dir: Path, pairs: list[tuple[Atom, Atom, str]], by: str) -> int:
    """Record "``newer`` may supersede ``older``" proposals (``(older, newer, why)``) for
    ``mnemara lint --fix`` to offer; returns how many were new. Nothing changes status here."""
    added = 0
    with locked(Path(memory_dir) / ".status.lock"):
        book = StatusBook.load(memory_dir)
        known = {(p.get("older_fp"), p.get("newer_fp")) for p in book.proposals}
        for older, newer, why in pairs:
            key = (fingerprint(older), fingerprint(newer))
            if key in known or book.is_distinct(older, newer):
                continue
            known.add(key)
            book.proposals.append({"older_fp": key[0], "newer_fp": key[1], "older": older.id, "newer": newer.id,
                                   "why": why[:500], "by": by, "at": now_iso()})
            added += 1
        if added:
            book.save()
    return added


def forget_fingerprints(memory_dir: Path, fps: set[str]) -> int:
    """Drop status entries of forgotten atoms (and pairs naming them); returns how many went."""
    with locked(Path(memory_dir) / ".status.lock"):
        book = StatusBook.load(memory_dir)
        before = len(book.entries) + len(book.distinct)
        book.entries = {k: v for k, v in book.entries.items() if k not in fps}
        book.distinct = [p for p in book.distinct if not (set(p) & fps)]
        book.proposals = [p for p in book.proposals if not ({p.get("older_fp"), p.get("newer_fp")} & fps)]
        gone = before - len(book.entries) - len(book.distinct)
        if gone:
            book.save()
    return gone


def query_active(rag: Any, memory_dir: Path, question: str, k: int = 5, kind: str | None = None,
                 include_inactive: bool = False) -> dict[str, Any]:
    """``rag.query`` without superseded/deprecated atoms (unless ``include_inactive``).

    Asks the index for enough extra hits to still return ``k`` after skipping;
    the answer says how many were skipped. With ``include_inactive`` every hit of
    an inactive atom carries its ``status`` (and ``superseded_by``).
    """
    try:
        inactive = inactive_atoms(memory_dir)
    except ConfigError as exc:  # a broken sidecar must not take recall down with it
        answer = rag.query(question, k, kind)
        answer["warning"] = f"superseded notes not filtered: {exc.message}"
        return answer
    if not inactive:
        return rag.query(question, k, kind)
    answer = rag.query(question, min(100, k + len(inactive)), kind)
    hits, skipped = [], 0
    for hit in answer.get("hits", []):
        entry = inactive.get(hit.get("id", ""))
        if entry is None:
            hits.append(hit)
        elif include_inactive:
            hit["status"] = entry.get("status")
            if entry.get("superseded_by"):
                hit["superseded_by"] = entry["superseded_by"]
            hits.append(hit)
        else:
            skipped += 1
    answer["hits"] = hits[:k]
    if skipped:
        answer["skipped_inactive"] = skipped
    return answer
