"""Day notes: ``memory/YYYY-MM-DD.md``, append-only, one block per note. The one parser.

Format of one note (shared by ``mnemara note``, ``/note`` and ``write_memory``)::

    ## 2026-04-27T18:32:01+00:00 insight
    Worth remembering across sessions.

Mnemara 0.18 wrote ``## [<timestamp>] <category>``, a blank line, then the
text; such notes are read as well (``style == "v018"``), so files written by
0.18 need no rewriting.

**Note id.** A note is named by ``YYYYMMDD-HHMMSS-xxxxxx``: the digits of its
heading timestamp and six hex digits of a hash of its timestamp and its text
(whitespace runs count as one space). Nothing positional goes in, so editing,
growing, shrinking or deleting *another* note never changes it; editing the
note itself does. Two notes of one file with the same timestamp and text get
``-2``, ``-3`` ... in file order. ``note:<id>`` is the same id where a
namespace is needed (RAG chunks, graph nodes).

**Forged headings.** A body line that would read as a heading (``## 2020-...``
or ``## [2020-...]``), or looks like one (:data:`NEAR_HEADING_RE`), is written
with one more leading backslash and read back without it, so one write is
always exactly one note, the text comes back as given, and lint reports only
the heading typos of hand edits (:func:`stray_headings`).

Archive files (``memory/archive/<day>.md``, written by replay) hold entries: a
marker line saying how many bytes of note follow, then that note's block.
:func:`parse_archive` reads them by that length, never across entries.

This module must stay free of heavy imports: ``mnemara note`` uses it.
"""
from __future__ import annotations

import hashlib
import os
import re
import unicodedata
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path

from mnemara.core.errors import UsageError
from mnemara.core.fsutil import locked_append

ISO_TS = r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[+-]\d{2}:\d{2}|Z)"
HEADING_RE = re.compile(rf"^## ({ISO_TS}) ?(.*)$")
V018_TS = r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[+-]\d{2}:\d{2}|Z)?"
V018_HEADING_RE = re.compile(rf"^##\s*\[\s*({V018_TS})\s*\]\s*(.*)$")
# a line that was meant as a note heading: '#'s, then a date and a time (any spacing or separator), or
# a date in brackets (Mnemara 0.18 read any '## [...]' as a heading, so a hand-edited '## [2026-05-01]' was one)
NEAR_HEADING_RE = re.compile(r"^\s{0,3}#{1,6}\s*(?:\[\s*\d{4}-\d{1,2}-\d{1,2}[^\]]*\]"
                             r"|\[?\s*\d{4}-\d{1,2}-\d{1,2}(?:[T ]|\s+)\d{1,2}[:.]\d{2})")
CATEGORY_RE = re.compile(r"[A-Za-z0-9_./-]{1,80}")
DEFAULT_CATEGORY = "note"
NOTE_ID_RE = re.compile(r"^(?:note:)?(\d{8}-\d{6}-[0-9a-f]{6}(?:-\d+)?)$")
LEGACY_ATOM_ID_RE = re.compile(r"^(\d{4}-\d{2}-\d{2})@(\S+)#(\d+)$")
LEGACY_CHUNK_ID_RE = re.compile(r"^memory:(\d{4}-\d{2}-\d{2})\.md#(\d+)$")
ARCHIVE_MARKER_RE = re.compile(
    rb"^<!-- mnemara-replay archived (?P<when>\S+) from=(?P<source>\S+) bytes=(?P<size>\d+) "
    rb"duplicate-of=(?P<keeper>\S+) -->\n",
    re.MULTILINE,
)


def heading(line: str) -> tuple[str, str, str] | None:
    """``(timestamp, category, style)`` when ``line`` (without its newline) is a note heading."""
    line = line.rstrip("\r")
    match = HEADING_RE.match(line)
    if match:
        return match.group(1), match.group(2).strip() or DEFAULT_CATEGORY, "iso"
    match = V018_HEADING_RE.match(line)
    if match:
        return match.group(1), match.group(2).strip() or DEFAULT_CATEGORY, "v018"
    return None


def id_text(text: str) -> str:
    """The form of a note's text its id hashes: NFC, whitespace runs as one space, trimmed."""
    return " ".join(unicodedata.normalize("NFC", text).split())


def base_id(timestamp: str, text: str) -> str:
    """The id of a note before any collision suffix."""
    digits = re.sub(r"\D", "", timestamp[:19]).ljust(14, "0")
    digest = hashlib.sha256(f"{timestamp}\n{id_text(text)}".encode("utf-8")).hexdigest()[:6]
    return f"{digits[:8]}-{digits[8:14]}-{digest}"


@dataclass(frozen=True)
class Atom:
    """One parsed note. ``text`` is the note as written (forged-heading escapes undone)."""

    timestamp: str
    category: str
    text: str
    file: Path
    offset: int = 0  # byte offset where the note's block starts in ``file`` (heading, or archive marker)
    end: int = 0  # byte offset just past the block
    ident: str = ""  # the id with its collision suffix, set by the parser
    style: str = "iso"  # "iso" | "v018"
    line: int = 0  # 1-based line of the heading (0 when unknown)

    @property
    def id(self) -> str:
        """The note id (see the module docstring)."""
        return self.ident or base_id(self.timestamp, self.text)

    @property
    def ref(self) -> str:
        """The id where a namespace is needed: ``note:<id>`` (RAG chunks, graph nodes)."""
        return f"note:{self.id}"

    @property
    def archived(self) -> bool:
        return self.file.parent.name == "archive"

    @property
    def location(self) -> str:
        """Where the note lives, relative to the instance: ``memory/...``."""
        return f"memory/archive/{self.file.name}" if self.archived else f"memory/{self.file.name}"


def validate_category(category: str | None) -> str:
    category = (category or DEFAULT_CATEGORY).strip() or DEFAULT_CATEGORY
    if not CATEGORY_RE.fullmatch(category) or ".." in category.split("/"):
        raise UsageError(
            f"invalid category {category!r}: use letters, digits, '_', '-', '.', '/' (at most 80)"
        )
    return category


def _heading_like(line: str) -> bool:
    """A heading, or a line :func:`stray_headings` would report as a heading typo."""
    return heading(line) is not None or NEAR_HEADING_RE.match(line) is not None


def escape_line(line: str) -> str:
    """One more leading backslash when the line, without its backslashes, reads as a heading (or
    looks like one: a line Mnemara wrote is never reported as a hand edit's heading typo)."""
    return "\\" + line if _heading_like(line.lstrip("\\")) else line


def unescape_line(line: str) -> str:
    """Undo :func:`escape_line` (the line may end with its newline)."""
    return line[1:] if line.startswith("\\") and _heading_like(line.lstrip("\\").rstrip("\n")) else line


def escape_body(text: str) -> str:
    return "\n".join(escape_line(line) for line in text.split("\n"))


def format_note(text: str, category: str, when: datetime) -> str:
    body = escape_body(text.strip("\r\n"))
    return f"## {when.replace(microsecond=0).isoformat()} {category}\n{body}\n\n"


def append_note(
    memory_dir: Path, text: str, category: str | None = None, when: datetime | None = None
) -> tuple[Path, str]:
    """Append one note to today's file; returns (file, timestamp). Refuses empty text."""
    atom = write_note(memory_dir, text, category, when)
    return atom.file, atom.timestamp


def write_note(memory_dir: Path, text: str, category: str | None = None, when: datetime | None = None) -> Atom:
    """Append one note to today's file and return it as parsed back (with its id)."""
    if not text or not text.strip():
        raise UsageError("refusing to write an empty note")
    category = validate_category(category)
    when = when or datetime.now(timezone.utc)
    path = Path(memory_dir) / f"{when.date().isoformat()}.md"
    note = format_note(text, category, when)
    start = locked_append(path, note)
    stamp = when.replace(microsecond=0).isoformat()
    try:
        data = path.read_bytes()
        found = _appended_atom(data, path, start, note.encode("utf-8"), stamp)
        if found is None:
            found = next((atom for atom in parse_bytes(data, path)[1] if atom.offset == start), None)
        if found is not None:
            return found
    except (OSError, UnicodeDecodeError):
        pass
    return Atom(stamp, category, text.strip("\r\n"), path, start)  # the file changed under us; still our note


def _appended_atom(data: bytes, path: Path, start: int, block: bytes, stamp: str) -> Atom | None:
    """The note just appended at ``start``, as :func:`parse_bytes` of the whole file would give it,
    without parsing the notes of earlier seconds; None when the block is not found as written.

    An id hashes the heading timestamp, so only notes whose heading holds the same second
    (``YYYY-MM-DDTHH:MM:SS``) can share its id and give it a ``-N`` suffix: parsing starts at the
    line where those digits first appear (all of the file's headings after it are the same lines).
    """
    end = start + len(block)
    if data[start:end] != block or (start and data[start - 1:start] != b"\n"):
        return None
    first = data.find(stamp[:19].encode("ascii"), 0, start)
    begin = start if first < 0 else data.rfind(b"\n", 0, first) + 1
    _, atoms = parse_bytes(data[begin:], path)
    mine = next((atom for atom in atoms if atom.offset == start - begin), None)
    if mine is None:
        return None
    return replace(mine, offset=start, end=mine.end + begin, line=mine.line + data.count(b"\n", 0, begin))


def _lines(data: bytes) -> list[bytes]:
    """Lines split at ``\\n`` only (so no other character can start a note), ends kept."""
    parts = data.split(b"\n")
    out = [p + b"\n" for p in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


BOM = b"\xef\xbb\xbf"


def parse_bytes(data: bytes, file: Path) -> tuple[bytes, list[Atom]]:
    """``(preamble, notes)`` of day-file bytes; ``preamble`` is whatever precedes the first heading.

    A UTF-8 byte-order mark (some editors save one) is part of the preamble, never of the
    first heading: a file that starts with one still starts with its first note.

    Raises :class:`UnicodeDecodeError` for bytes that are not UTF-8.
    """
    data.decode("utf-8")
    file = Path(file)
    heads: list[tuple[int, int, tuple[str, str, str]]] = []  # (offset, line number, heading)
    offset = 0
    for number, raw in enumerate(_lines(data), start=1):
        skip = len(BOM) if offset == 0 and raw.startswith(BOM) else 0  # an editor's byte-order mark
        if raw.startswith(b"##", skip):
            found = heading(raw[skip:].rstrip(b"\n").decode("utf-8"))
            if found:
                heads.append((offset + skip, number, found))
        offset += len(raw)
    atoms: list[Atom] = []
    seen: dict[str, int] = {}
    for i, (start, number, (stamp, category, style)) in enumerate(heads):
        end = heads[i + 1][0] if i + 1 < len(heads) else len(data)
        text = block_text(data[start:end])
        base = base_id(stamp, text)
        seen[base] = seen.get(base, 0) + 1
        ident = base if seen[base] == 1 else f"{base}-{seen[base]}"
        atoms.append(Atom(stamp, category, text, file, start, end, ident, style, number))
    preamble = data[: heads[0][0]] if heads else data
    return preamble, atoms


def stray_headings(data: bytes) -> list[tuple[int, str]]:
    """``(line number, line)`` of each line that looks meant as a note heading but is not read as
    one (a hand edit: ``##2026-...``, ``## 2026-05-01 10:07 ...``, ``# [2026-...]``). Such a line and
    the text under it are read as part of the note above it (or, before the first heading, as no
    note at all), so whoever reads the file should be told."""
    out: list[tuple[int, str]] = []
    for number, raw in enumerate(_lines(data), start=1):
        line = raw[len(BOM):] if number == 1 and raw.startswith(BOM) else raw
        if not line.lstrip(b" ").startswith(b"#"):
            continue
        text = line.decode("utf-8", "replace").rstrip("\r\n")
        if NEAR_HEADING_RE.match(text) and heading(text) is None:
            out.append((number, text))
    return out


def block_text(raw: bytes) -> str:
    """The text of one raw note block: lines after the heading, escapes undone, outer newlines trimmed."""
    lines = _lines(raw)[1:]
    return "".join(unescape_line(line.decode("utf-8")) for line in lines).strip("\r\n")


def parse_text(text: str, file: Path) -> list[Atom]:
    """The notes of a day file's text. Text before the first heading is ignored."""
    return parse_bytes(text.encode("utf-8"), Path(file))[1]


def parse_file(path: Path) -> list[Atom]:
    """Notes of one day file (or archive file). Raises ``UnicodeDecodeError``/``OSError`` when unreadable."""
    path = Path(path)
    data = path.read_bytes()
    if path.parent.name == "archive":
        return parse_archive(data, path)
    return parse_bytes(data, path)[1]


@dataclass(frozen=True)
class ArchiveEntry:
    """One entry of an archive file: the marker's fields and the note's raw block."""

    source: str
    keeper: str
    when: str
    raw: bytes
    start: int  # offset of the marker line
    end: int  # offset just past the entry


def archive_entries(data: bytes) -> list[ArchiveEntry]:
    """Entries of archive-file bytes, each delimited by its marker's byte count.

    The scan resumes after each entry, so a marker-like line inside an archived
    note is part of that note, never an entry of its own.
    """
    out: list[ArchiveEntry] = []
    position = 0
    while True:
        match = ARCHIVE_MARKER_RE.search(data, position)
        if match is None:
            return out
        size = int(match.group("size"))
        body_end = min(len(data), match.end() + size)
        raw = data[match.end():body_end]
        end = body_end + 1 if data[body_end:body_end + 1] == b"\n" and not raw.endswith(b"\n") else body_end
        out.append(ArchiveEntry(match.group("source").decode("utf-8", "replace"),
                                match.group("keeper").decode("utf-8", "replace"),
                                match.group("when").decode("utf-8", "replace"), raw, match.start(), end))
        position = max(end, match.end())


def parse_archive(data: bytes, file: Path) -> list[Atom]:
    """Notes of an archive file, one per entry (a file with no entries is read as a day file)."""
    entries = archive_entries(data)
    if not entries:
        return parse_bytes(data, file)[1]
    atoms: list[Atom] = []
    seen: dict[str, int] = {}
    for entry in entries:
        try:
            _, inner = parse_bytes(entry.raw, file)
        except UnicodeDecodeError:
            continue
        if len(inner) != 1:
            continue
        note = inner[0]
        seen[note.ident] = seen.get(note.ident, 0) + 1
        ident = note.ident if seen[note.ident] == 1 else f"{note.ident}-{seen[note.ident]}"
        atoms.append(replace(note, offset=entry.start, end=entry.end, ident=ident, line=0))
    return atoms


def day_files(memory_dir: Path) -> list[Path]:
    """The day files of ``memory_dir`` (``YYYY-MM-DD.md``), oldest first; the archive is excluded."""
    # all in one folder: the name orders them as the whole path would, and is cheaper to compare (read with scandir:
    # the index asks on every query, and a year of day files through glob cost a few milliseconds each time)
    try:
        with os.scandir(memory_dir) as entries:
            names = sorted(entry.name for entry in entries if DAY_FILE_RE.fullmatch(entry.name))
    except (FileNotFoundError, NotADirectoryError):
        return []
    base = Path(memory_dir)
    return [base / name for name in names]


DAY_FILE_RE = re.compile(r"\d{4}-\d{2}-\d{2}\.md")


def archive_files(memory_dir: Path) -> list[Path]:
    return sorted(p for p in (Path(memory_dir) / "archive").glob("*.md") if p.is_file())


def all_notes(memory_dir: Path, *, archive: bool = False) -> list[Atom]:
    """Every note of every day file (and archive file when asked); unreadable files are skipped."""
    out: list[Atom] = []
    for path in day_files(memory_dir) + (archive_files(memory_dir) if archive else []):
        try:
            out.extend(parse_file(path))
        except (OSError, UnicodeDecodeError):
            continue
    return out


def is_note_ref(ref: str) -> bool:
    """True for a note id (``note:`` optional) or an old byte-offset id."""
    ref = (ref or "").strip()
    return bool(NOTE_ID_RE.match(ref) or LEGACY_ATOM_ID_RE.match(ref) or LEGACY_CHUNK_ID_RE.match(ref))


REF_HELP = "a note id like 20260427-183201-3fa9c1 (see `mnemara memory list`)"


def find_notes(memory_dir: Path, ref: str, *, archive: bool = False) -> list[Atom]:
    """The notes ``ref`` names (usually one), or :class:`UsageError` saying why none.

    ``ref`` is a note id (``note:<id>`` too) or an id of before note ids: ``<day>@<ts>#<offset>``
    or ``memory:<day>.md#<offset>``. An old id resolves to the note at that byte offset of that
    day file (with that timestamp when the id names one); when the file changed since, to the one
    note of that file with that timestamp.
    """
    memory_dir = Path(memory_dir)
    ref = (ref or "").strip()
    match = NOTE_ID_RE.match(ref)
    if match:
        return _by_id(memory_dir, match.group(1), archive)
    legacy = LEGACY_ATOM_ID_RE.match(ref)
    chunk = LEGACY_CHUNK_ID_RE.match(ref)
    if not (legacy or chunk):
        raise UsageError(f"not a note id: {ref!r} (use {REF_HELP})")
    day, stamp, offset = (legacy.group(1), legacy.group(2), int(legacy.group(3))) if legacy else \
        (chunk.group(1), None, int(chunk.group(2)))  # type: ignore[union-attr]  # chunk matched when legacy did not
    path = memory_dir / f"{day}.md"
    if not path.is_file():
        raise UsageError(f"no note {ref!r}: memory/{day}.md does not exist")
    try:
        atoms = parse_file(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read memory/{day}.md: {exc}") from None
    exact = [a for a in atoms if a.offset == offset and (stamp is None or a.timestamp == stamp)]
    if exact:
        return exact
    same_time = [a for a in atoms if stamp is not None and a.timestamp == stamp]
    if len(same_time) == 1:
        return same_time
    raise UsageError(f"no note {ref!r} in memory/{day}.md: an old byte-offset id, and the file changed "
                     f"since; find the note's id with `mnemara memory list`")


def find_note(memory_dir: Path, ref: str, *, archive: bool = False) -> Atom:
    """The one note ``ref`` names (the first when a copy of it sits in another file)."""
    return find_notes(memory_dir, ref, archive=archive)[0]


def _by_id(memory_dir: Path, ident: str, archive: bool) -> list[Atom]:
    day = f"{ident[0:4]}-{ident[4:6]}-{ident[6:8]}.md"
    first = memory_dir / day
    files = ([first] if first.is_file() else []) + [p for p in day_files(memory_dir) if p != first]
    if archive:
        files += archive_files(memory_dir)
    found: list[Atom] = []
    for path in files:
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if not _may_hold(data, ident):
            continue
        try:
            atoms = parse_archive(data, path) if path.parent.name == "archive" else parse_bytes(data, path)[1]
        except UnicodeDecodeError:
            continue
        found.extend(a for a in atoms if a.id == ident)
        if found and path == first:
            break
    if not found:
        if not archive and _by_id_quiet(memory_dir, ident):
            raise UsageError(f"note {ident} is in memory/archive/ (moved there by replay), not in memory/")
        where = "memory/ and memory/archive/" if archive else "memory/"
        raise UsageError(f"no note {ident} in {where} (was it edited or forgotten? see `mnemara memory list`)")
    return found


def _by_id_quiet(memory_dir: Path, ident: str) -> bool:
    """True when an archive file holds note ``ident``."""
    for path in archive_files(memory_dir):
        try:
            if _may_hold(path.read_bytes(), ident) and any(a.id == ident for a in parse_file(path)):
                return True
        except (OSError, UnicodeDecodeError):
            continue
    return False


def _may_hold(data: bytes, ident: str) -> bool:
    """Cheap pre-check: the file has a heading with the id's date and time."""
    date, time = ident[:8], ident[9:15]
    needle = f"{date[:4]}-{date[4:6]}-{date[6:8]}T{time[:2]}:{time[2:4]}:{time[4:6]}".encode()
    return needle in data
