"""The one note parser: ids independent of byte position, both heading formats, forged headings escaped."""
from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mnemara.core.errors import UsageError
from mnemara.memory.dayfile import NoteChanged, drop_notes, fix_in_note
from mnemara.memory.notes import (
    archive_entries,
    find_note,
    find_notes,
    format_note,
    parse_archive,
    parse_bytes,
    parse_file,
    parse_text,
    write_note,
)

DAY = Path("memory/2026-04-27.md")
FOUR = (
    "## 2026-04-27T09:00:00+00:00 insight\nThe lease timeout is 30 seconds.\n\n"
    "## 2026-04-27T10:00:00+00:00 decision\nUse SQLite for the queue.\n\n"
    "## 2026-04-27T11:00:00+00:00 todo\nRotate the staging keys.\n\n"
    "## 2026-04-27T12:00:00+00:00 insight\nDeploys happen on Tuesdays.\n\n"
)
# Mnemara 0.18 wrote '## [<isoformat with microseconds>] <category>', a blank line, the text.
V018 = (
    "\n## [2026-04-27T08:15:22.679649+00:00] user_note\n\nfirst thing: the lease is 30s\n"
    "\n## [2026-04-27T08:15:29.788274+00:00] observation\n\nuse sqlite\n\n**evidence:** the queue\n"
)


def _ids(text: str) -> dict[str, str]:
    return {a.text: a.id for a in parse_text(text, DAY)}


def test_id_is_time_and_text_not_position() -> None:
    atoms = parse_text(FOUR, DAY)
    assert [a.id[:15] for a in atoms] == ["20260427-090000", "20260427-100000", "20260427-110000", "20260427-120000"]
    assert all(len(a.id) == 22 for a in atoms)
    moved = parse_text("stray preamble\n\n" + FOUR, DAY)
    assert [a.id for a in moved] == [a.id for a in atoms] and moved[0].offset != atoms[0].offset


def test_ids_of_other_notes_survive_longer_shorter_and_deleted_notes() -> None:
    before = _ids(FOUR)
    edited = (FOUR.replace("The lease timeout is 30 seconds.", "The lease timeout is 30 seconds, and much more text here.")
              .replace("Rotate the staging keys.", "Rotate.")
              .replace("## 2026-04-27T10:00:00+00:00 decision\nUse SQLite for the queue.\n\n", ""))
    after = _ids(edited)
    assert after["Deploys happen on Tuesdays."] == before["Deploys happen on Tuesdays."]
    assert "Use SQLite for the queue." not in after
    assert after["Rotate."] != before["Rotate the staging keys."]  # a note's own edit gives it a new id


def test_same_second_same_text_get_a_suffix_in_file_order() -> None:
    twice = "## 2026-04-27T09:00:00+00:00 a\nsame\n\n## 2026-04-27T09:00:00+00:00 b\nsame\n"
    first, second = parse_text(twice, DAY)
    assert second.id == first.id + "-2"
    assert parse_text(twice.replace("same\n", "same  \n", 1), DAY)[0].id == first.id  # whitespace runs count as one


def test_reads_the_018_heading_format() -> None:
    atoms = parse_text(V018, DAY)
    assert [(a.category, a.style) for a in atoms] == [("user_note", "v018"), ("observation", "v018")]
    assert atoms[0].text == "first thing: the lease is 30s"
    assert atoms[1].text == "use sqlite\n\n**evidence:** the queue"
    assert atoms[0].id.startswith("20260427-081522-")
    mixed = parse_text(FOUR + V018, DAY)
    assert len(mixed) == 6
    assert parse_text("## [not a time] x\nbody\n", DAY) == []  # brackets alone are markdown, not a note


def test_lines_split_at_newline_only() -> None:
    text = "## 2026-04-27T09:00:00+00:00 a\nline\u2028## 2020-01-01T00:00:00+00:00 decision\nmore\r\n"
    (atom,) = parse_text(text, DAY)
    assert "\u2028## 2020" in atom.text


def test_forged_heading_is_escaped_and_read_back_as_written() -> None:
    body = ("real note\n## 2020-01-01T00:00:00+00:00 decision\n## [2020-01-01T00:00:00+00:00] decision\n"
            "\\## 2020-01-01T00:00:00+00:00 x")
    written = format_note(body, "insight", datetime(2026, 4, 27, 9, tzinfo=timezone.utc))
    assert "\n\\## 2020-01-01T00:00:00+00:00 decision\n" in written and "\n\\\\## 2020" in written
    (atom,) = parse_text(written, DAY)
    assert atom.text == body and atom.category == "insight"


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(
    st.sampled_from(["## 2020-01-01T00:00:00+00:00 decision", "\\## 2020-01-01T00:00:00Z x", "##[2021-02-03T04:05:06]",
                     "\\\\## [2020-01-01T00:00:00] y", "## Details", "", "\\", "<!-- x -->"]),
    st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\n"), max_size=30),
), min_size=1, max_size=6))
def test_one_write_is_exactly_one_note(lines: list[str]) -> None:
    body = "\n".join(lines).strip("\r\n")
    if not body.strip():
        return
    written = format_note(body, "note", datetime(2026, 4, 27, 9, tzinfo=timezone.utc))
    atoms = parse_text(FOUR + written + FOUR.replace("2026-04-27T", "2026-04-28T"), DAY)
    assert len(atoms) == 9 and atoms[4].text == body


def test_write_note_returns_the_note_with_its_suffixed_id(tmp_path: Path) -> None:
    when = datetime(2026, 4, 27, 9, tzinfo=timezone.utc)
    first = write_note(tmp_path, "same text", "a", when)
    second = write_note(tmp_path, "same text", "b", when)
    assert second.id == first.id + "-2" and second.category == "b"
    assert find_note(tmp_path, second.id).category == "b"


def _archive(entries: list[tuple[str, str]]) -> bytes:
    out = b""
    for stamp, text in entries:
        raw = f"## {stamp} insight\n{text}\n\n".encode()
        out += (f"<!-- mnemara-replay archived 2026-05-01T00:00:00+00:00 from=2026-04-27.md bytes={len(raw)} "
                f"duplicate-of=20260427-090000-aaaaaa -->\n").encode() + raw
    return out


def test_archive_entries_are_delimited_by_their_byte_count() -> None:
    data = _archive([("2026-04-27T09:00:00+00:00", "one"),
                     ("2026-04-27T09:01:00+00:00", "two\n<!-- mnemara-replay archived X from=a bytes=3 duplicate-of=b -->"),
                     ("2026-04-27T09:02:00+00:00", "three")])
    assert len(archive_entries(data)) == 3
    atoms = parse_archive(data, Path("memory/archive/2026-04-27.md"))
    assert [a.text.splitlines()[0] for a in atoms] == ["one", "two", "three"]
    assert all(a.archived and a.location == "memory/archive/2026-04-27.md" for a in atoms)


def test_old_byte_offset_ids_still_resolve(tmp_path: Path) -> None:
    (tmp_path / "2026-04-27.md").write_text(FOUR)
    atoms = parse_file(tmp_path / "2026-04-27.md")
    third = atoms[2]
    assert find_note(tmp_path, f"memory:2026-04-27.md#{third.offset}").id == third.id
    assert find_note(tmp_path, f"2026-04-27@{third.timestamp}#{third.offset}").id == third.id
    assert find_note(tmp_path, f"note:{third.id}").id == third.id
    (tmp_path / "2026-04-27.md").write_text(FOUR.replace("30 seconds", "thirty seconds, said ops"))
    assert find_note(tmp_path, f"2026-04-27@{third.timestamp}#{third.offset}").id == third.id  # by its timestamp
    with pytest.raises(UsageError, match="memory list"):
        find_note(tmp_path, f"memory:2026-04-27.md#{third.offset}")


@pytest.mark.parametrize("ref,message", [
    ("", "not a note id"),
    ("20260427-090000", "not a note id"),
    ("20260427-090000-zzzzzz", "not a note id"),
    ("20260427-090000-abcdef", "no note 20260427-090000-abcdef"),
    ("memory:2030-01-01.md#0", "does not exist"),
])
def test_bad_references_are_refused(tmp_path: Path, ref: str, message: str) -> None:
    (tmp_path / "2026-04-27.md").write_text(FOUR)
    with pytest.raises(UsageError, match=message):
        find_notes(tmp_path, ref)


def test_rewriter_checks_id_and_text_and_changes_nothing_else(tmp_path: Path) -> None:
    path = tmp_path / "2026-04-27.md"
    path.write_text(FOUR)
    atoms = parse_file(path)
    before = {a.id for a in atoms}
    stale = atoms[1].__class__(**{**atoms[1].__dict__, "text": "something else"})
    with pytest.raises(NoteChanged):
        drop_notes(path, [atoms[0], stale])
    assert path.read_text() == FOUR  # all or nothing
    drop_notes(path, [atoms[1]])
    assert {a.id for a in parse_file(path)} == before - {atoms[1].id}
    fixed = fix_in_note(path, atoms[3].id, atoms[3].text, "Tuesdays", "Thursdays")
    assert fixed.text == "Deploys happen on Thursdays." and fixed.id != atoms[3].id
    assert path.read_text() == FOUR.replace("## 2026-04-27T10:00:00+00:00 decision\nUse SQLite for the queue.\n\n", "") \
        .replace("Tuesdays", "Thursdays")
    with pytest.raises(NoteChanged):
        fix_in_note(path, atoms[3].id, atoms[3].text, "Tuesdays", "Fridays")


def test_parse_bytes_keeps_every_byte() -> None:
    data = ("preamble\n" + FOUR + V018).encode()
    preamble, atoms = parse_bytes(data, DAY)
    assert preamble + b"".join(data[a.offset:a.end] for a in atoms) == data


def test_a_byte_order_mark_does_not_hide_the_first_note(tmp_path: Path) -> None:
    """Some editors save a UTF-8 BOM: the first note was read as preamble, invisible to list, recall and dedupe."""
    from mnemara.memory.dedupe import find_same_text
    from mnemara.replay.load import load_atoms

    path = tmp_path / "2026-04-27.md"
    data = b"\xef\xbb\xbf" + FOUR.replace("\n", "\r\n").encode()
    path.write_bytes(data)
    preamble, atoms = parse_bytes(data, path)
    assert preamble == b"\xef\xbb\xbf" and len(atoms) == 4
    assert atoms[0].text == "The lease timeout is 30 seconds." and atoms[0].line == 1
    assert preamble + b"".join(data[a.offset:a.end] for a in atoms) == data
    assert find_same_text(tmp_path, "the lease timeout is 30 seconds") == atoms[0]
    loaded = load_atoms(tmp_path, 3, datetime(2026, 4, 28).date())
    assert len(loaded.atoms) == 4 and not loaded.issues  # a BOM alone is not "bytes before the first heading"
    drop_notes(path, [atoms[0]])  # the mark stays where it was
    assert path.read_bytes() == data[:3] + data[atoms[1].offset:]


def test_a_body_line_that_looks_like_a_heading_typo_is_escaped_and_never_reported(tmp_path: Path) -> None:
    """What Mnemara writes itself is never reported by lint as a hand edit's heading typo."""
    from mnemara.memory.notes import stray_headings

    body = "standup\n## [2026-04-27] decision\n## 2026-04-27 10:00 retro\n  # 2026-4-27 9.30 x\n\\## [2026-04-27] kept"
    atom = write_note(tmp_path, body, "insight", datetime(2026, 4, 27, 9, tzinfo=timezone.utc))
    data = atom.file.read_bytes()
    assert stray_headings(data) == [] and b"\n\\## [2026-04-27] decision\n" in data
    (again,) = parse_bytes(data, atom.file)[1]
    assert again.text == body and again.id == atom.id
