"""The tour says what the defaults do (issue 27): recall's vectors come from the bundled local
embedder, so no step tells a new user that vectors need Ollama."""
from __future__ import annotations

from mnemara.core.config import Config
from mnemara.demo.script import STEPS
from mnemara.memory.search.embedders import EMBEDDERS


def test_the_recall_step_names_the_default_embedder_not_ollama() -> None:
    assert Config().rag_embedder == "local" and "local" in EMBEDDERS
    recall = next(step for step in STEPS if "rag_query" in step.intro)
    assert "bundled" in recall.intro and "local embedder" in recall.intro
    assert all("ollama" not in step.intro.lower() for step in STEPS)
