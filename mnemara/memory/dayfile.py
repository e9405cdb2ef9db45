"""The one place that rewrites a day file (or an archive file): drop a note, fix text in a note.

Every change names the note by its id *and* the text the caller saw; the file is
read and parsed again under the lock appenders take, and when that note is no
longer there with that text, :class:`NoteChanged` is raised and nothing in the
file changes. A batch of edits to one file is all or nothing. The new file
replaces the old one atomically (temp file + rename), so an appender waiting
for the lock appends to the new file.

In an archive file a note is a whole entry (the marker line and the block it
counts), so dropping it never touches a neighbouring entry.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Iterator

from mnemara.core.errors import UsageError
from mnemara.core.fsutil import locked_rewrite
from mnemara.memory.notes import Atom, block_text, parse_archive, parse_bytes


class NoteChanged(UsageError):
    """The note to change is not in the file with the text expected; the file was left as it was."""


@dataclass
class DayFileEdit:
    """The parsed bytes of one file, and the changes to write back."""

    path: Path
    data: bytes
    preamble: bytes
    notes: list[Atom]
    _blocks: dict[int, bytes | None] = field(default_factory=dict)  # note index -> new bytes (None: dropped)

    @classmethod
    def parse(cls, path: Path, data: bytes) -> "DayFileEdit":
        try:
            if path.parent.name == "archive":
                notes = parse_archive(data, path)
                preamble = data[: notes[0].offset] if notes else data
            else:
                preamble, notes = parse_bytes(data, path)
        except UnicodeDecodeError as exc:
            raise NoteChanged(f"{_rel(path)} is not valid UTF-8 (byte {exc.start}); left as it is") from None
        return cls(path, data, preamble, notes)

    @property
    def changed(self) -> bool:
        return bool(self._blocks)

    def locate(self, note_id: str, text: str | None = None) -> Atom:
        """The note with this id (and, when given, exactly this text), or :class:`NoteChanged`."""
        for i, note in enumerate(self.notes):
            if note.id == note_id and i not in self._blocks:
                if text is not None and note.text != text:
                    raise NoteChanged(f"note {note_id} in {_rel(self.path)} no longer has the text it had; "
                                      "nothing changed in that file")
                return note
        raise NoteChanged(f"note {note_id} is no longer in {_rel(self.path)}; nothing changed in that file")

    def raw(self, note: Atom) -> bytes:
        """The note's block as it is in the file (in an archive: the note without its marker)."""
        block = self.data[note.offset:note.end]
        if note.archived and block.startswith(b"<!--"):
            block = block[block.index(b"\n") + 1:]
        return block

    def drop(self, note: Atom) -> None:
        self._blocks[self._index(note)] = None

    def replace_text(self, note: Atom, old: str, new: str) -> Atom:
        """Replace the first ``old`` in the note's text (never in its heading); returns the note as changed."""
        if note.archived:
            raise UsageError("archived notes are not edited in place")
        i = self._index(note)
        block = self.data[note.offset:note.end]
        head_end = block.index(b"\n") + 1 if b"\n" in block else len(block)
        body = block[head_end:].decode("utf-8")
        if old not in body:
            raise NoteChanged(f"note {note.id} in {_rel(self.path)} does not contain {old!r}; nothing changed")
        new_block = block[:head_end] + body.replace(old, new, 1).encode("utf-8")
        expected = note.text.replace(old, new, 1)
        if block_text(new_block) != expected:
            raise NoteChanged(f"replacing {old!r} in note {note.id} would change more than that; nothing changed")
        self._blocks[i] = new_block
        _, reparsed = parse_bytes(new_block, self.path)
        return replace(note, text=expected, ident=reparsed[0].id if reparsed else note.ident)

    def render(self) -> bytes:
        out = [self.preamble]
        position = len(self.preamble)
        for i, note in enumerate(self.notes):
            if note.offset > position:  # bytes between archive entries that belong to none
                out.append(self.data[position:note.offset])
            block = self._blocks.get(i, self.data[note.offset:note.end])
            if block is not None:
                out.append(block)
            position = note.end
        out.append(self.data[position:])
        return b"".join(out)

    def _index(self, note: Atom) -> int:
        for i, candidate in enumerate(self.notes):
            if candidate.offset == note.offset and candidate.id == note.id:
                return i
        raise NoteChanged(f"note {note.id} is not part of {_rel(self.path)}")


def _rel(path: Path) -> str:
    return f"memory/archive/{path.name}" if path.parent.name == "archive" else f"memory/{path.name}"


@contextmanager
def editing(path: Path) -> Iterator[DayFileEdit]:
    """Lock ``path``, yield its parsed notes; changes made in the block are written when it ends.

    An exception inside the block leaves the file untouched.
    """
    path = Path(path)
    if path.is_symlink() or not path.is_file():
        raise NoteChanged(f"{_rel(path)} is not a regular file; left as it is")
    with locked_rewrite(path) as (data, swap):
        edit = DayFileEdit.parse(path, data)
        yield edit
        if edit.changed:
            swap(edit.render())


def drop_notes(path: Path, notes: list[Atom]) -> list[Atom]:
    """Remove ``notes`` (as the caller saw them: id and text) from ``path``; all or none."""
    with editing(path) as edit:
        found = [edit.locate(n.id, n.text) for n in notes]
        for note in found:
            edit.drop(note)
    return found


def fix_in_note(path: Path, note_id: str, text: str, old: str, new: str) -> Atom:
    """Replace the first ``old`` in the text of note ``note_id``; returns the changed note (its id may change)."""
    with editing(path) as edit:
        return edit.replace_text(edit.locate(note_id, text), old, new)
