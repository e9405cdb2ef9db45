"""Keyword search in scripts written without spaces (issue 31): a Japanese sentence was one token,
so a question naming one word of it found nothing."""
from __future__ import annotations

from mnemara.core.config import Config
from mnemara.memory.notes import append_note
from mnemara.memory.search.rag import RagIndex
from mnemara.memory.search.tokenize import tokens
from tests.memory_support import make_instance


def test_a_sentence_without_spaces_is_cut_into_character_pairs() -> None:
    assert tokens("東京") == ["東京"] and tokens("東京都") == ["東京", "京都"]
    assert "設定" in tokens("v2の設定") and "v2" in tokens("v2の設定")
    assert {"inc", "4432", "inc4432"} <= set(tokens("INC-4432は解決済み"))


def test_keyword_search_finds_a_japanese_note_by_one_word_of_it() -> None:
    inst, _cfg = make_instance("cjk", rag_embedder="none", graph_enabled=False)
    append_note(inst.memory_dir, "本番サーバーは東京リージョンにあります。", "fact")
    append_note(inst.memory_dir, "請求書は毎月一日に送られます。", "fact")
    append_note(inst.memory_dir, "The deploy window opens at noon.", "fact")
    rag = RagIndex.for_instance(inst, Config.load(inst.config_path))
    hits = rag.query("東京のサーバー")["hits"]
    assert hits and hits[0]["text"].startswith("本番サーバー")
    assert rag.query("請求書")["hits"][0]["text"].startswith("請求書")
