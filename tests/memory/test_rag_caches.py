"""The per-query caches of RagIndex (table names, parsed manifest, lock-free catch-up) never hide a change."""
from __future__ import annotations

import os
import time
from datetime import datetime, timezone
from pathlib import Path

from mnemara.memory.notes import append_note, write_note
from mnemara.memory.search.embed import OllamaEmbedder
from mnemara.memory.search.rag import MANIFEST, RagIndex
from mnemara.testing.ollama import FakeOllama


def settle(*paths: Path) -> None:
    """Date ``paths`` 10 s back, as if written long ago, so the caches may keep what they read."""
    past = time.time() - 10
    for path in paths:
        os.utime(path, (past, past))


def warm(rag: RagIndex, root: Path, question: str) -> list[str]:
    rag.query(question)  # brings the index up to date first
    settle(root / "index", root / "index" / MANIFEST)
    rag.query(question)  # reads and keeps the table names and the manifest
    texts = [h["text"] for h in rag.query(question)["hits"]]
    assert rag._names_cache is not None and rag._manifest_cache is not None  # the next query starts warm
    return texts


def test_note_appended_or_day_file_edited_after_a_query_is_found_by_the_next(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    old = write_note(memory, "The ferry to Skye leaves at nine", "travel",
                     datetime(2020, 3, 4, 8, 0, tzinfo=timezone.utc)).file
    append_note(memory, "Lunch is at the canteen on floor two", "office")
    settle(old)
    rag = RagIndex(tmp_path)
    assert rag.query("ferry Skye")["hits"][0]["text"] == "The ferry to Skye leaves at nine"

    assert warm(rag, tmp_path, "canteen") == ["Lunch is at the canteen on floor two"]
    append_note(memory, "The walrus server restarts on Mondays", "ops")
    assert [h["text"] for h in rag.query("walrus restarts")["hits"]] == ["The walrus server restarts on Mondays"]

    warm(rag, tmp_path, "ferry")
    text = old.read_text(encoding="utf-8")
    edited = text.replace("Skye leaves at nine", "Mull leaves at nine")  # same size: only the mtime moves
    assert len(edited) == len(text) and edited != text
    old.write_text(edited, encoding="utf-8")
    assert [h["text"] for h in rag.query("ferry Mull")["hits"]] == ["The ferry to Mull leaves at nine"]
    assert rag.query("Skye")["hits"] == []

    warm(rag, tmp_path, "ferry")
    old.unlink()  # a day file deleted by hand takes its notes with it
    assert rag.query("ferry")["hits"] == []


def test_index_rebuilt_by_another_instance_is_seen_with_caches_warm(tmp_path: Path) -> None:
    append_note(tmp_path / "memory", "Backups run nightly to the cold store", "ops")
    rag = RagIndex(tmp_path)
    assert warm(rag, tmp_path, "backups") == ["Backups run nightly to the cold store"]
    assert "chunks" in rag._open_tables  # the open table is kept too
    other = RagIndex(tmp_path)
    other.index_text("The otter queue drains every hour")  # rows written through another connection
    assert [h["text"] for h in rag.query("otter queue")["hits"]] == ["The otter queue drains every hour"]
    warm(rag, tmp_path, "backups")
    other.rebuild()  # drops and remakes every table under index/
    other.index_text("The badger dashboard lives on port 8123")
    assert [h["text"] for h in rag.query("badger dashboard")["hits"]] == ["The badger dashboard lives on port 8123"]
    assert rag.query("backups")["hits"][0]["text"] == "Backups run nightly to the cold store"


def test_vector_rows_kept_between_queries_follow_every_write(tmp_path: Path) -> None:
    append_note(tmp_path / "memory", "The heron feeder is refilled on Sundays", "home")
    with FakeOllama() as fake:
        rag = RagIndex(tmp_path, embedder=OllamaEmbedder(fake.url(), "m"))
        first = rag.query("heron feeder")["hits"][0]
        assert "vector" in first["channels"] and rag._rows_cache is not None
        other = RagIndex(tmp_path, embedder=OllamaEmbedder(fake.url(), "m"))
        other.index_text("The heron feeder moved to the east fence", kind="manual")
        hits = rag.query("heron feeder")["hits"]
        moved = [h for h in hits if h["text"] == "The heron feeder moved to the east fence"]
        assert moved and "vector" in moved[0]["channels"]
        (tmp_path / "memory" / first["path"].split("/", 1)[1]).write_text("# gone\n", encoding="utf-8")
        assert all("Sundays" not in h["text"] for h in rag.query("heron feeder")["hits"])


def test_subject_words_closest_is_the_idf_ranking_over_the_rarest_words_with_ties_by_id() -> None:
    """The same-subject lookup scores every note at once (numpy); it must name the notes the plain
    definition names, in the same order: IDF-weighted shared rarest words, then id."""
    import math
    import random

    from mnemara.memory.search.rag import _SubjectWords

    rng = random.Random(7)
    vocab = [f"w{i}" for i in range(200)]
    ids = [f"note:{rng.randrange(10**5):05d}-{i}" for i in range(800)]
    texts = [" ".join(rng.choices(vocab, weights=[1 / (k + 1) for k in range(200)], k=rng.randint(0, 10)))
             for _ in ids]
    words = _SubjectWords(ids, texts, texts)

    def plain(ident: str, n: int) -> list[str]:
        mine = words.words.get(ident, frozenset())
        shared = [w for w in mine if len(words.holders[w]) > 1]  # a word only this note holds finds nothing
        rare = sorted(shared, key=lambda w: (len(words.holders[w]), w))[:words.RAREST]
        score: dict[str, float] = {}
        for word in rare:
            weight = math.log((len(words.words) + 1) / (1 + len(words.holders[word]))) + 1.0
            for other in words.holders[word]:
                if other != ident:
                    score[other] = score.get(other, 0.0) + weight
        return sorted(score, key=lambda other: (-score[other], other))[:n]

    assert any(len(plain(i, 12)) == 12 for i in ids) and any(not plain(i, 12) for i in ids)
    for ident in [*ids, "note:absent"]:
        assert words.closest(ident, 12) == plain(ident, 12), ident
    assert words.closest(ids[0], 0) == []
