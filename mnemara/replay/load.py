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

from mnemara.memory.notes import DEFAULT_CATEGORY, HEADING_RE, Atom, day_files

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
        """File-and-timestamp citation, stable when other atoms move: ``2026-04-27.md@<ts>``."""
        prefix = "archive/" if self.archived else ""
        return f"{prefix}{self.atom.file.name}@{self.atom.timestamp}"

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

    Lines are split exactly as :func:`mnemara.memory.notes.parse_text` splits them,
    so both agree on where a note starts. Preamble plus blocks give back ``data``.
    """
    blocks: list[tuple[int, bytes, str, str]] = []
    preamble_end = None
    offset = 0
    start = None
    head: tuple[str, str] = ("", "")
    for line in data.decode("utf-8").splitlines(keepends=True):
        match = HEADING_RE.match(line.rstrip("\r\n"))
        if match:
            if start is None:
                preamble_end = offset
            else:
                blocks.append((start, data[start:offset], head[0], head[1]))
            start = offset
            head = (match.group(1), match.group(2).strip() or DEFAULT_CATEGORY)
        offset += len(line.encode("utf-8"))
    if start is not None:
        blocks.append((start, data[start:], head[0], head[1]))
    preamble = data if preamble_end is None else data[:preamble_end]
    return preamble, blocks


def block_text(raw: bytes) -> str:
    """The body of a raw block exactly as :func:`mnemara.memory.notes.parse_text` gives it."""
    lines = raw.decode("utf-8").splitlines(keepends=True)
    return "".join(lines[1:]).strip("\n")


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
        if issue is not None:
            result.issues.append(issue)
            continue
        preamble, blocks = split_blocks(data)
        if not blocks:
            if data.strip():
                result.issues.append(FileIssue(path.name, "no note headings ('## <ISO timestamp> <category>')"))
            continue
        if preamble.strip():
            result.issues.append(
                FileIssue(path.name, f"{len(preamble)} bytes before the first heading are not a note (kept as is)", skipped=False)
            )
        result.files.append(path)
        for offset, raw, stamp, category in blocks:
            atom = Atom(stamp, category, block_text(raw), path, offset)
            result.atoms.append(LoadedAtom(atom, raw, len(result.atoms)))
    return result
