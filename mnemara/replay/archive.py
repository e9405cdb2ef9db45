"""Phase 5 on disk: move a near-duplicate note from its day file into ``memory/archive/``.

Each archived note is one entry of ``memory/archive/<day>.md``: a marker line
that points at the note it duplicates, then the note's block byte for byte::

    <!-- mnemara-replay archived 2026-04-28T03:00:00+00:00 from=2026-04-27.md bytes=57 duplicate-of=20260426-100000-9c01be -->
    ## 2026-04-27T18:32:01+00:00 insight
    Worth remembering across sessions.

Order of writes, so a note is never lost: under the day file's lock the entry
is appended to the archive and fsynced, then the day file is replaced without
the block (temp file + rename). A crash in between leaves the note in both
places; the next run sees the entry already archived, does not append it
again and only finishes the removal. The day file is changed only through
:mod:`mnemara.memory.dayfile`, which finds each note by its id and text.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from mnemara.core.fsutil import locked_append
from mnemara.memory.dayfile import NoteChanged, editing
from mnemara.memory.notes import ArchiveEntry, archive_entries, parse_archive
from mnemara.replay.load import FileIssue, LoadedAtom

__all__ = ["ArchiveEntry", "ArchiveMove", "apply_moves", "archive_path", "load_archived", "read_entries"]


@dataclass(frozen=True)
class ArchiveMove:
    """One planned move: note ``atom_key`` (its id; ``text`` as planned) of ``source`` duplicates ``keeper``."""

    source: Path
    raw: bytes
    keeper: str
    atom_key: str
    text: str = ""


def archive_path(archive_dir: Path, source: Path) -> Path:
    return archive_dir / source.name


def format_entry(move: ArchiveMove, when: str, raw: bytes | None = None) -> bytes:
    raw = move.raw if raw is None else raw
    marker = (
        f"<!-- mnemara-replay archived {when} from={move.source.name} bytes={len(raw)} "
        f"duplicate-of={move.keeper} -->\n"
    ).encode("utf-8")
    tail = b"" if raw.endswith(b"\n") else b"\n"
    return marker + raw + tail


def read_entries(path: Path) -> list[ArchiveEntry]:
    """Entries of one archive file (an unreadable or foreign file has none)."""
    try:
        return archive_entries(path.read_bytes())
    except OSError:
        return []


def load_archived(archive_dir: Path, day_files: list[Path], start: int) -> tuple[list[LoadedAtom], list[FileIssue]]:
    """Archived notes whose day file is in the window, numbered from ``start``.

    They take part in clustering (a repeated note is evidence of a pattern) so a
    second run sees the same notes as the first and decides the same things.
    """
    atoms: list[LoadedAtom] = []
    issues: list[FileIssue] = []
    for day in day_files:
        path = archive_path(archive_dir, day)
        if not path.is_file():
            continue
        try:
            data = path.read_bytes()
        except OSError as exc:
            issues.append(FileIssue(f"archive/{path.name}", f"cannot read: {exc.strerror or exc}"))
            continue
        entries = archive_entries(data)
        notes = parse_archive(data, path) if entries else []
        if len(notes) != len(entries):
            issues.append(FileIssue(f"archive/{path.name}", f"{len(entries) - len(notes)} entries are not one note each; "
                                    "ignored", skipped=False))
        for note in notes:
            entry = next(e for e in entries if e.start == note.offset)
            atoms.append(LoadedAtom(note, entry.raw, start + len(atoms), archived=True))
    return atoms, issues


def apply_moves(archive_dir: Path, source: Path, moves: list[ArchiveMove], when: str) -> tuple[list[ArchiveMove], list[str]]:
    """Archive ``moves`` (all from ``source``); return (moves done, problems).

    Each note is found by its id and checked against its planned text; one that is
    no longer in the day file as planned (edited since the plan) is left alone and reported.
    """
    done: list[ArchiveMove] = []
    problems: list[str] = []
    target = archive_path(archive_dir, source)
    with editing(source) as day:
        found = []
        for move in moves:
            try:
                found.append((move, day.locate(move.atom_key, move.text or None)))
            except NoteChanged:
                problems.append(f"{move.atom_key}: changed in {source.name} since the plan; not archived")
        if not found:
            return done, problems
        already = {(e.source, e.raw) for e in read_entries(target)}
        fresh = []
        for move, note in found:
            raw = day.raw(note)
            if (source.name, raw) not in already:
                fresh.append(format_entry(move, when, raw))
            day.drop(note)
            done.append(move)
        if fresh:
            locked_append(target, b"".join(fresh).decode("utf-8"))
            _fsync(target)
    return done, problems


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
