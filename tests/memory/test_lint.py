"""mnemara lint: scored exactly on a fixture with known answers; read-only; --fix only when confirmed."""
from __future__ import annotations

import json
import shutil
from pathlib import Path


from mnemara.store.instance import Instance
from mnemara.memory.lint import run_lint, supersession_candidates
from mnemara.memory.lint_paths import naive_sweep_text
from mnemara.memory.notes import append_note
from mnemara.memory.status import find_atom, set_status
from tests.conftest import run_cli
from tests.lint_fixture import build, findings_of, score


def _fixture_instance(tmp_path: Path, home: Path, name: str = "fx") -> tuple[Instance, set]:
    inst_src, expected = build(tmp_path, home)
    inst = Instance.create(name)
    for sub in ("memory", "wiki"):
        shutil.rmtree(inst.root / sub)
        shutil.copytree(inst_src / sub, inst.root / sub)
    return inst, expected


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
            and p.name != "debug.log"}


def test_fixture_scored_exactly(tmp_path: Path, isolated_home: Path) -> None:
    inst, expected = _fixture_instance(tmp_path, isolated_home)
    report = run_lint(inst.root, candidates=False, home=isolated_home)
    found = findings_of(report)
    result = score(found, expected)
    assert found == expected, (sorted(found - expected), sorted(expected - found))
    assert result["fp_rate"] == 0.0 and result["miss_rate"] == 0.0
    moved = {f.cited: f.proposals for f in report.path_problems if f.verdict == "moved"}
    proj = tmp_path / "proj"
    assert moved[f"{proj}/lib/old/parser.py"] == [f"{proj}/lib/new/parser.py"]
    assert moved[f"{proj}/config/settings.toml"] == [f"{proj}/conf/settings.toml"]
    kinds = {f.cited: f.kind for f in report.path_problems}
    assert kinds[f"{proj}/bin/oldtool"] == "binary" and kinds["mnemara-no-such-binary-zz"] == "binary"
    live = {f.cited for f in report.paths if f.verdict == "live"}
    assert {f"{proj}/src/app.py", f"{proj}/src/util/helpers.py", "~/notes-home/file.md", f"{proj}/src/"} <= live
    assert {f.link for f in report.links if f.verdict == "live"} >= {
        "deploy", "Deploy", "ops/deploy", "deploy/staging", "../wiki/ops/deploy", "../deploy", "staging"}


def test_naive_baseline_over_reports(tmp_path: Path, isolated_home: Path) -> None:
    """The same fixture through a plain exists-check: most of what it flags is wrong."""
    inst, expected = _fixture_instance(tmp_path, isolated_home)
    naive = set()
    for path in sorted((inst.root / "memory").glob("*.md")) + sorted((inst.root / "wiki").rglob("*.md")):
        naive |= {("dead", f.cited) for f in naive_sweep_text(path.read_text(), path.name)}
    path_expected = {e for e in expected if e[0] != "dead-link"}
    assert score(naive, path_expected)["fp_rate"] > 0.5


def test_cli_json_exit_code_and_read_only(tmp_path: Path, isolated_home: Path) -> None:
    inst, expected = _fixture_instance(tmp_path, isolated_home)
    before = _snapshot(inst.root)
    out = run_cli("lint", "--instance", "fx", "--json", "--no-candidates")
    assert out.returncode == 1, out.stderr
    data = json.loads(out.stdout)
    found = {(p["verdict"], p["cited"]) for p in data["paths"]} | {("dead-link", d["link"]) for d in data["dead_links"]}
    assert found == expected
    assert _snapshot(inst.root) == before
    human = run_cli("lint", "--instance", "fx", "--no-candidates")
    assert human.returncode == 1 and "MOVED" in human.stdout and "[[no-such-page]]" in human.stdout


def test_clean_instance_exits_zero() -> None:
    Instance.create("clean")
    append_note(Instance.open("clean").memory_dir, "Nothing cited here, only prose about and/or 24/7.")
    out = run_cli("lint", "--instance", "clean")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "0 dead/moved paths, 0 dead links, 0 supersession candidates" in out.stdout


def test_fix_applies_only_confirmed_changes(tmp_path: Path, isolated_home: Path) -> None:
    inst, _ = _fixture_instance(tmp_path, isolated_home)
    day = inst.memory_dir / "2026-04-20.md"
    proj = tmp_path / "proj"
    # two moved paths are offered in file order (parser first, then settings); say yes to one only
    out = run_cli("lint", "--instance", "fx", "--fix", "--no-candidates", input="y\nn\n")
    text = day.read_text()
    assert f"{proj}/lib/new/parser.py" in text and f"{proj}/lib/old/parser.py" not in text
    assert f"{proj}/config/settings.toml" in text
    assert out.returncode == 1 and "applied 1 fixes" in out.stdout
    # declining everything changes nothing
    before = _snapshot(inst.root)
    run_cli("lint", "--instance", "fx", "--fix", "--no-candidates", input="n\nn\nn\n")
    assert _snapshot(inst.root) == before


def test_refusals(tmp_path: Path) -> None:
    out = run_cli("lint", "--instance", "nope")
    assert out.returncode == 2 and "no instance 'nope'" in out.stderr
    out = run_cli("lint", "--instance", "../x")
    assert out.returncode == 2 and "invalid instance name" in out.stderr
    Instance.create("r")
    out = run_cli("lint", "--instance", "r", "--fix", "--json")
    assert out.returncode == 2 and "cannot be combined" in out.stderr


def test_unreadable_file_reported_not_crashing() -> None:
    inst = Instance.create("bad")
    (inst.memory_dir / "2026-01-01.md").write_bytes(b"## 2026-01-01T00:00:00+00:00 note\n\xff\xfe broken\n")
    out = run_cli("lint", "--instance", "bad")
    assert out.returncode == 1 and "UNREADABLE memory/2026-01-01.md" in out.stdout
    assert (inst.memory_dir / "2026-01-01.md").read_bytes().endswith(b"broken\n")


def test_supersession_candidates_are_a_list_not_a_verdict() -> None:
    inst = Instance.create("topics")
    mem = inst.memory_dir
    from datetime import datetime, timezone

    def at(h: int) -> datetime:
        return datetime(2026, 4, 20, h, tzinfo=timezone.utc)

    append_note(mem, "The staging database lives on host db-stage-01, port 5432.", "infra", at(9))
    append_note(mem, "Lunch on Fridays is at the Thai place near the station.", "life", at(10))
    append_note(mem, "The staging database moved to host db-stage-02, port 5433.", "infra", at(11))
    append_note(mem, "Use ruff for linting Python code in this repository.", "tooling", at(12))
    cands = supersession_candidates(mem)
    assert len(cands) == 1
    c = cands[0]
    assert "db-stage-01" in c.older_text and "db-stage-02" in c.newer_text and not c.duplicate
    # nothing was changed: both atoms are still active; a judged pair disappears from the list
    older, newer = find_atom(mem, c.older), find_atom(mem, c.newer)
    set_status(mem, older, "superseded", new=newer, reason="moved hosts")
    assert supersession_candidates(mem) == []
    out = run_cli("lint", "--instance", "topics")
    assert out.returncode == 0, out.stdout


def test_fix_candidates_supersede_or_distinct_only_when_answered() -> None:
    from datetime import datetime, timezone

    from mnemara.memory.status import StatusBook, all_atoms

    inst = Instance.create("judge")
    mem = inst.memory_dir
    for hour, text in ((9, "The staging database lives on host db-stage-01, port 5432."),
                       (10, "The staging database moved to host db-stage-02, port 5433."),
                       (11, "The billing ledger keeps invoices in table inv_2026."),
                       (12, "The billing ledger now keeps invoices in table invoices_v2.")):
        append_note(mem, text, "infra", datetime(2026, 4, 20, hour, tzinfo=timezone.utc))
    days = {p.name: p.read_bytes() for p in mem.glob("*.md")}
    out = run_cli("lint", "--instance", "judge", "--fix", input="k\nk\n")
    assert out.returncode == 1 and "applied 0 fixes" in out.stdout
    assert not (mem / "status.json").exists()
    out = run_cli("lint", "--instance", "judge", "--fix", input="s\nd\n")
    assert "applied 2 fixes; now clean" in out.stdout and out.returncode == 0, out.stdout
    book = StatusBook.load(mem)
    statuses = [book.status_of(a) for a in all_atoms(mem)]
    assert sorted(statuses) == ["active", "active", "active", "superseded"]
    assert {p.name: p.read_bytes() for p in mem.glob("*.md")} == days
    assert run_cli("lint", "--instance", "judge").returncode == 0


def test_a_heading_typo_is_reported_with_the_note_that_swallowed_it() -> None:
    """Trust audit: a hand-edited heading that is not read as one ('##2026-...', a space for the 'T', a
    0.18 bracket with no seconds) silently put its text into the note above it, or into no note at all."""
    inst = Instance.create("typos")
    day = inst.memory_dir / "2026-04-27.md"
    day.write_bytes(
        "## 2026-04-27 08:00:00 insight\r\nBefore any real heading.\r\n\r\n"
        "## 2026-04-27T09:00:00+00:00 insight\nThe lease timeout is 30 seconds.\n\n"
        "##2026-04-27T09:30:00+00:00 insight\nThe lease timeout is 300 seconds.\n\n"
        "## [2026-04-27 10:00] decision\nUse SQLite.\n\n"
        "## 2026-04-27 standup\nA body heading with a date and no time is prose, not a typo.\n"
        "## [2026-04-27] decision\nA 0.18 bracket with a date only: 0.18 read it as a note.\n"
        "\\## 2026-04-27T11:00:00+00:00 escaped\nAn escaped heading is text by design.\n".encode())
    from mnemara.memory.status import all_atoms

    first = [a for a in all_atoms(inst.memory_dir) if a.text.startswith("The lease timeout is 30")][0]
    report = run_lint(inst.root, candidates=False)
    assert [(h.line, h.note) for h in report.headings] == [(1, ""), (7, first.id), (10, first.id), (15, first.id)]
    assert report.needs_user
    out = run_cli("lint", "--instance", "typos", "--no-candidates")
    assert out.returncode == 1
    assert f"memory/2026-04-27.md:7  '##2026-04-27T09:30:00+00:00 insight' is not a note heading " \
           f"(read as part of note {first.id})" in out.stdout
    assert "memory/2026-04-27.md:1 " in out.stdout and "read as no note" in out.stdout
    assert "4 stray headings" in out.stdout
    data = json.loads(run_cli("lint", "--instance", "typos", "--json", "--no-candidates").stdout)
    assert [h["line"] for h in data["stray_headings"]] == [1, 7, 10, 15]
