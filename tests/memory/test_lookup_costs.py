"""What the newer-note lookup reads cheaply (round 12 of issue 40: rag_query at 10,000 notes had drifted past its
30 ms goal) must say exactly what the full reading says."""
from __future__ import annotations

from pathlib import Path

import pytest

from mnemara.memory.notes import day_files
from mnemara.memory.search.claim import claim_of, topic_of

TEXTS = [
    "The staging Postgres host is db-stage-02.internal (see runbook).",
    "Caroline: The support group meets every Tuesday at 7pm.",
    "Die Müllabfuhr kommt jeden Mittwoch.",
    "Nightly at 2 AM UTC, the production DB gets backed up.",
    "My manager is Greg; I report to him since March.",
    "",
]


@pytest.mark.parametrize("text", TEXTS)
def test_the_topic_is_the_claims_own(text: str) -> None:
    topic, claim = topic_of(text), claim_of(text)
    assert (topic.content, topic.topic, topic.subject, topic.names) == \
        (claim.content, claim.topic, claim.subject, claim.names)


def test_day_files_are_the_dated_files_oldest_first(tmp_path: Path) -> None:
    for name in ("2026-05-02.md", "2026-04-30.md", "notes.md", "2026-05-01.txt", ".2026-05-03.md"):
        (tmp_path / name).write_text("x", encoding="utf-8")
    (tmp_path / "archive").mkdir()
    (tmp_path / "archive" / "2026-01-01.md").write_text("x", encoding="utf-8")
    assert [p.name for p in day_files(tmp_path)] == ["2026-04-30.md", "2026-05-02.md"]
    assert day_files(tmp_path)[0] == tmp_path / "2026-04-30.md"


def test_no_memory_folder_has_no_day_files(tmp_path: Path) -> None:
    assert day_files(tmp_path / "missing") == []
    (tmp_path / "file").write_text("x", encoding="utf-8")
    assert day_files(tmp_path / "file") == []


def _hit(ident: str, text: str, minute: int) -> dict[str, object]:
    return {"id": ident, "kind": "memory", "text": text,
            "created_at": f"2026-03-01T{minute // 60:02d}:{minute % 60:02d}:00+00:00"}


def test_notes_in_one_pattern_add_a_bounded_number_of_newer_notes_newest_first() -> None:
    from mnemara.memory.search.newer import ADDED_PER_ANSWER, NEWER_PER_HIT, attach_newer

    hits = [_hit(f"h{n}", f"The staging port of service {n} is {8000 + n}.", n) for n in range(10)]
    # every hit has 30 newer notes that correct it (same pattern, another port), as a user who logs one fact a day
    pool = {f"h{n}": [_hit(f"h{n}-{m}", f"The staging port of service {n} is {9000 + m}.", 100 + m) for m in range(30)]
            for n in range(10)}
    out = attach_newer(hits, lambda todo: {h["id"]: pool.get(h["id"], []) for h in todo})
    added = [h for h in out if h.get("added_as")]
    assert len(added) <= ADDED_PER_ANSWER and all(len(h.get("newer_notes", [])) <= NEWER_PER_HIT for h in hits)
    first = next(h for h in out if h["id"] == "h0")
    assert first["newer_notes_capped"] and [m["id"] for m in first["newer_notes"]][0] == "h0-29"  # the newest kept
    assert {h["id"] for h in hits} <= {h["id"] for h in out}  # no ranked hit is dropped


def test_a_few_newer_notes_are_all_attached_and_nothing_says_capped() -> None:
    from mnemara.memory.search.newer import attach_newer

    hits = [_hit("a", "The staging port is 8443.", 1)]
    newer = [_hit(f"a{m}", f"The staging port is {9000 + m}.", 10 + m) for m in range(3)]
    out = attach_newer(hits, lambda todo: {"a": newer} if todo[0]["id"] == "a" else {})
    assert {h["id"] for h in out} == {"a", "a0", "a1", "a2"} and "newer_notes_capped" not in out[-1]
    assert all("newer_notes_capped" not in h for h in out)
