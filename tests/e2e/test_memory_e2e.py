"""Memory tools end to end: scripted model -> real Claude CLI -> mnemara MCP server -> LanceDB/Kuzu/files."""
from __future__ import annotations

import json

import pytest

from mnemara.core.config import update_config
from mnemara.memory.notes import day_files, parse_file
from mnemara.testing.scripted_api import reply, tool_use
from mnemara.testing.ollama import FakeOllama
from tests.memory_support import corrupt_folder

pytestmark = pytest.mark.e2e
T = "mcp__mnemara__"


def result_of(request) -> tuple[dict, bool]:
    """The JSON answer and error flag of the newest tool_result a request carries."""
    block = request.tool_results()[-1]
    content = block.get("content")
    text = content if isinstance(content, str) else "".join(c.get("text", "") for c in content or [])
    answer, _ = json.JSONDecoder().raw_decode(text.strip())  # the CLI may append a system reminder
    return answer, bool(block.get("is_error"))


def test_wiki_write_then_hybrid_rag_query_and_write_memory_applies_to_then_graph_tools(scripted_api, session_factory):
    """Three turns of one session (one CLI start): RAG with and without an embedder, then the graph."""
    session = session_factory()
    with FakeOllama() as fake:
        update_config(session.instance.config_path, rag_embedder="ollama", rag_embed_url="http://127.0.0.1:9/api/embed")
        scripted_api.push(reply(tool_use(f"{T}rag_query", {"question": "zeppelin"})), reply("nothing yet"))
        session.turn("anything about zeppelins?")
        before, err = result_of(scripted_api.message_requests()[1])
        assert not err and before["hits"] == [] and before["degraded"].startswith("keyword-only: cannot reach")
        update_config(session.instance.config_path, rag_embed_url=fake.url("/api/embeddings"))  # followed live
        page = "---\ntags: [ops]\n---\n# Runbook\nRestart the zeppelin daemon with care.\n"
        scripted_api.push(
            reply(tool_use(f"{T}wiki_write", {"path": "ops/runbook", "content": page})),
            reply(tool_use(f"{T}rag_query", {"question": "how do I restart the zeppelin daemon?", "k": 3})),
            reply("done"))
        result = session.turn("write the runbook and check it is findable")
        assert result.ok and result.text == "done"
        requests = scripted_api.message_requests()[2:]
        written, err = result_of(requests[1])
        assert not err and written["path"] == "wiki/ops/runbook.md" and written["rag"]["added"] == 1
        assert written["graph"] == {"ok": True, "node": "wiki:ops/runbook", "edges": 1}
        found, err = result_of(requests[2])
        assert not err and "degraded" not in found and found["channels"] == ["keyword", "vector"]
        top = found["hits"][0]
        assert top["source"] == "wiki/ops/runbook.md" and set(top["channels"]) == {"keyword", "vector"}
        assert fake.texts_embedded() >= 2
    assert (session.instance.wiki_dir / "ops" / "runbook.md").read_text() == page

    # write_memory with applies_to, then every graph tool on what it linked
    update_config(session.instance.config_path, rag_embedder="local")  # back to the default embedder
    first = len(scripted_api.message_requests())  # req[n] below carries the answer of the n-th tool call
    scripted_api.push(
        reply(tool_use(f"{T}write_memory", {"text": "Lease renewals stall when the clock skews",
                                            "category": "insight", "applies_to": ["Lease manager", "NTP"]})),
        reply(tool_use(f"{T}graph_add_node", {"label": "service", "id": "service:billing", "properties": {"tier": 1}})),
        reply(tool_use(f"{T}graph_add_edge", {"from_id": "service:billing", "to_id": "entity:lease manager",
                                              "relationship": "depends_on"})),
        reply(tool_use(f"{T}graph_shortest_path", {"from_id": "service:billing", "to_id": "entity:ntp"})),
        reply(tool_use(f"{T}graph_query", {"cypher": "MATCH (n:Node) DETACH DELETE n"})),
        reply(tool_use(f"{T}graph_neighbors", {"node_id": "entity:ntp"})),
        reply("linked"))
    result = session.turn("remember this and link it")
    assert result.ok and result.text == "linked"
    req = scripted_api.message_requests()[first:]
    wrote, err = result_of(req[1])
    assert not err and wrote["graph"]["edges"] == 2 and wrote["rag"]["ok"]
    assert result_of(req[2])[0]["created"] and result_of(req[3])[0]["created"]
    path, err = result_of(req[4])
    assert not err and path["length"] == 3 and [n["id"] for n in path["nodes"]] == [
        "service:billing", "entity:lease manager", wrote["graph"]["node"], "entity:ntp"]
    refused, err = result_of(req[5])
    assert err and "read-only" in refused["error"]
    near, err = result_of(req[6])
    assert not err and [n["node"]["id"] for n in near["neighbors"]] == [wrote["graph"]["node"]]
    atoms = [a for f in day_files(session.instance.memory_dir) for a in parse_file(f)]
    assert [a.text for a in atoms] == ["Lease renewals stall when the clock skews"]


def test_broken_backends_fail_their_tools_not_the_note(scripted_api, session_factory):
    session = session_factory()
    inst = session.instance
    (inst.index_dir / "chunks.lance").mkdir(parents=True)
    (inst.index_dir / "chunks.lance" / "_versions").mkdir()
    (inst.index_dir / "chunks.lance" / "_versions" / "1.manifest").write_bytes(b"junk")
    (inst.graph_dir / "graph.kuzu").write_bytes(b"not a kuzu file" * 100)
    corrupt_folder(inst.index_dir)
    scripted_api.push(
        reply(tool_use(f"{T}rag_query", {"question": "anything"})),
        reply(tool_use(f"{T}graph_neighbors", {"node_id": "x"})),
        reply(tool_use(f"{T}write_memory", {"text": "kept despite broken backends", "applies_to": "x"},
                       id="toolu_provenance_e2e")),
        reply(tool_use(f"{T}propose_role_amendment", {"title": "Check backends", "rationale": "they broke",
                                                      "proposed_text": "Report broken backends once."})),
        reply("ok"))
    result = session.turn("try everything")
    assert result.ok
    req = scripted_api.message_requests()
    rag, err = result_of(req[1])
    assert err and rag["error"].startswith("RAG backend unavailable: ")
    graph, err = result_of(req[2])
    assert err and graph["error"].startswith("Graph backend unavailable: ")
    note, err = result_of(req[3])
    assert not err and note["ok"] and note["rag"]["ok"] is False and note["graph"]["ok"] is False
    assert "kept despite broken backends" in day_files(inst.memory_dir)[0].read_text()
    # provenance (issue 31): the note names the turn it came from and the tool call that wrote it
    from mnemara.memory import provenance

    entry = provenance.load(inst.memory_dir)[note["id"]]
    assert entry["by"] == "agent" and entry["tool_call"] == "toolu_provenance_e2e"
    turn = session.store.get(entry["turn_row"])
    assert turn.role == "user" and "try everything" in str(turn.blocks)
    proposal, err = result_of(req[4])
    assert not err and (inst.root / proposal["path"]).is_file()
