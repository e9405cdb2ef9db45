"""The one tokenizer: Snowball stems, identifiers in every spelling, questions stripped of question words,
and an index built by another tokenizer version rebuilt from the files."""
from __future__ import annotations

import json
from pathlib import Path

from mnemara.memory.notes import append_note
from mnemara.memory.search import similarity
from mnemara.memory.search.rag import MANIFEST, RagIndex
from mnemara.memory.search.tokenize import VERSION, fts_text, query_tokens, stem, tokens


def test_inflections_meet_and_stop_words_go() -> None:
    assert {stem(w) for w in ("renews", "renewed", "renewal", "renewing")} == {"renew"}
    assert tokens("The painting was painted by the painters") == ["paint", "paint", "painter"]
    assert tokens("The") == [] and tokens("the", keep_stopwords=True) == ["the"]


def test_identifiers_are_spelled_every_way() -> None:
    for spelling in ("INC-4432", "INC 4432", "inc4432"):
        assert "inc4432" in tokens(spelling)
    assert {"inc", "4432"} <= set(tokens("INC-4432"))
    assert fts_text("LEASE_TIMEOUT_MS 30") == " ".join(tokens("LEASE_TIMEOUT_MS 30"))


def test_a_question_keeps_names_numbers_and_content_words_only() -> None:
    got = query_tokens("What kind of pottery did Melanie make in 2023? Tell me.")
    assert got == ["potteri", "melani", "make", "2023"]
    assert query_tokens("what did you do?") == []


def test_similarity_reexports_the_same_tokenizer() -> None:
    assert similarity.tokens is tokens and similarity.stem is stem and similarity.fts_text is fts_text


def test_an_index_of_another_tokenizer_version_is_rebuilt_from_the_files(tmp_path: Path) -> None:
    append_note(tmp_path / "memory", "Melanie painted a sunrise over the lake", "chat")
    rag = RagIndex(tmp_path)
    assert rag.query("paintings of sunrises")["hits"]
    manifest_path = tmp_path / "index" / MANIFEST
    manifest = json.loads(manifest_path.read_text())
    assert manifest["tokenizer"] == VERSION
    manifest["tokenizer"] = VERSION - 1  # as written by the tokenizer before this one
    manifest_path.write_text(json.dumps(manifest))
    table = rag._chunks()
    table.update(where="true", values={"fts_text": "stale"})  # what the old tokenizer stored
    fresh = RagIndex(tmp_path)
    hits = fresh.query("paintings of sunrises")["hits"]
    assert hits and "sunrise" in hits[0]["text"]
    assert json.loads(manifest_path.read_text())["tokenizer"] == VERSION


def test_a_short_form_also_gives_the_word_it_stands_for() -> None:
    """Round 2 of issue 40: "Primary DB" was a search miss for "the primary database"."""
    assert tokens("Primary DB is pg-main-01")[:3] == ["primari", "db", "databas"]
    assert set(tokens("the prod env config repo")) >= {"product", "environ", "configur", "repositori"}
    assert "databas" in tokens("DBs") and tokens("dev auth ops") == ["dev", "auth", "op"]  # several words each: as written


def test_a_note_written_with_a_short_form_is_found_by_the_word(tmp_path: Path) -> None:
    from mnemara.memory.notes import append_note
    from mnemara.memory.search.rag import RagIndex

    append_note(tmp_path / "memory", "Primary DB is pg-main-01 with 64 GB RAM.", "fact")
    append_note(tmp_path / "memory", "The staging cluster has 3 nodes.", "fact")
    hits = RagIndex(tmp_path).query("What is the primary database?", k=1)["hits"]
    assert hits and hits[0]["text"].startswith("Primary DB")
