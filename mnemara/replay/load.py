"""Phase 1: load the atoms of the last N day files, skipping (and reporting) odd files.

A day file is hand-editable, so anything can be in it. A file is *skipped* (its
atoms take no part in replay, it is never rewritten) when it is a symbolic link
(rewriting would replace the link, not its target), is not valid UTF-8,
has a line longer than :data:`MAX_LINE_BYTES`, is larger than
:data:`MAX_FILE_BYTES`, cannot be read, or holds text but no note heading.
Each skip is one :class:`FileIssue` with a plain reason; nothing raises.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

from mnemara.memory import notes
from mnemara.memory.notes import Atom, day_files

MAX_LINE_BYTES = 256 * 1024
MAX_FILE_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class FileIssue:
    """A day file replay skipped or only partly understood."""

    file: str
    reason: str
    skipped: bool = True


@dataclass(frozen=True)
class LoadedAtom:
    """An atom plus the exact bytes of its block in the day file (heading to next heading)."""

    atom: Atom
    raw: bytes
    index: int  # position in the loaded list; stable within one run
    archived: bool = False  # an entry of memory/archive/: evidence for patterns, never moved again

    @property
    def key(self) -> str:
        """The note id (stable when other notes move or are archived)."""
        return self.atom.id

    @property
    def location(self) -> str:
        """Where the note lives, relative to the instance: ``memory/...``."""
        return f"memory/archive/{self.atom.file.name}" if self.archived else f"memory/{self.atom.file.name}"

    @property
    def digest(self) -> str:
        return hashlib.sha1(self.raw).hexdigest()[:12]


@dataclass
class LoadResult:
    atoms: list[LoadedAtom] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    issues: list[FileIssue] = field(default_factory=list)


def files_in_window(memory_dir: Path, days: int, today: date) -> list[Path]:
    """Day files dated within the last ``days`` days, today included, oldest first."""
    try:
        first = today - timedelta(days=days - 1)
    except OverflowError:
        first = date.min
    out = []
    for path in day_files(memory_dir):
        try:
            day = date.fromisoformat(path.stem)
        except ValueError:
            continue
        if first <= day <= today:
            out.append(path)
    return out


def split_blocks(data: bytes) -> tuple[bytes, list[tuple[int, bytes, str, str]]]:
    """Split UTF-8 day-file bytes into (preamble, [(offset, raw block, timestamp, category)]).

    The blocks are the notes of :func:`mnemara.memory.notes.parse_bytes`; preamble plus
    blocks give back ``data``.
    """
    preamble, atoms = notes.parse_bytes(data, Path("day.md"))
    return preamble, [(a.offset, data[a.offset:a.end], a.timestamp, a.category) for a in atoms]


def block_text(raw: bytes) -> str:
    """The text of a raw block exactly as :func:`mnemara.memory.notes.parse_bytes` gives it."""
    return notes.block_text(raw)


def check_file(path: Path) -> tuple[bytes | None, FileIssue | None]:
    """Read ``path`` and return its bytes, or ``None`` and the reason it is skipped."""
    name = path.name
    try:
        if path.is_symlink():
            return None, FileIssue(name, "a symbolic link (replay only rewrites real day files)")
        if not path.is_file():
            return None, FileIssue(name, "not a regular file")
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            return None, FileIssue(name, f"file is {size} bytes (limit {MAX_FILE_BYTES})")
        data = path.read_bytes()
    except OSError as exc:
        return None, FileIssue(name, f"cannot read: {exc.strerror or exc}")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, FileIssue(name, f"not valid UTF-8 (byte {exc.start})")
    for number, line in enumerate(data.splitlines(), start=1):
        if len(line) > MAX_LINE_BYTES:
            return None, FileIssue(name, f"line {number} is {len(line)} bytes (limit {MAX_LINE_BYTES})")
    return data, None


def load_atoms(memory_dir: Path, days: int, today: date) -> LoadResult:
    """Load every atom of the day files in the window; odd files become issues."""
    result = LoadResult()
    for path in files_in_window(memory_dir, days, today):
        data, issue = check_file(path)
        if issue is not None or data is None:
            result.issues.extend([issue] if issue else [])
            continue
        preamble, atoms = notes.parse_bytes(data, path)
        if not atoms:
            if data.strip():
                result.issues.append(FileIssue(path.name, "no note headings ('## <ISO timestamp> <category>' or 0.18's '## [<timestamp>] <category>')"))
            continue
        if preamble.removeprefix(notes.BOM).strip():
            result.issues.append(
                FileIssue(path.name, f"{len(preamble)} bytes before the first heading are not a note (kept as is)", skipped=False)
            )
        for number, line in notes.stray_headings(data):
            result.issues.append(FileIssue(
                path.name, f"line {number} looks like a note heading but is not one ({line[:60]!r}): its text is "
                "read as part of the note above it (see `mnemara lint`)", skipped=False))
        result.files.append(path)
        for atom in atoms:
            result.atoms.append(LoadedAtom(atom, data[atom.offset:atom.end], len(result.atoms)))
    return result
