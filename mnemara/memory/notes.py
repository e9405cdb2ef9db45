"""Day notes: ``memory/YYYY-MM-DD.md``, append-only, one block per note.

Format of one note (shared by ``mnemara note``, ``/note`` and ``write_memory``)::

    ## 2026-04-27T18:32:01+00:00 insight
    Worth remembering across sessions.

A note is an *atom*: its heading timestamp, category and body text. This module
must stay free of heavy imports: ``mnemara note`` uses it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from mnemara.errors import UsageError
from mnemara.fsutil import locked_append

#: ``## <ISO ts> <category>``, and Mnemara 0.18's ``## [<ISO ts>] <category>`` (a blank line follows it).
HEADING_RE = re.compile(r"^## \[?(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[+-]\d{2}:\d{2}|Z))\]? ?(.*)$")
CATEGORY_RE = re.compile(r"[A-Za-z0-9_./-]{1,80}")
DEFAULT_CATEGORY = "note"


@dataclass(frozen=True)
class Atom:
    """One parsed note."""

    timestamp: str
    category: str
    text: str
    file: Path
    offset: int  # byte offset of the heading line in ``file``

    @property
    def id(self) -> str:
        """Stable id: ``<day file stem>@<timestamp>#<offset>``."""
        return f"{self.file.stem}@{self.timestamp}#{self.offset}"


def validate_category(category: str | None) -> str:
    category = (category or DEFAULT_CATEGORY).strip() or DEFAULT_CATEGORY
    if not CATEGORY_RE.fullmatch(category) or ".." in category.split("/"):
        raise UsageError(
            f"invalid category {category!r}: use letters, digits, '_', '-', '.', '/' (at most 80)"
        )
    return category


def format_note(text: str, category: str, when: datetime) -> str:
    body = text.strip("\n")
    return f"## {when.replace(microsecond=0).isoformat()} {category}\n{body}\n\n"


def append_note(
    memory_dir: Path, text: str, category: str | None = None, when: datetime | None = None
) -> tuple[Path, str]:
    """Append one note to today's file; returns (file, timestamp). Refuses empty text."""
    if not text or not text.strip():
        raise UsageError("refusing to write an empty note")
    category = validate_category(category)
    when = when or datetime.now(timezone.utc)
    path = Path(memory_dir) / f"{when.date().isoformat()}.md"
    locked_append(path, format_note(text, category, when))
    return path, when.replace(microsecond=0).isoformat()


def parse_text(text: str, file: Path) -> list[Atom]:
    """Split a day file's text into atoms. Text before the first heading is ignored."""
    atoms: list[Atom] = []
    current: tuple[str, str, int] | None = None
    body: list[str] = []
    offset = 0
    for line in text.splitlines(keepends=True):
        match = HEADING_RE.match(line.rstrip("\r\n"))
        if match:
            if current:
                atoms.append(Atom(current[0], current[1], "".join(body).strip("\n"), file, current[2]))
            current = (match.group(1), match.group(2).strip() or DEFAULT_CATEGORY, offset)
            body = []
        elif current is not None:
            body.append(line)
        offset += len(line.encode("utf-8"))
    if current:
        atoms.append(Atom(current[0], current[1], "".join(body).strip("\n"), file, current[2]))
    return atoms


def parse_file(path: Path) -> list[Atom]:
    """Atoms of one day file. Raises ``UnicodeDecodeError``/``OSError`` for unreadable files."""
    return parse_text(Path(path).read_bytes().decode("utf-8"), Path(path))


def day_files(memory_dir: Path) -> list[Path]:
    """The day files of ``memory_dir`` (``YYYY-MM-DD.md``), oldest first; the archive is excluded."""
    return sorted(p for p in Path(memory_dir).glob("*.md") if re.fullmatch(r"\d{4}-\d{2}-\d{2}\.md", p.name))
