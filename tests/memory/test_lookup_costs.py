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
