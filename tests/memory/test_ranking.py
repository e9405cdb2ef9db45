"""How rag_query orders hits: min-max fusion, dates named in the question, and conversation neighbours
(pure functions, then on a real LanceDB index)."""
from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import pytest

from mnemara.memory.notes import append_note
from mnemara.memory.search import ranking
from mnemara.memory.search.rag import RagIndex

T0 = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)


def test_unit_scores_put_each_channel_on_zero_to_one() -> None:
    assert ranking.unit_scores([9.0, 6.0, 3.0]) == [1.0, 0.5, 0.0]
    assert ranking.unit_scores([2.5]) == [1.0] and ranking.unit_scores([1.0, 1.0]) == [1.0, 1.0]
    assert ranking.unit_scores([]) == []


@pytest.mark.parametrize(("question", "window"), [
    ("What did Maria do on 1 February, 2023?", (date(2023, 2, 1), date(2023, 2, 1))),
    ("What painting did Melanie show on October 13, 2023?", (date(2023, 10, 13), date(2023, 10, 13))),
    ("what happened on 2023-05-07", (date(2023, 5, 7), date(2023, 5, 7))),
    ("What class did Maria start in December 2023?", (date(2023, 12, 1), date(2023, 12, 31))),
    ("How many times did she go to the beach in 2023?", (date(2023, 1, 1), date(2023, 12, 31))),
    ("When did Melanie go camping in June?", (date(2023, 6, 1), date(2023, 6, 30))),  # the June before 2023-08-20
    ("Who came on 31 February 2023?", (date(2023, 2, 1), date(2023, 2, 28))),  # no such day: the month
    ("When did Caroline go to the support group?", None),
    ("How many items may we ship?", None),  # "may" the verb is no month
])
def test_date_window_reads_the_dates_a_question_names(question: str, window: tuple[date, date] | None) -> None:
    assert ranking.date_window(question, date(2023, 8, 20)) == window


def test_a_month_without_a_year_needs_a_reference() -> None:
    assert ranking.date_window("what did we do in June?", None) is None
    assert ranking.date_window("what did we do in June?", date(2024, 3, 1)) == (date(2023, 6, 1), date(2023, 6, 30))


def test_timeline_links_consecutive_notes_of_one_conversation_only() -> None:
    rows = [("a", "memory/d.md", "chat", "2023-05-08T13:56:00+00:00"),
            ("b", "memory/d.md", "chat", "2023-05-08T13:56:30+00:00"),
            ("c", "memory/d.md", "chat", "2023-05-08T14:30:00+00:00"),  # half an hour later
            ("d", "memory/d.md", "fact", "2023-05-08T14:30:20+00:00"),  # another category
            ("e", "memory/e.md", "chat", "2023-05-08T14:30:10+00:00"),  # another day file
            ("f", "memory/d.md", "chat", "not a time")]
    timeline = ranking.Timeline(rows)
    assert timeline.neighbours("a") == ["b"] and timeline.neighbours("b") == ["a"]
    assert timeline.neighbours("c") == [] and timeline.neighbours("d") == [] and timeline.neighbours("e") == []


def conversation(root: Path) -> None:
    turns = [
        "Caroline: I went to the LGBTQ support group yesterday and it was powerful.",
        "Melanie: That sounds amazing! How did it feel?",
        "Caroline: Honestly it made me want to study counseling next year.",
        "Melanie: By the way, I painted a lake sunrise last week.",
    ]
    for n, text in enumerate(turns):
        append_note(root / "memory", text, "chat", when=T0 + n * timedelta(seconds=30))
    append_note(root / "memory", "Caroline: The support group meets every Tuesday.", "chat",
                when=T0 + timedelta(days=60))
    append_note(root / "memory", "Melanie: Another sunrise painting, this time over the sea.", "chat",
                when=datetime(2023, 10, 13, 10, 0, tzinfo=timezone.utc))


def test_the_reply_to_the_turn_that_names_the_topic_is_found(tmp_path: Path) -> None:
    conversation(tmp_path)
    answer = RagIndex(tmp_path).query("Was the LGBTQ support group any good?", k=5)
    first = answer["hits"][0]
    assert "LGBTQ" in first["text"]
    reply = next(h for h in answer["hits"] if "How did it feel" in h["text"])  # no word in common with the question
    assert reply["channels"] == {} and reply["boosts"]["neighbour"]["of"] == first["id"]
    assert reply["score"] == pytest.approx(answer["weights"]["neighbour"] * first["score"], abs=1e-5)
    assert all("lake sunrise" not in h["text"] for h in answer["hits"])  # two turns away: not a neighbour
    assert answer["weights"]["neighbour"] > 0 and "neighbour" in answer["fusion"]


def test_a_note_from_the_month_the_question_names_wins(tmp_path: Path) -> None:
    conversation(tmp_path)
    rag = RagIndex(tmp_path)
    plain = rag.query("sunrise painting", k=3)
    dated = rag.query("What sunrise painting did Melanie share in October 2023?", k=3)
    assert dated["date_window"].startswith("2023-10-01..2023-10-31")
    assert "over the sea" in dated["hits"][0]["text"] and dated["hits"][0]["boosts"]["date"] > 0
    assert all("date" not in h.get("boosts", {}) for h in plain["hits"]) and "date_window" not in plain


def test_the_timeline_follows_new_notes(tmp_path: Path) -> None:
    conversation(tmp_path)
    rag = RagIndex(tmp_path)
    rag.query("support group")
    append_note(tmp_path / "memory", "Melanie: The kayak trip starts at dawn.", "chat",
                when=T0 + timedelta(days=60, seconds=30))
    hits = rag.query("When does the support group meet?", k=5)["hits"]
    kayak = next(h for h in hits if "kayak" in h["text"])
    assert set(kayak["channels"]) == set() and kayak["boosts"]["neighbour"]["added"] > 0


def test_the_vector_weight_falls_as_the_keyword_hits_cover_the_question() -> None:
    adaptive = ranking.Weights(0.4, 0.6, 0.6, 0.6, vector_covered=0.1)
    assert adaptive.for_coverage(0.0).vector == 0.6 and adaptive.for_coverage(0.0).keyword == 0.4
    assert adaptive.for_coverage(1.0).vector == 0.1 and adaptive.for_coverage(1.0).keyword == 0.9
    assert adaptive.for_coverage(0.5).vector == pytest.approx(0.35)
    assert adaptive.for_coverage(7.0).vector == 0.1  # clamped
    fixed = ranking.Weights(0.7, 0.3, 0.6, 0.6)
    assert fixed.for_coverage(1.0) is fixed
    assert ranking.Weights(1.0, 0.0, 0.6, 0.6, 0.1).for_coverage(0.0).vector == 0.0  # keyword-only stays so
    assert adaptive.for_coverage(0.5).as_dict().keys() == {"keyword", "vector", "date", "neighbour"}
    assert adaptive.as_dict()["vector_covered"] == 0.1


def test_keyword_coverage_is_the_best_share_of_question_terms_in_one_of_the_first_rows() -> None:
    terms = ["support", "group", "caroline"]
    assert ranking.keyword_coverage(terms, ["caroline went", "support group caroline meet"]) == 1.0
    assert ranking.keyword_coverage(terms, ["caroline went", "group"]) == pytest.approx(1 / 3)
    assert ranking.keyword_coverage(terms, []) == 0.0 and ranking.keyword_coverage([], ["x"]) == 0.0
    later = ["x", "y", "z", "support group caroline"]  # past the first COVERAGE_ROWS rows: not counted
    assert ranking.keyword_coverage(terms, later) == 0.0


def test_rag_query_weighs_the_vector_channel_by_how_well_keywords_cover_the_question(tmp_path: Path) -> None:
    """On a real index with the local embedder: a question said in the notes' own words leans on the
    keyword channel, a paraphrase on the vector channel, and the answer says which weights it used."""
    from mnemara.memory.search.embedders import VECTOR_WEIGHTS, local_embedder

    conversation(tmp_path)
    rag = RagIndex(tmp_path, embedder=local_embedder())
    top, covered = VECTOR_WEIGHTS[local_embedder().model]
    said = rag.query("Caroline LGBTQ support group", k=3)
    assert said["keyword_coverage"] == 1.0 and said["weights"]["vector"] == pytest.approx(covered)
    assert said["weights"]["keyword"] == pytest.approx(1 - covered)
    paraphrase = rag.query("meeting of queer peers for help", k=3)
    assert paraphrase["keyword_coverage"] < 1.0 and paraphrase["weights"]["vector"] > covered
    assert paraphrase["weights"]["vector"] <= top
    keyword_only = RagIndex(tmp_path).query("Caroline LGBTQ support group", k=3)
    assert "keyword_coverage" not in keyword_only and keyword_only["weights"]["vector"] == 0.0
