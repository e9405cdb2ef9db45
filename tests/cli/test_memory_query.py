"""`mnemara memory search` and `mnemara memory recall`: what rag_query returns and what auto-recall
would inject, with receipts; bad input is refused in one line and changes nothing."""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from mnemara.memory.notes import append_note
from mnemara.memory.status import all_atoms, set_status
from tests.conftest import run_cli
from tests.memory_support import make_instance

DAY = datetime(2026, 5, 4, 9, tzinfo=timezone.utc)


@pytest.fixture
def notes():
    inst, _cfg = make_instance("mq", rag_embedder="none", graph_enabled=False)
    for text, when in (("The deploy timeout is 30 seconds.", DAY), ("The deploy timeout is 60 seconds.", DAY + timedelta(days=1)),
                       ("The queue lives on mq-1.", DAY), ("The queue lives on mq-7.", DAY + timedelta(days=1)),
                       ("Invoices are kept for ten years.", DAY)):
        append_note(inst.memory_dir, text, "fact", when=when)
    atoms = {a.text: a for a in all_atoms(inst.memory_dir)}
    set_status(inst.memory_dir, atoms["The queue lives on mq-1."], "superseded", new=atoms["The queue lives on mq-7."])
    return inst, atoms


def test_search_shows_hits_flags_and_the_notes_left_out(notes) -> None:
    _inst, atoms = notes
    out = run_cli("memory", "search", "--instance", "mq", "deploy", "timeout", "--json")
    assert out.returncode == 0, out.stderr
    hits = json.loads(out.stdout)["hits"]
    assert [h["text"] for h in hits][:2] == ["The deploy timeout is 60 seconds.", "The deploy timeout is 30 seconds."]
    assert hits[1]["may_conflict_with"] == [hits[0]["id"]]
    shown = run_cli("memory", "search", "-i", "mq", "-k", "2", "where does the queue live")
    old = atoms["The queue lives on mq-1."].ref
    assert shown.returncode == 0 and "mq-7" in shown.stdout
    assert f"left out {old}: superseded by {atoms['The queue lives on mq-7.'].ref}" in shown.stdout


def test_recall_says_what_would_be_injected_and_what_is_left_out(notes) -> None:
    _inst, atoms = notes
    out = run_cli("memory", "recall", "--instance", "mq", "Where does the queue live, mq-1 or mq-7?", "--json")
    assert out.returncode == 0, out.stderr
    record = json.loads(out.stdout)
    assert record["auto_recall_on"] is False
    assert [h["text"] for h in record["injected"]] == ["The queue lives on mq-7."]
    assert record["left_out"] == [atoms["The queue lives on mq-1."].ref]
    shown = run_cli("memory", "recall", "-i", "mq", "What is the deploy timeout?")
    assert shown.returncode == 0 and "auto_recall is off" in shown.stdout
    assert "INJECTED" in shown.stdout and "may conflict with" in shown.stdout and "<recalled_memory" in shown.stdout


@pytest.mark.parametrize("args", [
    ("memory", "search", "-i", "mq", "   "),
    ("memory", "search", "-i", "mq", "-k", "0", "deploy"),
    ("memory", "search", "-i", "mq", "-k", "101", "deploy"),
    ("memory", "search", "-i", "mq", "-k", "two", "deploy"),
    ("memory", "search", "-i", "mq"),
    ("memory", "search", "-i", "../etc", "deploy"),
    ("memory", "search", "-i", "nosuch", "deploy"),
    ("memory", "recall", "-i", "mq", "  "),
    ("memory", "recall", "-i", "mq"),
    ("memory", "recall", "-i", "nosuch", "hello"),
])
def test_bad_input_is_refused_in_one_line_and_changes_nothing(notes, args) -> None:
    inst, _atoms = notes
    before = sorted((p.name, p.read_bytes()) for p in inst.memory_dir.glob("*.md"))
    out = run_cli(*args)
    assert out.returncode != 0 and out.stdout == ""
    lines = [line for line in out.stderr.strip().splitlines() if line.strip()]
    assert lines and any(w in lines[-1].lower() for w in ("error", "invalid", "missing", "no instance", "not"))
    assert sorted((p.name, p.read_bytes()) for p in inst.memory_dir.glob("*.md")) == before


def test_search_output_names_why_a_hit_no_channel_found_is_there_and_keeps_the_formula_for_json(tmp_path) -> None:
    """Issue 39: `memory search` printed the ~600-character fusion rule before the hits, and a hit marked
    "(no channel)" scored 0.6: it is the note written just before/after a hit (same day file and
    category), which gains the neighbour weight times that hit's score."""
    inst, _cfg = make_instance("nb", rag_embedder="none", graph_enabled=False)
    append_note(inst.memory_dir, "Caroline: I went to the LGBTQ support group yesterday.", "chat", when=DAY)
    append_note(inst.memory_dir, "Melanie: How did it feel?", "chat", when=DAY + timedelta(seconds=30))
    data = json.loads(run_cli("memory", "search", "-i", "nb", "LGBTQ", "support", "group", "--json").stdout)
    first, reply = data["hits"][0], next(h for h in data["hits"] if "How did it feel" in h["text"])
    assert reply["channels"] == {} and "neighbour_weight" in data["fusion"]
    shown = run_cli("memory", "search", "-i", "nb", "LGBTQ", "support", "group")
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0] == "2 hits for 'LGBTQ support group' (keyword; --json shows the scoring rule and weights)"
    assert "minmax" not in shown.stdout
    added = reply["boosts"]["neighbour"]["added"]
    assert any(line.endswith(f"score {reply['score']}  (no channel found it: written next to {first['id']}, "
                             f"+{added} as the neighbour of {first['id']})") for line in lines), shown.stdout
