"""Dedupe on write: `mnemara note` and write_memory do not append a note an atom already holds."""
from __future__ import annotations

from pathlib import Path


from mnemara.store.instance import Instance
from mnemara.memory.dedupe import find_duplicate, find_same_text
from mnemara.memory.notes import append_note, day_files, parse_file
from mnemara.memory.search.similarity import normalize
from tests.conftest import run_cli
from tests.memory_support import call, context, make_instance


def _atoms(inst: Instance) -> list:
    return [a for f in day_files(inst.memory_dir) for a in parse_file(f)]


def test_normalize_ignores_case_space_emphasis_and_final_punctuation() -> None:
    assert normalize("  The lease  timeout is **30s**. ") == normalize("the lease timeout is 30s")
    assert normalize("timeout is 30s") != normalize("timeout is 31s")


def test_same_text_found_and_different_text_not(tmp_path: Path) -> None:
    append_note(tmp_path, "The lease timeout is 30s.", "insight")
    append_note(tmp_path, "Deploys happen on Tuesdays.", "fact")
    hit = find_same_text(tmp_path, "the lease TIMEOUT is 30s")
    assert hit is not None and hit.text == "The lease timeout is 30s."
    assert find_same_text(tmp_path, "The lease timeout is 45s.") is None
    dup, note = find_duplicate(tmp_path, "Deploys happen on tuesdays!")
    assert dup is not None and dup.how == "same text" and "no embedder" not in note


def test_cli_note_refuses_duplicate_and_names_the_atom() -> None:
    assert run_cli("init", "--instance", "d").returncode == 0
    first = run_cli("note", "--instance", "d", "The", "build", "uses", "uv.")
    assert first.returncode == 0 and "noted in" in first.stdout
    again = run_cli("note", "--instance", "d", "-c", "other", "the build uses UV")
    inst = Instance.open("d")
    atoms = _atoms(inst)
    assert again.returncode == 0 and "not appended" in again.stdout and atoms[0].id in again.stdout
    assert len(atoms) == 1
    forced = run_cli("note", "--instance", "d", "--allow-duplicate", "the build uses UV")
    assert forced.returncode == 0 and len(_atoms(inst)) == 2


def test_cli_note_bad_category_refused_before_anything() -> None:
    run_cli("init", "--instance", "d2")
    out = run_cli("note", "--instance", "d2", "-c", "../x", "text")
    assert out.returncode == 2 and "invalid category" in out.stderr
    assert _atoms(Instance.open("d2")) == []


def test_write_memory_duplicate_not_appended(mnemara_home: Path) -> None:
    # the tool's own logic, called as the session calls it (tests/e2e/test_memory_e2e.py runs
    # write_memory through the real CLI)
    inst, cfg = make_instance("wm")
    append_note(inst.memory_dir, "The lease timeout is 30s.", "insight")
    answer = call(context(inst, cfg), "write_memory", text="the lease timeout is 30s", category="fact")
    atoms = _atoms(inst)
    assert [a.text for a in atoms] == ["The lease timeout is 30s."]
    assert answer["written"] is False and answer["duplicate"] is True
    assert answer["existing"]["id"] == atoms[0].id and answer["existing"]["how"] == "same text"


def test_similarity_dedupe_with_an_embedder_proposes_and_never_refuses(tmp_path: Path) -> None:
    from mnemara.core.config import Config
    from mnemara.memory.dedupe import check_before_write, check_write
    from mnemara.testing.ollama import FakeOllama

    append_note(tmp_path, "The lease timeout is 30 seconds.", "insight")
    append_note(tmp_path, "Invoices live in the ledger table.", "fact")
    with FakeOllama() as fake:
        cfg = Config(rag_embedder="ollama", rag_embed_url=fake.url("/api/embed"), dedupe_threshold=0.97)
        assert check_before_write(tmp_path, "30 seconds is the lease timeout", cfg) is None  # not the same text
        check = check_write(tmp_path, "30 seconds is the lease timeout", cfg)
        assert [c.atom.text for c in check.copies] == ["The lease timeout is 30 seconds."]
        assert check.copies[0].similarity is not None and check.copies[0].similarity >= 0.97
        assert check_before_write(tmp_path, "The deploy window opens at noon.", cfg) is None
        assert check_before_write(tmp_path, "the lease timeout is 30 seconds", cfg)["existing"]["how"] == "same text"
    # embedder gone: the vector test is skipped and never blocks the write; the same words in
    # another order are still proposed as a possible copy
    down = Config(rag_embedder="ollama", rag_embed_url="http://127.0.0.1:9/api/embed")
    check = check_write(tmp_path, "30 seconds is the lease timeout", down)
    assert check.duplicate is None and [c.atom.text for c in check.copies] == ["The lease timeout is 30 seconds."]
    assert check.note.startswith("similarity check skipped")
    dup, note = find_duplicate(tmp_path, "A lease lapses once 30 seconds pass.", embedder=None)
    assert dup is None and "no embedder" in note


def test_slash_note_refuses_duplicate(tmp_path: Path, session_factory) -> None:
    from mnemara.commands import dispatch

    ctx = session_factory("slash")
    inst = ctx.instance
    assert dispatch(ctx, "/note -c fact The cache TTL is 5 minutes").text.startswith("noted in")
    again = dispatch(ctx, "/note the cache ttl is 5 minutes.")
    assert again.text.startswith("not appended") and len(_atoms(inst)) == 1


def test_same_text_found_across_emphasis_marks(tmp_path: Path) -> None:
    append_note(tmp_path, "Use **ruff**-`format` before ~~any~~ commits.", "tooling")
    append_note(tmp_path, "Something else entirely.", "fact")
    assert find_same_text(tmp_path, "use ruff-format before any commits") is not None  # key: "ruff-format"


def test_characters_of_a_claim_are_not_emphasis_marks() -> None:
    """Trust audit: every '*', '_', '`' and '~' was dropped, so '~/backups' was '/backups', 'my_app' was
    'myapp' and '2**10' was '210': `mnemara note` refused the correction as the same text."""
    for a, b in (("Backups are written to ~/backups.", "Backups are written to /backups."),
                 ("The reports go to the my_app database.", "The reports go to the myapp database."),
                 ("The cap is 2**10 requests.", "The cap is 210 requests."),
                 ("Alert when the queue is ~5 deep.", "Alert when the queue is 5 deep.")):
        assert normalize(a) != normalize(b), (a, b)
    assert normalize("Never log the **payment** body, see `INC-4432` and _why_.") == \
        normalize("never log the payment body, see INC-4432 and why")


def test_cli_note_writes_a_correction_that_differs_only_by_a_mark_character() -> None:
    assert run_cli("init", "--instance", "dm").returncode == 0
    assert "noted in" in run_cli("note", "--instance", "dm", "Backups are written to ~/backups.").stdout
    again = run_cli("note", "--instance", "dm", "Backups are written to /backups.")
    assert again.returncode == 0 and "noted in" in again.stdout, again.stdout
    assert [a.text for a in _atoms(Instance.open("dm"))] == ["Backups are written to ~/backups.",
                                                             "Backups are written to /backups."]


def _day(n: int):
    from datetime import datetime, timedelta, timezone

    return datetime(2026, 5, 1, 9, tzinfo=timezone.utc) + timedelta(days=n)


def test_write_memory_writes_a_claim_restated_after_a_contradiction(mnemara_home: Path) -> None:
    """Trust audit: "30 s" (day 1), "300 s" (day 2); writing "30 s" again was refused as a copy of day 1,
    so "300 s" stayed the newest note (first in recall) although the newest word was "30 s"."""
    for name, text in (("wr1", "The lease timeout is 30 seconds."), ("wr2", "the lease timeout is 30 s")):
        inst, cfg = make_instance(name)  # same text, then the same claim in other words (not a copy at all)
        append_note(inst.memory_dir, "The lease timeout is 30 seconds.", "fact", when=_day(0))
        append_note(inst.memory_dir, "The lease timeout is 300 seconds.", "fact", when=_day(1))
        newer = _atoms(inst)[1]
        answer = call(context(inst, cfg), "write_memory", text=text, category="fact")
        assert answer.get("written", True) is not False and not answer.get("duplicate"), answer
        assert newer.id in [c["id"] for c in answer["conflicts_with"]]
        assert ("restates note" in answer["conflict_message"]) == (name == "wr1")
        assert _atoms(inst)[-1].text == text
        if name == "wr1":  # the newest word is "30 seconds" again: a further exact copy is refused
            again = call(context(inst, cfg), "write_memory", text="The lease timeout is 30 seconds.", category="fact")
            assert again["duplicate"] is True and len(_atoms(inst)) == 3


def test_cli_note_writes_a_claim_restated_after_a_contradiction() -> None:
    assert run_cli("init", "--instance", "dr").returncode == 0
    inst = Instance.open("dr")
    append_note(inst.memory_dir, "Shadow writes are enabled in production.", "fact", when=_day(0))
    append_note(inst.memory_dir, "Shadow writes are disabled in production.", "fact", when=_day(1))
    first, contrary = _atoms(inst)
    out = run_cli("note", "--instance", "dr", "shadow writes are enabled in production")
    assert out.returncode == 0 and "noted in" in out.stdout, out.stdout
    assert f"note {first.id} (memory/2026-05-01.md), contradicted since by note {contrary.id}" in out.stdout
    again = run_cli("note", "--instance", "dr", "Shadow writes are enabled in production.")
    assert "not appended" in again.stdout and len(_atoms(inst)) == 3


def test_a_write_conflict_is_offered_by_lint_however_many_other_pairs_there_are(mnemara_home: Path) -> None:
    """Trust audit: write_memory said "resolve with `mnemara lint --fix`", but lint lists only its best
    50 same-topic pairs: with enough exact copies around, the conflict was never offered."""
    from mnemara.memory.lint import supersession_candidates

    inst, cfg = make_instance("wl")
    for n in range(60):  # 60 pairs of copies outrank any conflict in lint's own scan
        for _ in range(2):
            append_note(inst.memory_dir, f"Team {n} owns the service number {n} and its queue {n * 7}.", "fact",
                        when=_day(0))
    append_note(inst.memory_dir, "The lease timeout is 30 seconds.", "fact", when=_day(1))
    answer = call(context(inst, cfg), "write_memory", text="The lease timeout is 300 seconds.", category="fact")
    assert "mnemara lint --fix" in answer["conflict_message"]
    offered = supersession_candidates(inst.memory_dir)
    assert ("The lease timeout is 30 seconds.", "The lease timeout is 300 seconds.") in \
        [(c.older_text, c.newer_text) for c in offered]
    first = offered[0]
    assert (first.older_text, first.newer_text, first.proposed_by) == (
        "The lease timeout is 30 seconds.", "The lease timeout is 300 seconds.", "write_memory")
    assert "numbers differ" in first.conflict
