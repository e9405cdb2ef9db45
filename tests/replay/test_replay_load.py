"""Phase 1 on hand-edited day files: odd files are reported and skipped, never crash replay."""
from __future__ import annotations

from datetime import date

from mnemara.replay import run_replay
from mnemara.replay.load import MAX_LINE_BYTES, files_in_window, load_atoms, split_blocks

from replay_helpers import LEASE, NOW, add, make_instance, tree_hash, where_is_every_atom

DAY = NOW.date().isoformat()


def _write(inst, name, data: bytes):
    (inst.memory_dir / name).write_bytes(data)


def test_window_counts_days_back_from_today(tmp_path):
    for name in ("2026-05-01.md", "2026-05-04.md", "2026-05-10.md", "2026-05-11.md", "notes.md", "2026-13-01.md"):
        (tmp_path / name).write_text("x")
    names = [p.name for p in files_in_window(tmp_path, 7, date(2026, 5, 10))]
    assert names == ["2026-05-04.md", "2026-05-10.md"]


def test_split_blocks_round_trips_bytes_and_agrees_with_parse_text():
    data = "preface line\n## 2026-05-10T10:00:00+00:00 insight\nbody one\n\n## 2026-05-10T11:00:00Z\nbody two".encode()
    preamble, blocks = split_blocks(data)
    assert preamble + b"".join(raw for _, raw, _, _ in blocks) == data
    assert [(ts, cat) for _, _, ts, cat in blocks] == [("2026-05-10T10:00:00+00:00", "insight"), ("2026-05-10T11:00:00Z", "note")]


def test_odd_files_are_reported_and_skipped_not_crashed_on():
    inst = make_instance()
    for i, text in enumerate(LEASE):
        add(inst, text, hours_ago=3 - i)
    add(inst, LEASE[0], hours_ago=0.5)
    _write(inst, "2026-05-09.md", b"just some text\nwith no headings at all\n")
    _write(inst, "2026-05-08.md", b"## 2026-05-08T10:00:00+00:00 insight\nbad \xff\xfe bytes\n")
    _write(inst, "2026-05-07.md", b"## 2026-05-07T10:00:00+00:00 insight\n" + b"x" * (MAX_LINE_BYTES + 1) + b"\n")
    (inst.memory_dir / "2026-05-06.md").mkdir()
    _write(inst, "2026-05-05.md", b"")
    before = {p.name: p.read_bytes() for p in inst.memory_dir.glob("2026-05-0*.md") if p.is_file()}

    plan = run_replay(inst, now=NOW, apply=True)

    reasons = {i.file: i.reason for i in plan.issues}
    assert reasons["2026-05-09.md"].startswith("no note headings")
    assert reasons["2026-05-08.md"] == "not valid UTF-8 (byte 41)"
    assert reasons["2026-05-07.md"].startswith(f"line 2 is {MAX_LINE_BYTES + 1} bytes")
    assert reasons["2026-05-06.md"] == "not a regular file"
    assert "2026-05-05.md" not in reasons  # empty is fine
    assert all(i.skipped for i in plan.issues)
    assert plan.counts["patterns"] == 1 and len(plan.result.archived) == 1  # the good file still replayed
    assert {p.name: p.read_bytes() for p in inst.memory_dir.glob("2026-05-0*.md") if p.is_file()} == before
    digest = (inst.root / f"sleep/{DAY}.md").read_text()
    assert "2026-05-08.md: not valid UTF-8 (byte 41) (skipped)" in digest


def test_text_before_the_first_heading_is_kept_through_an_archive():
    inst = make_instance()
    day = inst.memory_dir / f"{DAY}.md"
    day.write_text("My own preface, not a note.\n\n")
    for i, text in enumerate(LEASE):
        add(inst, text, hours_ago=3 - i)
    add(inst, LEASE[0], hours_ago=0.5)
    plan = run_replay(inst, now=NOW, apply=True)
    assert any(not i.skipped and "before the first heading" in i.reason for i in plan.issues)
    assert day.read_text().startswith("My own preface, not a note.\n\n## ")
    assert all(n == 1 for n in where_is_every_atom(inst).values())


def test_load_skips_nothing_in_a_clean_folder():
    inst = make_instance()
    add(inst, "one", hours_ago=1)
    add(inst, "two", hours_ago=0.5)
    result = load_atoms(inst.memory_dir, 7, NOW.date())
    assert [a.atom.text for a in result.atoms] == ["one", "two"] and result.issues == []


def test_dry_run_over_odd_files_writes_nothing():
    inst = make_instance()
    _write(inst, f"{DAY}.md", b"\xff\xff not utf8")
    before = tree_hash(inst.root)
    plan = run_replay(inst, now=NOW)
    assert tree_hash(inst.root) == before and plan.issues[0].reason.startswith("not valid UTF-8")


def test_symlinked_day_file_is_reported_and_left_alone(tmp_path):
    inst = make_instance()
    target = tmp_path / "elsewhere.md"
    target.write_text("".join(f"## 2026-05-10T0{i}:00:00+00:00 insight\n{LEASE[0]}\n\n" for i in range(3)))
    (inst.memory_dir / f"{DAY}.md").symlink_to(target)
    before = target.read_bytes()
    plan = run_replay(inst, now=NOW, apply=True)
    assert plan.issues[0].reason.startswith("a symbolic link") and plan.result.archived == []
    assert target.read_bytes() == before and (inst.memory_dir / f"{DAY}.md").is_symlink()


def test_a_huge_window_does_not_overflow():
    inst = make_instance()
    add(inst, "one", hours_ago=1)
    assert files_in_window(inst.memory_dir, 10**9, NOW.date())
    (inst.wiki_dir / "replay_policy.md").write_text("days: 999999\n")
    assert run_replay(inst, now=NOW).counts["atoms"] == 1


def test_a_heading_typo_is_a_file_issue_and_a_bom_is_not():
    """Trust audit: a hand-edited heading typo silently merged a note into the one above it; a BOM hid the first note."""
    inst = make_instance()
    _write(inst, f"{DAY}.md", (b"\xef\xbb\xbf## " + f"{DAY}T09:00:00+00:00".encode() + b" insight\r\nfirst\r\n\r\n"
                               b"## " + f"{DAY} 09:30:00".encode() + b" insight\nswallowed by the first\n"))
    plan = run_replay(inst, now=NOW)
    assert [(i.reason.split(" (")[0], i.skipped) for i in plan.issues] == \
        [("line 4 looks like a note heading but is not one", False)]
    assert "see `mnemara lint`" in plan.issues[0].reason
    assert plan.counts["atoms"] == 1
