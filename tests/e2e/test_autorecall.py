"""Auto-recall: matching notes join the turn's context (visible in the recorded request), never stored."""
from __future__ import annotations

import pytest

from mnemara.commands import dispatch as run_command
from mnemara.core.config import update_config
from mnemara.core.debuglog import read_events
from mnemara.memory.autorecall import keyword_relevance, relevance
from mnemara.memory.notes import append_note
from mnemara.memory.status import all_atoms, chunk_id, set_status
from mnemara.testing.scripted_api import reply

NOTES = [
    ("The lease manager timeout is 30 seconds; renewals start at 20 seconds.", "insight"),
    ("Deploys to staging run every Tuesday after the standup.", "fact"),
    ("The billing service stores invoices in the ledger table.", "fact"),
]


def _session(session_factory, name: str = "ar", on: bool = True):
    session = session_factory(name)
    for text, cat in NOTES:
        append_note(session.instance.memory_dir, text, cat)
    update_config(session.instance.config_path, auto_recall=on, rag_embedder="ollama",
                  rag_embed_url="http://127.0.0.1:9/api/embed")
    return session


def _sent_text(api) -> str:
    return "\n".join(b.get("text", "") for b in api.last.blocks("user") if b.get("type") == "text")


def test_keyword_relevance_needs_real_overlap() -> None:
    assert keyword_relevance("what is the lease timeout?", NOTES[0][0]) == (1.0, 2, False)
    assert keyword_relevance("hello there", NOTES[0][0]) == (0.0, 0, False)
    assert relevance("INC-7781?", {"text": "Postmortem of INC-7781: disk full."})["relevance"] == 1.0
    hit = {"text": NOTES[1][0], "channels": {"keyword": {"rank": 1, "bm25": 1.2}}}
    assert relevance("tell me about staging", hit)["relevance"] == 0.0  # one matched word is not enough


def _last_message_text(api) -> str:
    content = api.last.messages[-1].get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    return "\n".join(b.get("text", "") for b in blocks if b.get("type") == "text")


@pytest.mark.e2e
def test_recall_off_injects_nothing_on_injects_unstored_unrelated_gets_none_superseded_skipped(
        scripted_api, session_factory) -> None:
    """Four turns of one session (one CLI start), each proving one behaviour of auto-recall."""
    session = _session(session_factory, on=False)
    scripted_api.push(reply("ok"), reply("It is 30 seconds."), reply("ok"), reply("ok"))
    question = "What is the lease manager timeout?"

    # 1. off (the default, set explicitly here): nothing recalled
    session.turn(question)
    assert "<recalled_memory" not in _sent_text(scripted_api), "auto-recall off still injected notes"
    assert session.auto_recall.last is None, "auto-recall off still ran"

    # 2. on: the matching note joins the request, before the question, and is never stored
    assert "ON" in run_command(session, "/recall on").text
    session.turn(question)
    sent = _last_message_text(scripted_api)
    assert "<recalled_memory" in sent and NOTES[0][0] in sent, "the matching note was not injected"
    assert NOTES[1][0] not in sent and NOTES[2][0] not in sent, "notes that do not match were injected"
    assert sent.index("<recalled_memory") < sent.rindex(question)
    stored = " ".join(r.text for r in session.store.history())
    assert "recalled_memory" not in stored and NOTES[0][0] not in stored, "the recalled block was stored"
    record = session.auto_recall.last
    atom = all_atoms(session.instance.memory_dir)[0]
    assert [h["id"] for h in record.injected] == [chunk_id(atom)]
    ev = record.injected[0]["evidence"]
    assert ev["keyword_coverage"] == 1.0 and ev["keyword_rank"] == 1 and "bm25" in ev
    assert "keyword-only" in record.degraded
    logged = [e for e in read_events(session.instance.debug_log_path) if e["event"] == "auto_recall"][-1]
    assert logged["injected"] == [chunk_id(atom)] and logged["scores"][chunk_id(atom)]["relevance"] == 1.0
    shown = run_command(session, "/recall")
    assert "1 of" in shown.text and "INJECTED " + chunk_id(atom) in shown.text

    # 3. nothing clears the bar: nothing injected
    session.turn("Tell me a joke about penguins and ice.")
    assert "penguins" in _last_message_text(scripted_api)
    assert "<recalled_memory" not in _last_message_text(scripted_api), "an unrelated question got recalled notes"
    assert session.auto_recall.last.injected == [], "an unrelated question got recalled notes"

    # 4. a superseded note is skipped; the note that replaced it is recalled
    mem = session.instance.memory_dir
    append_note(mem, "The lease manager timeout is now 45 seconds after the March change.", "decision")
    atoms = all_atoms(mem)
    set_status(mem, atoms[0], "superseded", new=atoms[-1], reason="changed in March")
    session.turn(question)
    sent = _last_message_text(scripted_api)
    assert "45 seconds" in sent, "the replacing note was not recalled"
    assert NOTES[0][0] not in sent, "a superseded note was recalled"


def test_recall_command_refuses_bad_argument(session_factory) -> None:
    session = _session(session_factory, name="cmd", on=False)
    result = run_command(session, "/recall sometimes")
    assert not result.ok and "expected on or off" in result.text
    assert "OFF" in run_command(session, "/recall").text


def test_the_newest_of_conflicting_notes_is_chosen_by_time_not_by_spelling() -> None:
    """Trust audit: a hand-edited heading with another UTC offset compared as text, so a note of
    16:00 UTC written "+09:00" outranked the newer one of 20:00 UTC."""
    from mnemara.memory.search.recency import apply_recency

    old = {"id": "a", "created_at": "2026-05-01T10:00:00+00:00", "text": "The lease timeout is 30 seconds."}
    offset = {"id": "b", "created_at": "2026-05-02T01:00:00+09:00", "text": "The lease timeout is 45 seconds."}
    newest = {"id": "c", "created_at": "2026-05-01T20:00:00+00:00", "text": "The lease timeout is 60 seconds."}
    assert [h["id"] for h in apply_recency([old, offset, newest])] == ["c", "b", "a"]
