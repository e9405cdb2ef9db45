"""Phase 5 on disk: move a near-duplicate note from its day file into ``memory/archive/``.

Each archived note is one entry of ``memory/archive/<day>.md``: a marker line
that points at the note it duplicates, then the note's block byte for byte::

    <!-- mnemara-replay archived 2026-04-28T03:00:00+00:00 from=2026-04-27.md bytes=57 duplicate-of=2026-04-26.md@2026-04-26T10:00:00+00:00 -->
    ## 2026-04-27T18:32:01+00:00 insight
    Worth remembering across sessions.

Order of writes, so a note is never lost: under the day file's lock the entry
is appended to the archive and fsynced, then the day file is replaced without
the block (temp file + rename). A crash in between leaves the note in both
places; the next run sees the entry already archived, does not append it
again and only finishes the removal.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from mnemara.fsutil import locked_append, locked_rewrite
from mnemara.memory.notes import Atom
from mnemara.replay.load import FileIssue, LoadedAtom, block_text, split_blocks

MARKER_RE = re.compile(
    rb"^<!-- mnemara-replay archived (?P<when>\S+) from=(?P<source>\S+) bytes=(?P<size>\d+) "
    rb"duplicate-of=(?P<keeper>\S+) -->\n",
    re.MULTILINE,
)


@dataclass(frozen=True)
class ArchiveEntry:
    source: str
    keeper: str
    when: str
    raw: bytes


@dataclass(frozen=True)
class ArchiveMove:
    """One planned move: the exact block ``raw`` of ``source`` duplicates ``keeper``."""

    source: Path
    raw: bytes
    keeper: str
    atom_key: str


def archive_path(archive_dir: Path, source: Path) -> Path:
    return archive_dir / source.name


def format_entry(move: ArchiveMove, when: str) -> bytes:
    marker = (
        f"<!-- mnemara-replay archived {when} from={move.source.name} bytes={len(move.raw)} "
        f"duplicate-of={move.keeper} -->\n"
    ).encode("utf-8")
    tail = b"" if move.raw.endswith(b"\n") else b"\n"
    return marker + move.raw + tail


def read_entries(path: Path) -> list[ArchiveEntry]:
    """Entries of one archive file (an unreadable or foreign file has none)."""
    try:
        data = path.read_bytes()
    except OSError:
        return []
    entries = []
    for match in MARKER_RE.finditer(data):
        size = int(match.group("size"))
        raw = data[match.end(): match.end() + size]
        entries.append(
            ArchiveEntry(match.group("source").decode(), match.group("keeper").decode(), match.group("when").decode(), raw)
        )
    return entries


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
        for entry in read_entries(path):
            try:
                _, blocks = split_blocks(entry.raw)
            except UnicodeDecodeError:
                blocks = []
            if len(blocks) != 1:
                issues.append(FileIssue(f"archive/{path.name}", f"an entry archived {entry.when} is not one note; ignored", skipped=False))
                continue
            _, raw, stamp, category = blocks[0]
            atom = Atom(stamp, category, block_text(raw), path, 0)
            atoms.append(LoadedAtom(atom, raw, start + len(atoms), archived=True))
    return atoms, issues


def apply_moves(archive_dir: Path, source: Path, moves: list[ArchiveMove], when: str) -> tuple[list[ArchiveMove], list[str]]:
    """Archive ``moves`` (all from ``source``); return (moves done, problems).

    A planned block that is no longer in the day file (edited since the plan)
    is left alone and reported.
    """
    done: list[ArchiveMove] = []
    problems: list[str] = []
    target = archive_path(archive_dir, source)
    with locked_rewrite(source) as (data, replace):
        preamble, blocks = split_blocks(data)
        raws = [raw for _, raw, _, _ in blocks]
        remove: set[int] = set()
        for move in moves:
            position = next((i for i, raw in enumerate(raws) if raw == move.raw and i not in remove), None)
            if position is None:
                problems.append(f"{move.atom_key}: changed in {source.name} since the plan; not archived")
                continue
            remove.add(position)
            done.append(move)
        if not done:
            return done, problems
        already = {(e.source, e.raw) for e in read_entries(target)}
        fresh = [m for m in done if (source.name, m.raw) not in already]
        if fresh:
            locked_append(target, b"".join(format_entry(m, when) for m in fresh).decode("utf-8"))
            _fsync(target)
        replace(preamble + b"".join(raw for i, raw in enumerate(raws) if i not in remove))
    return done, problems


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
