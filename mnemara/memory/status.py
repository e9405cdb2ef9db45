"""Note status (active / superseded / deprecated) in a sidecar, ``memory/status.json``.

Why a sidecar and not a marker note appended to a day file: a marker would be
a note itself, so it would be indexed, recalled and deduped like knowledge,
and every reader would have to replay markers in order to know a note's
state. The day files stay exactly as written (nothing is rewritten or
deleted); the sidecar is small, written atomically under a lock, and keeps
each note's history of changes, and every change is also logged to
``debug.log`` by the callers.

Entries are keyed by the note id (:mod:`mnemara.memory.notes`), which does not
move when other notes are edited. Version 1 of the file keyed them by
``<day>@<timestamp>:<hash of the normalised text>``; such a file is read by
matching those keys against the notes on disk and is written back as version
2 on the next change (:func:`migrate_status` does it at once).

Note references accepted everywhere: the note id (``20260427-183201-3fa9c1``, also
``note:20260427-183201-3fa9c1``) and the ids of before (``2026-04-27@<ts>#<offset>``,
``memory:2026-04-27.md#<offset>``), see :func:`mnemara.memory.notes.find_notes`.
"""
from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

from mnemara.core import json_limits
from mnemara.core.debuglog import now_iso
from mnemara.core.errors import ConfigError, UsageError
from mnemara.core.fsutil import atomic_write_text, locked
from mnemara.memory.notes import (
    LEGACY_ATOM_ID_RE as ATOM_ID_RE,
)
from mnemara.memory.notes import (
    LEGACY_CHUNK_ID_RE as CHUNK_ID_RE,
)
from mnemara.memory.notes import (
    Atom,
    all_notes,
    find_note,
)

STATUS_FILE = "status.json"
STATUS_VERSION = 2
STATUSES = ("active", "superseded", "deprecated")
__all__ = ["ATOM_ID_RE", "CHUNK_ID_RE", "STATUSES", "StatusBook", "find_atom", "set_status"]


def fingerprint(atom: Atom) -> str:
    """The key of a note in ``status.json``: its id."""
    return atom.id


def chunk_id(atom: Atom) -> str:
    """The id the RAG index gives this note's chunk: ``note:<id>``."""
    return atom.ref


def all_atoms(memory_dir: Path) -> list[Atom]:
    """Every note of every day file (unreadable files are skipped)."""
    return all_notes(memory_dir)


def find_atom(memory_dir: Path, ref: str) -> Atom:
    """The note named by ``ref`` (see :func:`mnemara.memory.notes.find_notes`), or :class:`UsageError`."""
    return find_note(memory_dir, ref)


def _legacy_key(atom: Atom) -> str:
    """The version-1 key of a note. Frozen on purpose: it must keep matching old files."""
    text = unicodedata.normalize("NFKC", atom.text).casefold()
    text = " ".join(re.sub(r"[*_`~]+", "", text).split()).rstrip(" .!?;:")
    return f"{atom.file.stem}@{atom.timestamp}:{hashlib.sha256(text.encode('utf-8')).hexdigest()[:16]}"


def _upgrade(memory_dir: Path, entries: dict[str, Any], distinct: list[Any]) -> tuple[dict[str, Any], list[Any]]:
    """Version-1 entries and pairs re-keyed by note id; keys matching no note are kept as they are."""
    ids: dict[str, str] = {}
    for atom in all_notes(memory_dir, archive=True):
        ids.setdefault(_legacy_key(atom), atom.id)
    out: dict[str, Any] = {}
    for key, entry in entries.items():
        new = dict(entry) if isinstance(entry, dict) else {"status": "active"}
        target = ids.get(new.pop("superseded_by_fp", ""), "")
        if target:
            new["superseded_by"] = target
        ident = ids.get(key, key)
        new["atom_id"] = ident if key in ids else new.get("atom_id", key)
        out[ident] = new
    pairs = [sorted(ids.get(str(k), str(k)) for k in p) for p in distinct if isinstance(p, list) and len(p) == 2]
    return out, pairs


@dataclass
class StatusBook:
    """The parsed sidecar. ``entries`` maps note id -> entry dict."""

    path: Path
    entries: dict[str, dict[str, Any]]
    distinct: list[list[str]]
    upgraded: bool = field(default=False)  # read from a version-1 file
    proposals: list[dict[str, Any]] = field(default_factory=list)  # supersession proposals (replay, write_memory)

    @classmethod
    def load(cls, memory_dir: Path) -> "StatusBook":
        path = Path(memory_dir) / STATUS_FILE
        try:
            raw = json_limits.load_file(path)
        except FileNotFoundError:
            return cls(path, {}, [])
        except (OSError, ValueError) as exc:  # a bad file, or one refused by a limit (too big, too deep)
            raise ConfigError(f"{path}: cannot read note status ({exc}); fix or remove the file") from None
        if not isinstance(raw, dict) or not isinstance(raw.get("atoms", {}), dict):
            raise ConfigError(f"{path}: expected an object with an 'atoms' object; fix or remove the file")
        entries = dict(raw.get("atoms", {}))
        distinct = raw.get("distinct", [])
        distinct = list(distinct) if isinstance(distinct, list) else []
        proposals = raw.get("proposals", [])
        proposals = [p for p in proposals if isinstance(p, dict)] if isinstance(proposals, list) else []
        if raw.get("version", 1) == 1 and (entries or distinct):
            entries, distinct = _upgrade(Path(memory_dir), entries, distinct)
            return cls(path, entries, distinct, upgraded=True, proposals=proposals)
        return cls(path, entries, distinct, proposals=proposals)

    def save(self) -> None:
        data: dict[str, Any] = {"version": STATUS_VERSION, "atoms": self.entries, "distinct": self.distinct}
        if self.proposals:
            data["proposals"] = self.proposals
        atomic_write_text(self.path, json.dumps(data, indent=1, ensure_ascii=False, sort_keys=True) + "\n")
        self.upgraded = False

    def status_of(self, atom: Atom) -> str:
        entry = self.entries.get(atom.id)
        return str(entry.get("status", "active")) if entry else "active"

    def entry(self, atom: Atom) -> dict[str, Any] | None:
        return self.entries.get(atom.id)

    def is_distinct(self, a: Atom, b: Atom) -> bool:
        pair = sorted((a.id, b.id))
        return pair in [sorted(p) for p in self.distinct if isinstance(p, list)]

    def rename(self, old: str, new: str) -> bool:
        """Re-key note ``old`` as ``new`` (its text was changed by a fix); True when anything named it."""
        hit = False
        if old in self.entries and new not in self.entries:
            self.entries[new] = {**self.entries.pop(old), "atom_id": new}
            hit = True
        for entry in self.entries.values():
            if entry.get("superseded_by") == old:
                entry["superseded_by"] = new
                hit = True
        for pair in self.distinct:
            if isinstance(pair, list) and old in pair:
                pair[pair.index(old)] = new
                hit = True
        return hit


def load_book(memory_dir: Path) -> StatusBook:
    return StatusBook.load(memory_dir)


def migrate_status(memory_dir: Path) -> bool:
    """Write a version-1 ``status.json`` back keyed by note ids; True when it did."""
    with locked(Path(memory_dir) / ".status.lock"):
        book = StatusBook.load(memory_dir)
        if book.upgraded:
            book.save()
            return True
    return False


def rename_ids(memory_dir: Path, renamed: dict[str, str]) -> None:
    """Carry status entries over to the new ids of notes whose text a fix changed."""
    if not renamed or not (Path(memory_dir) / STATUS_FILE).exists():
        return
    with locked(Path(memory_dir) / ".status.lock"):
        book = StatusBook.load(memory_dir)
        changed = [book.rename(old, new) for old, new in renamed.items() if old != new]
        if any(changed) or book.upgraded:
            book.save()


def inactive_atoms(memory_dir: Path) -> dict[str, dict[str, Any]]:
    """Chunk id (``note:<id>``) -> status entry of every superseded or deprecated note."""
    book = StatusBook.load(memory_dir)
    return {f"note:{ident}": entry for ident, entry in book.entries.items()
            if isinstance(entry, dict) and entry.get("status") in ("superseded", "deprecated")}


class Unchanged(UsageError):
    """The note already has the asked status; nothing was written."""


def set_status(memory_dir: Path, old: Atom, status: str, *, new: Atom | None = None,
               reason: str = "") -> dict[str, Any]:
    """Record ``old``'s new status; returns the entry. Never touches the day files.

    Restoring a note that is already active raises :class:`Unchanged` (no history entry);
    marking a note deprecated again without a reason keeps the reason it had.
    """
    if status not in STATUSES:
        raise UsageError(f"unknown status {status!r}: use one of {', '.join(STATUSES)}")
    if status == "superseded":
        if new is None:
            raise UsageError("superseded needs the note that replaces it")
        if new.id == old.id:
            raise UsageError("a note cannot supersede itself")
    reason = (reason or "").strip()[:500]
    with locked(Path(memory_dir) / ".status.lock"):
        book = StatusBook.load(memory_dir)
        if new is not None:
            chain = book.entries.get(new.id)
            if chain and chain.get("status") == "superseded" and chain.get("superseded_by") == old.id:
                raise UsageError("refusing a cycle: the replacement is itself superseded by this note")
            if status == "superseded":
                _check_replacement(book, old, new)
        previous = book.entries.get(old.id, {})
        if status == "active" and previous.get("status", "active") == "active":
            raise Unchanged(f"{old.id} is already active (it was never superseded or deprecated); nothing changed")
        if not reason and previous.get("status") == status:
            reason = str(previous.get("reason") or "")
        history = list(previous.get("history", []))
        if previous:
            history.append({k: previous.get(k) for k in ("status", "superseded_by", "reason", "at")})
        entry: dict[str, Any] = {"status": status, "atom_id": old.id, "reason": reason, "at": now_iso(),
                                 "history": history}
        if new is not None and status == "superseded":
            entry.update(superseded_by=new.id)
        book.entries[old.id] = entry
        book.save()
    return entry


def note_moment(timestamp: str) -> datetime:
    """A note's heading timestamp as an aware datetime (no zone: UTC; unreadable: the earliest time)."""
    try:
        moment = datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    except ValueError:
        return datetime.min.replace(tzinfo=timezone.utc)
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def _check_replacement(book: "StatusBook", old: Atom, new: Atom) -> None:
    """A note is superseded by a later, live one: an earlier or deprecated replacement would hide
    the newer note (a correction) from recall with nothing left to say what is true."""
    if note_moment(new.timestamp) < note_moment(old.timestamp):
        raise UsageError(f"refusing: the replacement {new.id} ({new.timestamp}) is older than {old.id} "
                         f"({old.timestamp}); a note is superseded by a later one (to say the newer note is "
                         f"wrong, deprecate it: `mnemara memory deprecate {old.id}`)")
    if book.status_of(new) == "deprecated":
        raise UsageError(f"refusing: the replacement {new.id} is deprecated itself, so nothing would say what "
                         "is true; restore it first (`mnemara memory restore`) or deprecate this note instead")


def mark_distinct(memory_dir: Path, a: Atom, b: Atom) -> None:
    """Remember that a same-topic pair was judged not to supersede each other."""
    with locked(Path(memory_dir) / ".status.lock"):
        book = StatusBook.load(memory_dir)
        if not book.is_distinct(a, b):
            book.distinct.append(sorted((a.id, b.id)))
            book.save()


PROPOSAL_KINDS = ("supersede", "merge")


def propose_supersessions(memory_dir: Path, pairs: list[tuple[Atom, Atom, str]], by: str,
                          kind: str = "supersede") -> int:
    """Record proposals on ``(older, newer, why)`` pairs for ``mnemara lint --fix`` and ``/memory
    review`` to offer: ``supersede`` ("``newer`` may correct ``older``") or ``merge`` ("``newer`` may
    be a copy of ``older``"). Returns how many were new. Nothing changes status here: accepting
    either marks ``older`` superseded by ``newer``, and only the user does that."""
    if kind not in PROPOSAL_KINDS:
        raise UsageError(f"unknown proposal kind {kind!r}: use one of {', '.join(PROPOSAL_KINDS)}")
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
                                   "why": why[:500], "by": by, "at": now_iso(), "kind": kind})
            added += 1
        if added:
            book.save()
    return added


def forget_fingerprints(memory_dir: Path, ids: set[str]) -> int:
    """Drop status entries of forgotten notes (and pairs naming them); returns how many went."""
    with locked(Path(memory_dir) / ".status.lock"):
        book = StatusBook.load(memory_dir)
        before = len(book.entries) + len(book.distinct)
        book.entries = {k: v for k, v in book.entries.items() if k not in ids}
        book.distinct = [p for p in book.distinct if not (set(p) & ids)]
        book.proposals = [p for p in book.proposals if not ({p.get("older_fp"), p.get("newer_fp")} & ids)]
        gone = before - len(book.entries) - len(book.distinct)
        if gone or book.upgraded:
            book.save()
    return gone


class NoteQuery(Protocol):
    """What :func:`query_active` asks (a :class:`mnemara.memory.search.rag.RagIndex`)."""

    def query(self, question: str, k: int = 5, kind: str | None = None) -> dict[str, Any]: ...


def query_active(rag: NoteQuery, memory_dir: Path, question: str, k: int = 5, kind: str | None = None,
                 include_inactive: bool = False) -> dict[str, Any]:
    """``rag.query`` without superseded/deprecated atoms (unless ``include_inactive``).

    Asks the index for enough extra hits to still return ``k`` after skipping;
    the answer says how many were skipped and names each one in ``left_out``
    (id, status, the note that supersedes it, why). With ``include_inactive`` every
    hit of an inactive atom carries its ``status`` (and ``superseded_by``).
    Superseded and deprecated notes are the only ones left out: the user (or a
    proposal the user accepted) marked them.
    """
    try:
        inactive = inactive_atoms(memory_dir)
        book: StatusBook | None = StatusBook.load(memory_dir)
    except ConfigError as exc:  # a broken sidecar must not take recall down with it
        answer = rag.query(question, k, kind)
        answer["warning"] = f"superseded notes not filtered: {exc.message}"
        return _with_provenance(memory_dir, _with_newer(rag, answer, {}, None))
    if not inactive:
        return _with_provenance(memory_dir, _with_newer(rag, rag.query(question, k, kind), inactive, book))
    answer = rag.query(question, min(100, k + len(inactive)), kind)
    hits: list[dict[str, Any]] = []
    left_out: list[dict[str, Any]] = []
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
            left_out.append(_left_out(hit, entry))
    from mnemara.memory.search.recency import best_with_conflicts

    for hit in hits:  # a left-out note must not flag a live one: conflicts are worked out again without it
        for key in ("may_conflict_with", "conflict"):
            hit.pop(key, None)
    answer["hits"] = best_with_conflicts(hits, k)
    if left_out:
        answer["skipped_inactive"] = len(left_out)
        answer["left_out"] = left_out
    return _with_provenance(memory_dir, _with_newer(rag, answer, {} if include_inactive else inactive, book))


def _with_newer(rag: NoteQuery, answer: dict[str, Any], inactive: dict[str, dict[str, Any]],
                book: StatusBook | None) -> dict[str, Any]:
    """The answer with every newer note on a note hit's subject beside it, marked, newest first
    (:func:`mnemara.memory.search.newer.attach_newer`): recall never hands only the old fact. A
    note the user superseded or deprecated is never added, nor one judged distinct from the hit."""
    candidates = getattr(rag, "same_subject_candidates", None)
    if candidates is None or not answer.get("hits"):
        return answer
    from mnemara.core.errors import BackendUnavailable
    from mnemara.memory.search.newer import LOOKUP, attach_newer

    def lookup(hits: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
        try:  # an addition to an answer that stands without it: a lookup that cannot run finds nothing
            return candidates(hits, LOOKUP)
        except BackendUnavailable:
            return {}

    pairs = {tuple(sorted(p)) for p in (book.distinct if book is not None else []) if isinstance(p, list) and len(p) == 2}

    def distinct(a: str, b: str) -> bool:
        return tuple(sorted((a.removeprefix("note:"), b.removeprefix("note:")))) in pairs

    answer["hits"] = attach_newer(answer["hits"], lookup, skip=lambda ident: ident in inactive, distinct=distinct)
    return answer


def _with_provenance(memory_dir: Path, answer: dict[str, Any]) -> dict[str, Any]:
    """Each note hit (and left-out note) says who wrote it: ``provenance``."""
    from mnemara.memory import provenance

    known = provenance.load(memory_dir)
    for hit in [*answer.get("hits", []), *answer.get("left_out", [])]:
        line = provenance.for_hit(memory_dir, str(hit.get("id", "")), known)
        if line is not None:
            hit["provenance"] = line
    return answer


def _left_out(hit: dict[str, Any], entry: dict[str, Any]) -> dict[str, Any]:
    """How a superseded or deprecated hit is named where it was left out."""
    status = str(entry.get("status"))
    out: dict[str, Any] = {"id": hit.get("id"), "status": status, "text": str(hit.get("text", ""))[:300]}
    if entry.get("superseded_by"):
        out["superseded_by"] = f"note:{entry['superseded_by']}"
    why = f"superseded by note:{entry['superseded_by']}" if entry.get("superseded_by") else status
    reason = str(entry.get("reason") or "")
    out["why"] = why + (f" ({reason})" if reason else "")
    return out
