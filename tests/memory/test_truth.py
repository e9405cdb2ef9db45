"""Issue 31, memory that cannot lie: only exact copies are automatic, anything close is proposed,
recall marks and never hides. One test per path: write_memory, `mnemara note`, replay,
`mnemara lint --fix`, rag_query and auto-recall, on the dev set (tests/memory/truth_dev.json;
the bench's blind set is never read here)."""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from mnemara.memory.notes import append_note
from mnemara.memory.search.exact import copy_key, highlight_difference, is_exact_copy
from mnemara.memory.search.subject import different_subject
from mnemara.memory.search.similarity import CONFLICT, DISTINCT, relate
from mnemara.memory.status import StatusBook, all_atoms
from tests.memory_support import call, context, make_instance

DEV = json.loads((Path(__file__).parent / "truth_dev.json").read_text(encoding="utf-8"))
DAY = datetime(2026, 5, 4, 9, tzinfo=timezone.utc)
CORRECTIONS = [(c["older"], c["newer"]) for c in DEV["corrections"]]
EXACT = [(c["older"], c["newer"]) for c in DEV["copies"] if c["how"] == "exact"]
NEAR = [(c["older"], c["newer"]) for c in DEV["copies"] if c["how"] == "near"]


@pytest.mark.parametrize(("older", "newer"), CORRECTIONS)
def test_no_correction_is_an_exact_copy(older: str, newer: str) -> None:
    assert not is_exact_copy(older, newer)
    assert relate(older, newer).kind != "copy"


@pytest.mark.parametrize(("older", "newer"), EXACT)
def test_exact_copies_differ_only_in_spacing_unicode_form_and_plain_word_case(older: str, newer: str) -> None:
    assert is_exact_copy(older, newer) and relate(older, newer).kind == "copy"


def test_the_copy_key_keeps_what_carries_a_fact() -> None:
    assert copy_key("The CACHE holds 2 GiB.") == "the cache holds 2 GiB"
    assert copy_key('Set it to "Lax"') != copy_key('Set it to "lax"')  # a quoted value as written
    assert copy_key("Uses GitHub") != copy_key("Uses Github")  # a mixed-case word as written
    assert copy_key("go to Exports/") != copy_key("go to exports/")
    assert not copy_key("  .  ")


def test_differences_are_marked_word_by_word() -> None:
    older, newer = highlight_difference("The queue lives on mq-1.", "The queue lives on mq-7.")
    assert older == "The queue lives on [-mq-1.-]" and newer == "The queue lives on {+mq-7.+}"


def test_a_sibling_is_another_subject_not_a_conflict() -> None:
    sibling = DEV["siblings"][0]
    assert different_subject(sibling["older"], sibling["newer"])
    assert relate(sibling["older"], sibling["newer"]).kind == DISTINCT
    for older, newer in CORRECTIONS:
        assert not different_subject(older, newer), (older, newer)
    assert relate("The timeout is 30 s.", "The timeout is 60 s.").kind == CONFLICT


# -- write_memory ------------------------------------------------------------------------------
def test_write_memory_refuses_only_an_exact_copy_and_proposes_the_rest() -> None:
    inst, cfg = make_instance("wm", rag_embedder="none", graph_enabled=False)
    ctx = context(inst, cfg)
    (exact_old, exact_new), (near_old, near_new) = EXACT[0], NEAR[0]
    older = [call(ctx, "write_memory", text=t)["id"] for t in (exact_old, near_old, *(o for o, _ in CORRECTIONS))]
    refused = call(ctx, "write_memory", text=exact_new)
    assert refused["written"] is False and refused["existing"]["id"] == older[0] and older[0] in refused["message"]
    near = call(ctx, "write_memory", text=near_new)
    assert near.get("written", True) is not False and near["id"] not in older
    for _old, new in CORRECTIONS:
        answer = call(ctx, "write_memory", text=new)
        assert answer["ok"] and answer.get("written", True) is not False, (new, answer)
    live = {a.text for a in all_atoms(inst.memory_dir)}
    assert {n for _o, n in CORRECTIONS} <= live and near_new in live and exact_new not in live
    book = StatusBook.load(inst.memory_dir)
    kinds = {(p["older"], p["newer"]): p.get("kind") for p in book.proposals}
    assert kinds.get((older[1], near["id"])) in ("merge", "supersede")
    assert any(k == "supersede" for k in kinds.values())


# -- mnemara note ------------------------------------------------------------------------------
def test_note_cli_skips_an_exact_copy_names_the_kept_note_and_writes_a_correction(cli) -> None:
    inst, _cfg = make_instance("nt", rag_embedder="none")
    first = cli("note", "-i", "nt", "The queue lives on mq-1.")
    assert first.returncode == 0
    kept = first.stdout.split("(id ")[1].split(")")[0]
    again = cli("note", "-i", "nt", "the QUEUE   lives on mq-1")
    assert again.returncode == 0 and "not appended" in again.stdout and kept in again.stdout
    fixed = cli("note", "-i", "nt", "The queue lives on mq-7.")
    assert fixed.returncode == 0 and "noted in" in fixed.stdout and f"may correct note {kept}" in fixed.stdout
    assert [a.text for a in all_atoms(inst.memory_dir)] == ["The queue lives on mq-1.", "The queue lives on mq-7."]
    assert [p["older"] for p in StatusBook.load(inst.memory_dir).proposals] == [kept]


def test_note_cli_refuses_a_bad_instance_and_an_empty_note(cli) -> None:
    make_instance("nb")
    assert cli("note", "-i", "../x", "hello").returncode != 0
    assert cli("note", "-i", "nb").returncode != 0


# -- replay ------------------------------------------------------------------------------------
def test_replay_archives_only_exact_copies_and_proposes_near_ones() -> None:
    from mnemara.replay import run_replay

    inst, _cfg = make_instance("rp", rag_embedder="none")
    pairs = EXACT + NEAR + CORRECTIONS
    for n, (older, newer) in enumerate(pairs):
        append_note(inst.memory_dir, older, "fact", when=DAY + timedelta(minutes=n))
        append_note(inst.memory_dir, newer, "fact", when=DAY + timedelta(days=1, minutes=n))
    now = DAY + timedelta(days=2)
    plan = run_replay(inst, apply=True, now=now, today=now.date())
    live = {a.text for a in all_atoms(inst.memory_dir)}
    for older, newer in NEAR + CORRECTIONS:
        assert older in live and newer in live, (older, newer)
    assert all(older in live and newer not in live for older, newer in EXACT)  # the earliest is kept
    assert plan.result is not None and all("duplicate of" in line for line in plan.result.archived)
    proposed = {(c.older.atom.text, c.newer.atom.text): c.kind for c in plan.conflicts}
    assert all(pair in proposed for pair in NEAR), proposed


# -- lint --fix --------------------------------------------------------------------------------
def test_lint_fix_shows_both_texts_marked_and_a_merge_supersedes_only_on_confirmation(cli) -> None:
    inst, cfg = make_instance("lf", rag_embedder="none", graph_enabled=False)
    ctx = context(inst, cfg)
    older = call(ctx, "write_memory", text="The web team owns the build cache.")["id"]
    newer = call(ctx, "write_memory", text="The build cache is owned by the web team.")["id"]
    kinds = [p.get("kind") for p in StatusBook.load(inst.memory_dir).proposals]
    assert kinds == ["merge"]
    shown = cli("lint", "-i", "lf")
    assert shown.returncode == 1 and "possible copy" in shown.stdout and "{+build cache is owned by the+}" in shown.stdout and "[-team owns the build cache.-]" in shown.stdout
    kept = cli("lint", "-i", "lf", "--fix", input="k\n")
    assert StatusBook.load(inst.memory_dir).entries == {}, kept.stdout
    merged = cli("lint", "-i", "lf", "--fix", input="m\n")
    entry = StatusBook.load(inst.memory_dir).entries[older]
    assert entry["status"] == "superseded" and entry["superseded_by"] == newer, merged.stdout


# -- rag_query and auto-recall -----------------------------------------------------------------
def _notes(name: str, notes: list[tuple[str, datetime]], **config: object):
    inst, cfg = make_instance(name, rag_embedder="none", graph_enabled=False, auto_recall=True, **config)
    for text, when in notes:
        append_note(inst.memory_dir, text, "fact", when=when)
    return inst, cfg


def test_rag_query_keeps_both_conflicting_notes_flagged_newer_first_and_names_superseded_ones() -> None:
    from mnemara.memory.status import set_status

    inst, cfg = _notes("rq", [("The deploy timeout is 30 seconds.", DAY),
                              ("The deploy timeout is 60 seconds.", DAY + timedelta(days=1)),
                              ("The queue lives on mq-1.", DAY), ("The queue lives on mq-7.", DAY + timedelta(days=1))])
    ctx = context(inst, cfg)
    hits = call(ctx, "rag_query", question="deploy timeout", k=5)["hits"]
    texts = [h["text"] for h in hits]
    assert texts.index("The deploy timeout is 60 seconds.") < texts.index("The deploy timeout is 30 seconds.")
    assert all(h.get("may_conflict_with") for h in hits if "deploy" in h["text"])
    atoms = {a.text: a for a in all_atoms(inst.memory_dir)}
    set_status(inst.memory_dir, atoms["The queue lives on mq-1."], "superseded", new=atoms["The queue lives on mq-7."])
    answer = call(ctx, "rag_query", question="where does the queue live", k=5)
    assert [h["text"] for h in answer["hits"] if "queue" in h["text"]] == ["The queue lives on mq-7."]
    gone = answer["left_out"][0]
    assert gone["id"] == atoms["The queue lives on mq-1."].ref and "superseded by" in gone["why"]


def test_auto_recall_injects_the_sibling_asked_about_and_flags_without_hiding() -> None:
    from mnemara.memory.autorecall import recall_for

    sibling = DEV["siblings"][0]
    inst, cfg = _notes("ar", [(sibling["older"], DAY), (sibling["newer"], DAY + timedelta(days=1)),
                              ("The deploy timeout is 30 seconds.", DAY),
                              ("The deploy timeout is 60 seconds.", DAY + timedelta(days=1))])
    record = recall_for(inst, cfg, sibling["probe_older"])
    assert sibling["older"] in [h["text"] for h in record.injected], record.describe()
    assert not any(h.get("may_conflict_with") for h in record.injected)
    both = recall_for(inst, cfg, "What is the deploy timeout?")
    texts = [h["text"] for h in both.injected]
    assert texts[:2] == ["The deploy timeout is 60 seconds.", "The deploy timeout is 30 seconds."], both.describe()
    assert "may conflict with" in both.block and not both.left_out


def test_auto_recall_names_a_superseded_note_it_leaves_out() -> None:
    from mnemara.memory.autorecall import recall_for
    from mnemara.memory.status import set_status

    inst, cfg = _notes("al", [("The queue lives on mq-1.", DAY), ("The queue lives on mq-7.", DAY + timedelta(days=1))])
    old, new = all_atoms(inst.memory_dir)
    set_status(inst.memory_dir, old, "superseded", new=new, reason="moved")
    record = recall_for(inst, cfg, "Where does the queue live, mq-1 or mq-7?")
    assert [h["text"] for h in record.injected] == [new.text]
    assert record.left_out == [old.ref] and any(f"left out {old.ref}: superseded by {new.ref}" in line
                                                for line in record.describe())


# -- /memory review (the slash command of the TUI and the REPL) ----------------------------------
def test_memory_review_lists_proposals_marked_and_applies_only_the_users_verdict(session_factory) -> None:
    from mnemara.commands import dispatch

    session = session_factory("mr")
    ctx = context(session.instance, session.config)
    first = call(ctx, "write_memory", text="The queue lives on mq-1.")["id"]
    second = call(ctx, "write_memory", text="The queue lives on mq-7.")["id"]
    third = call(ctx, "write_memory", text="The web team owns the build cache.")["id"]
    fourth = call(ctx, "write_memory", text="The build cache is owned by the web team.")["id"]
    listed = dispatch(session, "/memory review")
    assert listed.ok and "1. possible correction" in listed.text and "2. possible copy" in listed.text
    assert "[-mq-1.-]" in listed.text and "{+mq-7.+}" in listed.text
    assert StatusBook.load(session.instance.memory_dir).entries == {}  # listing changes nothing
    for bad in ("/memory", "/memory list", "/memory review accept", "/memory review accept x",
                "/memory review accept 9", "/memory review keep 1"):
        refused = dispatch(session, bad)
        assert not refused.ok and len(refused.text.splitlines()) == 1, bad
    assert StatusBook.load(session.instance.memory_dir).entries == {}
    done = dispatch(session, "/memory review accept 1")
    assert done.ok and f"{first} is superseded by {second}" in done.text
    kept = dispatch(session, "/memory review distinct 1")
    assert kept.ok and "distinct" in kept.text
    book = StatusBook.load(session.instance.memory_dir)
    assert book.entries[first]["superseded_by"] == second and third not in book.entries
    assert dispatch(session, "/memory review").text == "no possible copies or corrections to review"
    assert {kept.payload.older, kept.payload.newer} == {third, fourth}


# -- provenance ----------------------------------------------------------------------------------
def test_every_note_says_who_wrote_it_in_list_search_and_recall(cli, session_factory) -> None:
    from mnemara.commands import dispatch
    from mnemara.memory import provenance
    from mnemara.memory.autorecall import recall_for
    from mnemara.memory.listing import list_notes

    session = session_factory("pv")
    inst = session.instance
    session.update_config(rag_embedder="none", graph_enabled=False)
    assert cli("note", "-i", "pv", "The queue lives on mq-1.").returncode == 0
    assert dispatch(session, "/note The deploy window opens at noon.").ok
    state = session.tool_context.state
    state.turn_row = 7
    state.note_call("mcp__mnemara__write_memory", {"text": "Invoices are kept for ten years."}, "toolu_abc")
    written = call(session.tool_context, "write_memory", text="Invoices are kept for ten years.")
    by_text = {i["text"]: i["provenance"] for i in list_notes(inst.memory_dir)}
    assert by_text == {"The queue lives on mq-1.": "user (mnemara note)",
                       "The deploy window opens at noon.": "user (/note)",
                       "Invoices are kept for ten years.": "agent (turn row 7, tool call toolu_abc)"}
    listed = cli("memory", "list", "-i", "pv")
    assert "[by agent (turn row 7, tool call toolu_abc)]" in listed.stdout
    found = json.loads(cli("memory", "search", "-i", "pv", "invoices kept", "--json").stdout)["hits"]
    assert found[0]["id"] == f"note:{written['id']}" and found[0]["provenance"].startswith("agent (turn row 7")
    record = recall_for(inst, session.config, "How long are invoices kept?")
    assert any("written by agent (turn row 7, tool call toolu_abc)" in line for line in record.describe())
    assert provenance.describe(None).startswith("unknown")
