"""Replay with the real optional backends: the Kuzu graph (read-only) and an Ollama embedder (loopback fake)."""
from __future__ import annotations

import json
import sys
from datetime import datetime, timezone

from mnemara.core.config import Config, update_config
from mnemara.store.instance import Instance
from mnemara.memory.graph.stamp import stamp_path
from mnemara.memory.surfaces import write_memory
from mnemara.replay import run_replay
from mnemara.replay.backends import default_backends
from mnemara.testing.ollama import FakeOllama

from tests.conftest import run_cli
from replay_helpers import LEASE, POLLING, tree_hash


def _graph_instance() -> Instance:
    inst = Instance.create("graphy")
    config = update_config(inst.config_path, rag_enabled=False)
    for text in LEASE:
        result = write_memory(inst, config, text, "insight", applies_to=["server.py", "HAProxy"])
        assert result["graph"]["ok"] is True, result
    write_memory(inst, config, POLLING[0], "self_observation", applies_to=["ci"])
    return inst


def test_graph_entities_are_read_without_writing_anything():
    inst = _graph_instance()
    embed, lookup = default_backends(inst)
    assert embed is None and lookup is not None  # rag off; graph on
    before = tree_hash(inst.root)
    plan = run_replay(inst, entity_lookup=lookup)
    assert tree_hash(inst.root) == before  # the graph file was opened read-only
    assert plan.graph_status == "graph used (7 applies_to edges)"
    lease = plan.patterns[0]
    assert lease.augmentation.entities == [("HAProxy", 3), ("server.py", 3)]


def test_entities_survive_archiving_that_moves_byte_offsets():
    inst = _graph_instance()
    config = Config.load(inst.config_path)
    write_memory(inst, config, LEASE[0] + " Again.", "insight")  # near-duplicate, archived below
    _, lookup = default_backends(inst)
    run_replay(inst, entity_lookup=lookup, apply=True)
    plan = run_replay(inst, entity_lookup=lookup)
    assert plan.patterns and ("server.py", 3) in plan.patterns[0].augmentation.entities


_spawns: list[str] | None = None
_hooked: list[bool] = []


def _audit(event: str, args: tuple) -> None:
    if event == "subprocess.Popen" and _spawns is not None:
        _spawns.append(str(args[0]))


def _replay_spawning(inst: Instance) -> tuple[str, list[str]]:
    """Replay's graph status and the processes it started."""
    global _spawns
    if not _hooked:  # hooks cannot be removed: added once, on first use; it records only while _spawns is a list
        sys.addaudithook(_audit)
        _hooked.append(True)
    _, lookup = default_backends(inst)
    _spawns = []
    try:
        plan = run_replay(inst, entity_lookup=lookup)
        return plan.graph_status, _spawns
    finally:
        _spawns = None


def test_a_graph_unchanged_since_a_clean_close_is_read_without_a_child_process():
    inst = _graph_instance()
    status, spawned = _replay_spawning(inst)
    assert status == "graph used (7 applies_to edges)"
    assert spawned == [], "the file is as the last write_memory closed it: read in-process"
    stamp_path(inst.graph_dir / "graph.kuzu").unlink()  # e.g. the writer died before closing
    status, spawned = _replay_spawning(inst)
    assert status == "graph used (7 applies_to edges)"
    assert spawned == [sys.executable], "no clean-close stamp: read by a child process that may crash"


def test_a_corrupt_graph_degrades_to_note_text():
    inst = _graph_instance()
    (inst.graph_dir / "graph.kuzu").write_bytes(b"this is not a kuzu database" * 100)
    _, lookup = default_backends(inst)
    plan = run_replay(inst, entity_lookup=lookup)
    assert plan.graph_status.startswith("graph unavailable: ")
    assert plan.counts["patterns"] == 1 and plan.patterns[0].augmentation.entities == []


def test_graph_switched_off_is_not_opened():
    inst = _graph_instance()
    update_config(inst.config_path, graph_enabled=False)
    _, lookup = default_backends(inst)
    assert lookup is None
    assert run_replay(inst).graph_status == "graph not used (no graph backend)"


def _cli_instance(url: str) -> Instance:
    inst = Instance.create("emb")
    update_config(inst.config_path, rag_embedder="ollama", rag_embed_url=url, graph_enabled=False)
    from mnemara.memory.notes import append_note

    for text in LEASE + POLLING:
        append_note(inst.memory_dir, text, "insight", when=datetime.now(timezone.utc))
    return inst


def test_cli_uses_the_configured_ollama_embedder():
    with FakeOllama() as fake:
        _cli_instance(fake.url("/api/embed"))
        out = run_cli("replay", "--instance", "emb", "--json")
        assert out.returncode == 0, out.stderr
        data = json.loads(out.stdout)
        assert data["similarity"] == "embeddings (nomic-embed-text)"
        assert len(fake.requests) >= 1


def test_cli_falls_back_to_tfidf_when_ollama_is_unreachable():
    _cli_instance("http://127.0.0.1:9/api/embed")
    out = run_cli("replay", "--instance", "emb")
    assert out.returncode == 0, out.stderr
    assert "similarity: lexical TF-IDF (embedder failed: cannot reach http://127.0.0.1:9/api/embed" in out.stdout
