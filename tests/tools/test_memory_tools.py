"""The memory tools through their ToolSpec handlers: write-to-all, degrade per backend, refusals."""
from __future__ import annotations

import subprocess
import time
import sys

import pytest

from mnemara.memory.notes import day_files, parse_file
from mnemara.memory.surfaces import backends_for, write_memory
from mnemara.context.tool_state import ToolState
from mnemara.tools import all_specs
from tests.conftest import ROOT, cli_env
from tests.memory_support import call, context, corrupt_folder, make_instance

MEMORY_TOOLS = {"wiki_read", "wiki_write", "wiki_list", "rag_index", "rag_query", "graph_add_node", "graph_add_edge",
                "graph_query", "graph_neighbors", "graph_match", "graph_shortest_path", "propose_role_amendment"}


def test_every_tool_is_registered_on_the_mnemara_server() -> None:
    specs = {s.name: s for s in all_specs()}
    assert MEMORY_TOOLS <= set(specs)
    assert specs["rag_query"].qualified_name == "mcp__mnemara__rag_query"


def test_tools_follow_the_backend_switches() -> None:
    from mnemara.core.config import Config
    from mnemara.tools import enabled_specs

    names = {s.name for s in enabled_specs(Config(rag_enabled=False, graph_enabled=False))}
    assert "rag_query" not in names and "graph_query" not in names and "wiki_write" in names


def test_listing_tools_imports_no_backend() -> None:
    code = ("import sys; from mnemara.tools import all_specs; all_specs(); "
            "print(sorted(m for m in ('lancedb', 'kuzu', 'pyarrow') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=cli_env(), cwd=str(ROOT))
    assert out.stdout.strip() == "[]", out.stderr


def test_wiki_tools_round_trip_index_and_link_tags() -> None:
    inst, cfg = make_instance()
    ctx = context(inst, cfg)
    page = "---\ntags: [Ops, k8s]\n---\n# Runbook\nRestart the zeppelin daemon gently.\n"
    res = call(ctx, "wiki_write", path="ops/runbook", content=page)
    assert res["ok"] and res["path"] == "wiki/ops/runbook.md" and res["tags"] == ["Ops", "k8s"]
    assert res["rag"] == {"ok": True, "added": 1, "removed": 0} and res["graph"]["edges"] == 2
    assert call(ctx, "wiki_read", path="ops/runbook")["content"] == page
    assert call(ctx, "wiki_list", prefix="ops")["pages"] == ["ops/runbook"]
    assert call(ctx, "rag_query", question="zeppelin")["hits"][0]["source"] == "wiki/ops/runbook.md"
    near = call(ctx, "graph_neighbors", node_id="wiki:ops/runbook")
    assert sorted(n["node"]["id"] for n in near["neighbors"]) == ["tag:k8s", "tag:ops"]
    # replacing the page with other tags moves the edges
    call(ctx, "wiki_write", path="ops/runbook", content="---\ntags: [k8s]\n---\nshorter\n")
    near = call(ctx, "graph_neighbors", node_id="wiki:ops/runbook")
    assert [n["node"]["id"] for n in near["neighbors"]] == ["tag:k8s"]
    assert call(ctx, "rag_query", question="zeppelin")["hits"] == []


def test_write_memory_reaches_every_surface() -> None:
    inst, cfg = make_instance()
    state = ToolState()
    res = write_memory(inst, cfg, "Loader imports must stay lazy", "wiki/patterns/loader_traps",
                       applies_to=["Loader", "CLI startup"], state=state)
    assert res["ok"] and res["wiki"] == "wiki/patterns/loader_traps.md"
    assert (inst.wiki_dir / "patterns" / "loader_traps.md").read_text() == "Loader imports must stay lazy\n"
    atom = parse_file(day_files(inst.memory_dir)[0])[0]
    assert res["atom_id"] == atom.id and atom.category == "wiki/patterns/loader_traps"
    assert res["rag"]["ok"] and res["rag"]["added"] == 2  # the note and the wiki page
    assert res["graph"] == {"ok": True, "node": f"note:{atom.id}", "edges": 3}
    ctx = context(inst, cfg)
    ctx.state = state
    near = call(ctx, "graph_neighbors", node_id=f"note:{atom.id}")
    assert sorted(n["node"]["id"] for n in near["neighbors"]) == ["entity:cli startup", "entity:loader",
                                                                  "wiki:patterns/loader_traps"]
    hits = call(ctx, "rag_query", question="loader imports lazy", k=5)["hits"]
    assert {h["kind"] for h in hits} == {"memory", "wiki"}


@pytest.mark.parametrize("kwargs,message", [
    ({"text": "  "}, "empty"), ({"text": "x", "category": "bad category!"}, "invalid category"),
    ({"text": "x", "category": "wiki/../escape"}, "invalid category"),
    ({"text": "x", "category": "wiki/.hidden"}, "invalid wiki path"),
    ({"text": "x", "applies_to": [1, 2]}, "applies_to"), ({"text": "x", "applies_to": ["a"] * 0 + ["n"] * 1 + [str(i) for i in range(25)]}, "at most"),
])
def test_write_memory_refusals_write_nothing(kwargs: dict, message: str) -> None:
    from mnemara.core.errors import UsageError

    inst, cfg = make_instance()
    with pytest.raises(UsageError, match=message):
        write_memory(inst, cfg, **kwargs)
    assert day_files(inst.memory_dir) == [] and list(inst.wiki_dir.rglob("*.md")) == []


def test_corrupt_lancedb_degrades_rag_tools_but_writes_succeed() -> None:
    inst, cfg = make_instance()
    ctx = context(inst, cfg)
    assert call(ctx, "rag_index", text="warm the index up")["ok"]
    corrupt_folder(inst.index_dir)
    fresh = context(inst, cfg)
    for name, args in (("rag_query", {"question": "warm"}), ("rag_index", {"text": "more"})):
        res = call(fresh, name, **args)
        assert res["ok"] is False and res["error"].startswith("RAG backend unavailable: ")
    res = write_memory(inst, cfg, "still remembered", "insight", state=fresh.state)
    assert res["ok"] and res["rag"]["ok"] is False and res["rag"]["error"].startswith("RAG backend unavailable: ")
    assert "still remembered" in day_files(inst.memory_dir)[0].read_text()
    wiki = call(fresh, "wiki_write", path="p", content="page text")
    assert wiki["ok"] and wiki["rag"]["ok"] is False and (inst.wiki_dir / "p.md").exists()
    assert "rag_unavailable" in inst.debug_log_path.read_text()


def test_corrupt_kuzu_degrades_graph_tools_but_writes_succeed() -> None:
    inst, cfg = make_instance()
    ctx = context(inst, cfg)
    assert call(ctx, "graph_add_node", label="entity", id="entity:a")["ok"]
    backends_for(inst, cfg, ctx.state).release()  # the panel that wrote it is gone
    ctx.state = ToolState()
    corrupt_folder(inst.graph_dir)
    fresh = context(inst, cfg)
    for name, args in (("graph_add_node", {"label": "x"}), ("graph_neighbors", {"node_id": "entity:a"}),
                       ("graph_query", {"cypher": "MATCH (n:Node) RETURN n"}), ("graph_match", {"pattern_json": "{\"label\": \"x\"}"}),
                       ("graph_shortest_path", {"from_id": "a", "to_id": "b"}),
                       ("graph_add_edge", {"from_id": "a", "to_id": "b", "relationship": "r"})):
        res = call(fresh, name, **args)
        assert res["ok"] is False and res["error"].startswith("Graph backend unavailable: "), (name, res)
    res = write_memory(inst, cfg, "linked note", "insight", applies_to="Loader", state=fresh.state)
    assert res["ok"] and res["graph"]["error"].startswith("Graph backend unavailable: ")
    assert "linked note" in day_files(inst.memory_dir)[0].read_text()
    wiki = call(fresh, "wiki_write", path="p", content="---\ntags: [a]\n---\nbody")
    assert wiki["ok"] and wiki["graph"]["ok"] is False and (inst.wiki_dir / "p.md").exists()


def test_backends_switched_off() -> None:
    inst, cfg = make_instance(rag_enabled=False, graph_enabled=False)
    ctx = context(inst, cfg)
    assert call(ctx, "rag_query", question="x") == {"ok": False, "error": "RAG backend unavailable: rag_enabled is false in config.json"}
    assert call(ctx, "graph_add_node", label="x")["error"] == "Graph backend unavailable: graph_enabled is false in config.json"
    res = write_memory(inst, cfg, "note", "insight", applies_to="x", state=ctx.state)
    assert res["ok"] and res["rag"]["skipped"] and res["graph"]["skipped"]
    assert not (inst.graph_dir / "graph.kuzu").exists() and not (inst.index_dir / "chunks.lance").exists()


def test_tool_argument_refusals() -> None:
    inst, cfg = make_instance()
    ctx = context(inst, cfg)
    cases = [
        ("wiki_read", {}, "missing argument 'path'"), ("wiki_read", {"path": 3}, "must be of type str"),
        ("wiki_write", {"path": "../x", "content": "y"}, "inside wiki"),
        ("wiki_write", {"path": "p", "content": "y", "mode": "merge"}, "mode"),
        ("rag_query", {"question": "x", "k": "5"}, "must be of type int"), ("rag_query", {"question": "x", "k": True}, "int"),
        ("graph_match", {"pattern_json": "{not json"}, "not valid JSON"),
        ("graph_query", {"cypher": "MATCH (n:Node) DELETE n"}, "read-only"),
        ("propose_role_amendment", {"title": "t", "rationale": " ", "proposed_text": "x"}, "rationale is empty"),
    ]
    for name, args, message in cases:
        res = call(ctx, name, **args)
        assert res["ok"] is False and message in res["error"], (name, res)
    assert list(inst.wiki_dir.rglob("*.md")) == [] and list(inst.role_proposals_dir.iterdir()) == []


def test_graph_tools_release_the_database_when_idle() -> None:
    inst, cfg = make_instance()
    ctx = context(inst, cfg)
    backends = backends_for(inst, cfg, ctx.state)
    backends.release_after = 60
    call(ctx, "graph_add_node", label="entity", id="a")
    call(ctx, "graph_add_node", label="entity", id="b")
    assert call(ctx, "graph_add_edge", from_id="a", to_id="b", relationship="r")["created"]
    probe = ("import sys; from mnemara.memory.graph.store import Graph, GraphUnavailable\n"
             "try:\n    print(Graph(sys.argv[1], probe=False).shortest_path('a', 'b')['length'])\n"
             "except GraphUnavailable as exc:\n    print('unavailable', exc)")

    def other_process() -> str:  # e.g. `mnemara replay` while the panel runs
        return subprocess.run([sys.executable, "-c", probe, str(inst.graph_dir)], capture_output=True, text=True,
                              env=cli_env(), cwd=str(ROOT), timeout=60).stdout.strip()

    assert "lock" in other_process()  # a burst of calls keeps the database open...
    backends.release_after = 0.3
    assert call(ctx, "graph_neighbors", node_id="a")["neighbors"][0]["node"]["id"] == "b"
    deadline = time.monotonic() + 30
    while (answer := other_process()) != "1":  # ...and releases it once the agent goes quiet
        assert "lock" in answer and time.monotonic() < deadline
        time.sleep(0.3)
    assert call(ctx, "graph_shortest_path", from_id="b", to_id="a")["found"]
    assert call(ctx, "graph_query", cypher="MATCH (n:Node) RETURN count(n) AS n")["rows"] == [[2]]
    assert call(ctx, "graph_match", pattern_json={"label": "entity"})["nodes"][0]["id"] == "a"


def test_propose_role_amendment_never_touches_the_role_doc(tmp_path) -> None:
    role = tmp_path / "role.md"
    role.write_text("# Role\nBe terse.\n")
    inst, cfg = make_instance(role_doc_path=str(role))
    res = call(context(inst, cfg), "propose_role_amendment", title="Halt on polling!", rationale="Saw loops",
               proposed_text="Halt after 3 identical calls.")
    assert res["ok"] and res["path"].startswith("role_proposals/") and res["path"].endswith("_halt-on-polling.md")
    text = (inst.root / res["path"]).read_text()
    assert "status: pending" in text and "Halt after 3 identical calls." in text
    assert role.read_text() == "# Role\nBe terse.\n"
