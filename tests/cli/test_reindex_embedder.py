"""`mnemara reindex` names the embedder it used (issue 31: in local mode it said "nomic-embed-text",
the Ollama model it never called)."""
from __future__ import annotations

from mnemara.memory.notes import append_note
from mnemara.memory.search.embedders import LOCAL_MODEL
from tests.conftest import run_cli
from tests.memory_support import make_instance


def test_reindex_names_the_local_model_it_embedded_with() -> None:
    inst, cfg = make_instance("rx", rag_embedder="local", graph_enabled=False)
    append_note(inst.memory_dir, "The deploy window opens at noon.", "fact")
    out = run_cli("reindex", "--instance", "rx")
    assert out.returncode == 0, out.stderr
    assert f"embedded with {LOCAL_MODEL}" in out.stdout and cfg.rag_embed_model not in out.stdout
