"""Note ids through the commands: hand edits of other notes, memory list, lint --fix, forget, forged headings."""
from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

from mnemara.cli import main
from mnemara.core.config import Config
from mnemara.core.debuglog import read_events
from mnemara.store.instance import Instance
from mnemara.memory.notes import all_notes, parse_file, write_note
from mnemara.memory.status import StatusBook
from tests.conftest import run_cli
from tests.memory_support import call, context, make_instance

FORGED = "Real note first line.\n## 2020-01-01T00:00:00+00:00 decision\nThis line must not become a note."


def cli(*args: str, input: str | None = None):
    return CliRunner().invoke(main, list(args), input=input)


def at(hour: int, minute: int = 0) -> datetime:
    return datetime(2026, 4, 27, hour, minute, tzinfo=timezone.utc)


def listed(name: str, *extra: str) -> list[dict]:
    out = cli("memory", "list", "-i", name, "--json", *extra)
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)


@pytest.fixture
def moved_path(isolated_home: Path) -> tuple[str, str]:
    """``~/proj/lib/old/parser.py`` was moved to ``~/proj/lib/new/parser.py``."""
    (isolated_home / "proj/lib/old").mkdir(parents=True)
    (isolated_home / "proj/lib/new").mkdir(parents=True)
    (isolated_home / "proj/lib/new/parser.py").write_text("x = 1\n")
    return "~/proj/lib/old/parser.py", "~/proj/lib/new/parser.py"


def test_ids_shown_before_still_work_after_hand_edits_of_other_notes(moved_path: tuple[str, str]) -> None:
    old_path, new_path = moved_path
    inst = Instance.create("hand")
    mem = inst.memory_dir
    write_note(mem, "The build takes four minutes.", "fact", at(8))  # N1: will grow
    write_note(mem, "Temporary note about lunch.", "note", at(8, 30))  # N6: will be deleted
    write_note(mem, f"The parser lives in {old_path} for now.", "fact", at(9))  # N2: lint fix, deprecate/restore
    write_note(mem, "A fairly long note about the office plants that will shrink.", "note", at(9, 30))  # N5: shrinks
    write_note(mem, "Staging DB is db-stage-01.", "infra", at(10))  # N3: superseded
    write_note(mem, "Staging DB moved to db-stage-02 (PERIWINKLE cluster).", "infra", at(11))  # N4: rag hit
    day = mem / "2026-04-27.md"
    with day.open("a") as fh:  # N7: a Mnemara 0.18 note in the same file, to be forgotten by id
        fh.write("\n## [2026-04-27T12:00:00.123456+00:00] user_note\n\nThe QUOKKA relay listens on 7411.\n")
    shown = listed("hand")
    assert len(shown) == 7

    def id_of(start: str) -> str:
        (ident,) = [item["id"] for item in shown if item["text"].startswith(start)]
        return ident

    n2, n3, n4, n7 = (id_of(s) for s in ("The parser", "Staging DB is", "Staging DB moved", "The QUOKKA"))
    ctx = context(inst, Config.load(inst.config_path))
    assert call(ctx, "rag_query", question="PERIWINKLE staging", k=3)["hits"][0]["id"] == f"note:{n4}"

    text = day.read_text()
    text = text.replace("takes four minutes.", "takes four minutes, or six when the cache is cold and CI is busy.")
    text = text.replace("A fairly long note about the office plants that will shrink.", "Plants.")
    text = text.replace("## 2026-04-27T08:30:00+00:00 note\nTemporary note about lunch.\n\n", "")
    day.write_text(text)

    assert cli("memory", "supersede", "-i", "hand", n3, f"note:{n4}").exit_code == 0
    assert cli("memory", "deprecate", "-i", "hand", n2, "--reason", "checking").exit_code == 0
    assert cli("memory", "restore", "-i", "hand", n2).exit_code == 0
    book = StatusBook.load(mem)
    assert book.entries[n3]["superseded_by"] == n4 and book.entries[n2]["status"] == "active"
    assert [h["id"] for h in call(ctx, "rag_query", question="PERIWINKLE staging", k=3)["hits"]][0] == f"note:{n4}"
    forgot = cli("forget", "-i", "hand", n7, "--yes")
    assert forgot.exit_code == 0 and "forgot 1 note(s)" in forgot.output, forgot.output
    assert "QUOKKA" not in day.read_text()
    fixed = cli("lint", "-i", "hand", "--fix", "--no-candidates", input="y\n")
    assert "applied 1 fixes" in fixed.output, fixed.output
    assert f"The parser lives in {new_path} for now." in day.read_text()
    by_id = {item["id"]: item for item in listed("hand")}
    assert by_id[n3]["status"] == "superseded" and by_id[n3]["superseded_by"] == n4 and n4 in by_id
    assert n7 not in by_id and len(by_id) == 5


def test_memory_list_json_filters_and_one_line_per_note() -> None:
    inst = Instance.create("ls")
    write_note(inst.memory_dir, "Staging DB is db-stage-01.", "infra", at(9))
    write_note(inst.memory_dir, "Staging DB moved to db-stage-02.\nSecond line.", "infra", at(10))
    write_note(inst.memory_dir, "Deploys on Tuesdays.", "ops/deploy", datetime(2026, 4, 28, 9, tzinfo=timezone.utc))
    items = listed("ls")
    assert [(i["ts"], i["category"], i["status"], i["file"]) for i in items] == [
        ("2026-04-27T09:00:00+00:00", "infra", "active", "memory/2026-04-27.md"),
        ("2026-04-27T10:00:00+00:00", "infra", "active", "memory/2026-04-27.md"),
        ("2026-04-28T09:00:00+00:00", "ops/deploy", "active", "memory/2026-04-28.md"),
    ]
    assert items[1]["text"] == "Staging DB moved to db-stage-02.\nSecond line."
    assert cli("memory", "supersede", "-i", "ls", items[0]["id"], items[1]["id"], "--reason", "moved").exit_code == 0
    assert [i["id"] for i in listed("ls", "--status", "superseded")] == [items[0]["id"]]
    assert listed("ls", "--status", "superseded")[0]["superseded_by"] == items[1]["id"]
    assert [i["id"] for i in listed("ls", "--status", "active")] == [items[1]["id"], items[2]["id"]]
    assert [i["id"] for i in listed("ls", "--day", "2026-04-28")] == [items[2]["id"]]
    assert [i["id"] for i in listed("ls", "--category", "ops/")] == [items[2]["id"]]
    assert [i["id"] for i in listed("ls", "--grep", "STAGE-02")] == [items[1]["id"]]
    assert listed("ls", "--day", "2030-01-01") == []
    plain = cli("memory", "list", "-i", "ls", "--category", "infra")
    lines = plain.stdout.splitlines()
    assert lines == [f"{items[0]['id']}  2026-04-27T09:00:00+00:00  infra  superseded  Staging DB is db-stage-01.  [by unknown]",
                     f"{items[1]['id']}  2026-04-27T10:00:00+00:00  infra  active  Staging DB moved to db-stage-02.  [by unknown]"]


@pytest.mark.parametrize("args,message", [
    (["--day", "2026-13-01"], "invalid day"),
    (["--day", "../etc"], "invalid day"),
    (["--status", "gone"], "Invalid value for '--status'"),
    (["--category", "a b"], "invalid category"),
    (["--grep", "  "], "--grep needs some text"),
])
def test_memory_list_refusals(args: list[str], message: str) -> None:
    Instance.create("bad")
    out = cli("memory", "list", "-i", "bad", *args)
    assert out.exit_code == 2 and message in out.output, out.output


def test_memory_list_refuses_unknown_instance() -> None:
    out = cli("memory", "list", "-i", "nobody")
    assert out.exit_code == 2 and "nobody" in out.output


def test_mnemara_note_forged_heading_stays_one_note() -> None:
    Instance.create("forge")
    out = run_cli("note", "--instance", "forge", "-c", "insight", FORGED)
    assert out.returncode == 0, out.stderr
    (item,) = json.loads(run_cli("memory", "list", "--instance", "forge", "--json").stdout)
    assert item["text"] == FORGED and item["category"] == "insight" and item["ts"] != "2020-01-01T00:00:00+00:00"
    assert f"(id {item['id']})" in out.stdout


def test_write_memory_forged_heading_stays_one_note(mnemara_home: Path) -> None:
    # the tool's own logic, called as the session calls it (tests/e2e/test_memory_e2e.py runs
    # write_memory through the real CLI)
    inst, cfg = make_instance("forgetool")
    answer = call(context(inst, cfg), "write_memory", text=FORGED, category="insight")
    (note,) = all_notes(inst.memory_dir)
    assert answer["ok"] and answer["id"] == note.id and note.text == FORGED and note.category == "insight"


def test_lint_fix_offers_every_fix_in_one_run_and_keeps_the_tilde(moved_path: tuple[str, str],
                                                                   isolated_home: Path) -> None:
    old_path, new_path = moved_path
    (isolated_home / "proj/conf/old").mkdir(parents=True)
    (isolated_home / "proj/conf/new").mkdir(parents=True)
    (isolated_home / "proj/conf/new/settings.toml").write_text("")
    inst = Instance.create("lf")
    mem = inst.memory_dir
    write_note(mem, f"The parser is {old_path}.", "fact", at(9))
    write_note(mem, "The staging database host for payments is db-stage-01.", "infra", at(10))
    write_note(mem, f"The staging database host for payments moved to db-stage-02; see {old_path}.", "infra", at(11))
    write_note(mem, f"Settings live in {isolated_home}/proj/conf/old/settings.toml.", "fact", at(12))
    out = cli("lint", "-i", "lf", "--fix", input="y\ny\ny\ns\nk\n")
    assert "applied 4 fixes" in out.output, out.output
    text = (mem / "2026-04-27.md").read_text()
    assert text.count(new_path) == 2 and old_path not in text  # written back as ~/..., not absolute
    assert f"{isolated_home}/proj/conf/new/settings.toml" in text
    older, newer = (a for a in all_notes(mem) if "staging database" in a.text)
    assert StatusBook.load(mem).entries[older.id]["superseded_by"] == newer.id  # the newer note's id after its fix


def test_lint_fix_reports_a_note_edited_meanwhile_and_goes_on(moved_path: tuple[str, str]) -> None:
    from mnemara.memory.lint import fix_path, run_lint

    old_path, new_path = moved_path
    inst = Instance.create("lm")
    write_note(inst.memory_dir, f"First cites {old_path}.", "fact", at(9))
    write_note(inst.memory_dir, f"Second cites {old_path}.", "fact", at(10))
    report = run_lint(inst.root, candidates=False)
    first, second = report.path_problems
    day = inst.memory_dir / "2026-04-27.md"
    day.write_text(day.read_text().replace("First cites", "First (edited) cites"))
    with pytest.raises(Exception, match="no longer"):
        fix_path(inst.root, report, first.file, first.note, first.cited, new_path)
    assert fix_path(inst.root, report, second.file, second.note, second.cited, new_path)
    assert f"Second cites {new_path}." in day.read_text() and f"First (edited) cites {old_path}." in day.read_text()


def _archive_three(inst: Instance) -> list:
    from mnemara.replay.archive import ArchiveMove, format_entry

    texts = ["ARCHIVED-ONE: the lease is 30 s.", "ARCHIVED-TWO: the lease is 30 s!", "ARCHIVED-THREE: lease 30 s."]
    data = b""
    for n, text in enumerate(texts):
        raw = f"## 2026-04-27T0{n + 1}:00:00+00:00 insight\n{text}\n\n".encode()
        move = ArchiveMove(inst.memory_dir / "2026-04-27.md", raw, "20260426-100000-abcdef", "x", text)
        data += format_entry(move, f"2026-04-28T0{n}:00:00+00:00")
    (inst.archive_dir / "2026-04-27.md").write_bytes(data)
    return parse_file(inst.archive_dir / "2026-04-27.md")


@pytest.mark.parametrize("which", [0, 1, 2])
def test_forget_include_archive_removes_exactly_one_entry(which: int) -> None:
    from mnemara.replay.archive import read_entries

    inst = Instance.create("arch")
    write_note(inst.memory_dir, "A live note that stays.", "fact", at(9))
    notes = _archive_three(inst)
    entries = read_entries(inst.archive_dir / "2026-04-27.md")
    assert [a.text for a in notes] == [e.raw.decode().splitlines()[1] for e in entries]
    refused = cli("forget", "-i", "arch", notes[which].id, "--yes")
    assert refused.exit_code == 2 and "add --include-archive" in refused.output, refused.output
    dry = cli("forget", "-i", "arch", notes[which].id, "--include-archive", "--dry-run")
    assert dry.exit_code == 0 and dry.output.count("memory/archive/2026-04-27.md") == 1, dry.output
    out = cli("forget", "-i", "arch", notes[which].id, "--include-archive", "--yes")
    assert out.exit_code == 0, out.output
    left = read_entries(inst.archive_dir / "2026-04-27.md")
    kept = [e for i, e in enumerate(entries) if i != which]
    assert [(e.raw, e.when, e.keeper) for e in left] == [(e.raw, e.when, e.keeper) for e in kept]
    assert (inst.archive_dir / "2026-04-27.md").read_bytes() == b"".join(
        (inst.archive_dir / "2026-04-27.md").read_bytes()[e.start:e.end] for e in left)
    remaining = [a.id for i, a in enumerate(notes) if i != which]
    assert [a.id for a in parse_file(inst.archive_dir / "2026-04-27.md")] == remaining
    assert [a.text for a in all_notes(inst.memory_dir)] == ["A live note that stays."]


def test_forget_receipt_agrees_with_its_plan() -> None:
    from mnemara.memory.surfaces import write_memory

    inst = Instance.create("rc")
    cfg = Config.load(inst.config_path)
    result = write_memory(inst, cfg, "The MARMOSET gateway timeout is 12 s.", "insight", applies_to=["gateway"])
    write_memory(inst, cfg, "The gateway has three replicas.", "fact")
    assert result["rag"]["ok"] and result["graph"]["ok"], result
    dry = cli("forget", "-i", "rc", result["id"], "--dry-run")
    assert f"RAG index chunks: note:{result['id']}" in dry.output and f"graph nodes: note:{result['id']}" in dry.output
    out = cli("forget", "-i", "rc", result["id"], "--yes")
    assert "RAG: 1 chunks removed; graph: 2 nodes removed" in out.output, out.output  # the note + its orphan entity
    receipt = [e for e in read_events(inst.debug_log_path) if e["event"] == "forget_receipt"][-1]
    assert receipt["rag"]["chunks"] == [f"note:{result['id']}"] and receipt["rag"]["chunks_deleted"] == 1
    assert receipt["graph"]["nodes"] == [f"note:{result['id']}"] and receipt["graph"]["nodes_deleted"] == 2
    other = [a for a in all_notes(inst.memory_dir)]
    plain = cli("forget", "-i", "rc", other[0].id, "--dry-run")
    assert "graph nodes: none" in plain.output  # written without entities: no node, none promised
    out = cli("forget", "-i", "rc", other[0].id, "--yes")
    assert "graph: nothing to do" in out.output and "RAG: 1 chunks removed" in out.output, out.output


def test_note_with_a_wiki_category_mirrors_into_the_page() -> None:
    inst = Instance.create("wk")
    out = cli("note", "-i", "wk", "-c", "wiki/ops", "Restart the relay with care.")
    assert out.exit_code == 0 and "also appended to wiki/ops.md" in out.output, out.output
    assert "Restart the relay with care." in (inst.wiki_dir / "ops.md").read_text()
    bad = cli("note", "-i", "wk", "-c", "wiki/../x", "nope")
    assert bad.exit_code == 2 and not list(inst.memory_dir.glob("*.md"))[0].read_text().count("nope")


def test_restore_of_an_active_note_says_so_and_records_nothing() -> None:
    inst = Instance.create("rs")
    note = write_note(inst.memory_dir, "Always active.", "fact", at(9))
    out = cli("memory", "restore", "-i", "rs", note.id)
    assert out.exit_code == 0 and "already active" in out.output and "nothing changed" in out.output
    assert not (inst.memory_dir / "status.json").exists()
    cli("memory", "deprecate", "-i", "rs", note.id, "--reason", "x")
    cli("memory", "restore", "-i", "rs", note.id)
    before = (inst.memory_dir / "status.json").read_bytes()
    assert "already active" in cli("memory", "restore", "-i", "rs", note.id).output
    assert (inst.memory_dir / "status.json").read_bytes() == before  # no second history entry


def test_deprecate_again_without_reason_keeps_the_reason() -> None:
    inst = Instance.create("dr")
    note = write_note(inst.memory_dir, "The VPN is on port 1194.", "fact", at(9))
    cli("memory", "deprecate", "-i", "dr", note.id, "--reason", "VPN replaced by WireGuard")
    cli("memory", "deprecate", "-i", "dr", note.id)
    entry = StatusBook.load(inst.memory_dir).entries[note.id]
    assert entry["reason"] == "VPN replaced by WireGuard" and len(entry["history"]) == 1
    cli("memory", "deprecate", "-i", "dr", note.id, "--reason", "gone entirely")
    assert StatusBook.load(inst.memory_dir).entries[note.id]["reason"] == "gone entirely"


def test_inactive_notes_do_not_block_writing_the_same_text() -> None:
    inst = Instance.create("dd")
    note = write_note(inst.memory_dir, "The cache is warm at night.", "fact", at(9))
    blocked = cli("note", "-i", "dd", "The cache is warm at night.")
    assert "not appended" in blocked.output and note.id in blocked.output
    cli("memory", "deprecate", "-i", "dd", note.id)
    again = cli("note", "-i", "dd", "The cache is warm at night.")
    assert again.exit_code == 0 and f"deprecated note {note.id}" in again.output and "noted in" in again.output
    ctx = context(inst, Config.load(inst.config_path))
    answer = call(ctx, "write_memory", text="The cache is warm at night!")
    assert answer.get("written") is False  # the new active copy holds it now
    cli("memory", "deprecate", "-i", "dd", answer["existing"]["id"])
    answer = call(ctx, "write_memory", text="the cache is warm at night")
    assert answer["ok"] and "written again" in answer["dedupe"], answer
    assert len(all_notes(inst.memory_dir)) == 3


def test_status_file_of_before_note_ids_is_read_and_upgraded() -> None:
    """A version-1 status.json (keyed by day@ts:hash) keeps working and is rewritten keyed by id."""
    import hashlib

    inst = Instance.create("v1")
    old = write_note(inst.memory_dir, "Staging DB is db-stage-01.", "infra", at(9))
    new = write_note(inst.memory_dir, "Staging DB moved to db-stage-02.", "infra", at(10))

    def v1_key(note) -> str:
        norm = " ".join(note.text.casefold().split()).rstrip(" .!?;:")
        return f"2026-04-27@{note.timestamp}:{hashlib.sha256(norm.encode()).hexdigest()[:16]}"

    legacy = {"version": 1, "atoms": {v1_key(old): {
        "status": "superseded", "atom_id": f"2026-04-27@{old.timestamp}#0", "reason": "moved", "at": "x",
        "history": [], "superseded_by": f"2026-04-27@{new.timestamp}#60", "superseded_by_fp": v1_key(new)}},
        "distinct": []}
    (inst.memory_dir / "status.json").write_text(json.dumps(legacy))
    (item,) = listed("v1", "--status", "superseded")
    assert item["id"] == old.id and item["superseded_by"] == new.id
    cli("memory", "deprecate", "-i", "v1", new.id)
    saved = json.loads((inst.memory_dir / "status.json").read_text())
    assert saved["version"] == 2 and set(saved["atoms"]) == {old.id, new.id}
    assert saved["atoms"][old.id]["superseded_by"] == new.id


def test_graph_nodes_of_before_note_ids_are_forgotten_and_migrated() -> None:
    from mnemara.memory.graph.store import Graph

    inst = Instance.create("lg")
    keep = write_note(inst.memory_dir, "The relay team owns port 7411.", "fact", at(9))
    gone = write_note(inst.memory_dir, "The OCELOT relay is retired.", "fact", at(10))
    graph = Graph(inst.graph_dir)
    for note, offset in ((keep, 0), (gone, 55)):
        node = f"memory:2026-04-27@{note.timestamp}#{offset}"  # how nodes were named before note ids
        graph.ensure_node(node, "memory_atom", {"file": "memory/2026-04-27.md", "timestamp": note.timestamp,
                                                "category": "fact", "text": note.text[:200]})
        graph.set_targets(node, "applies_to", {"entity:relay": ("entity", {"name": "relay"})})
    graph.close()
    dry = cli("forget", "-i", "lg", gone.id, "--dry-run")
    assert f"graph nodes: memory:2026-04-27@{gone.timestamp}#55" in dry.output, dry.output
    assert "graph: 1 nodes removed" in cli("forget", "-i", "lg", gone.id, "--yes").output
    out = cli("migrate", "--instance", "lg")
    assert out.exit_code == 0 and "1 note node(s) renamed note:<id>" in out.output, out.output
    graph = Graph(inst.graph_dir)
    try:
        near = graph.neighbors(keep.ref)
    finally:
        graph.close()
    assert [n["node"]["id"] for n in near["neighbors"]] == ["entity:relay"], near
    assert "renamed" not in cli("migrate", "--instance", "lg").output  # idempotent


def test_a_path_fix_carries_the_note_status_to_its_new_id(moved_path: tuple[str, str]) -> None:
    old_path, new_path = moved_path
    inst = Instance.create("ps")
    note = write_note(inst.memory_dir, f"Old parser notes: {old_path}.", "fact", at(9))
    assert cli("memory", "deprecate", "-i", "ps", note.id, "--reason", "kept for history").exit_code == 0
    assert "applied 1 fixes" in cli("lint", "-i", "ps", "--fix", "--no-candidates", input="y\n").output
    (item,) = listed("ps")
    assert item["id"] != note.id and new_path in item["text"]
    assert item["status"] == "deprecated" and item["reason"] == "kept for history"


def test_forget_changes_nothing_when_a_planned_note_was_edited() -> None:
    from mnemara.memory import forget

    inst = Instance.create("fe")
    write_note(inst.memory_dir, "GIRAFFE note one.", "fact", at(9))
    write_note(inst.memory_dir, "GIRAFFE note two.", "fact", datetime(2026, 4, 28, 9, tzinfo=timezone.utc))
    plan = forget.plan_forget(inst.root, "GIRAFFE")
    second = inst.memory_dir / "2026-04-28.md"
    second.write_text(second.read_text().replace("two", "two, edited"))
    before = {p.name: p.read_bytes() for p in inst.memory_dir.glob("*.md")}
    with pytest.raises(Exception, match="since the plan; nothing forgotten"):
        forget.execute(inst, Config.load(inst.config_path), plan)
    assert {p.name: p.read_bytes() for p in inst.memory_dir.glob("*.md")} == before


def test_write_note_answers_the_note_exactly_as_the_file_reads_back(tmp_path: Path) -> None:
    """write_note reads back only the notes of its own second; its answer must equal the whole-file parse."""
    when = datetime(2026, 4, 27, 9, 0, 0, tzinfo=timezone.utc)
    day = tmp_path / "2026-04-27.md"
    day.write_text("preamble\n## 2026-04-27T08:00:00+00:00 quote\nthe log says 2026-04-27T09:00:00 was odd\n\n"
                   "## 2026-04-27T09:00:00Z other\nsame text\n\n", encoding="utf-8")
    answers = [write_note(tmp_path, "same text", "a", when), write_note(tmp_path, "other text", "b", when),
               write_note(tmp_path, "same  text", "c", when),
               write_note(tmp_path, "later", "d", when.replace(hour=10))]
    by_offset = {atom.offset: atom for atom in parse_file(day)}
    assert answers == [by_offset[a.offset] for a in answers]
    assert answers[2].id == answers[0].id + "-2" and answers[1].id.count("-") == 2
    day.write_bytes(day.read_bytes() + b"## 2026-04-27T09:00:00+00:00 x\nno newline at the end")
    glued = write_note(tmp_path, "glued to a hand edit", "e", when)  # its heading does not start a line
    assert glued.offset not in {atom.offset for atom in parse_file(day)} and glued.text == "glued to a hand edit"
