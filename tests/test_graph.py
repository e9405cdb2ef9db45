"""The property graph on real Kuzu: nodes, edges, traversal, guarded Cypher, corrupt and locked files."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mnemara.errors import UsageError
from mnemara.memory.graph import Graph, GraphUnavailable


@pytest.fixture
def graph(tmp_path: Path):
    g = Graph(tmp_path / "graph")
    yield g
    g.close()


def chain(g: Graph, ids: str) -> None:
    for node in ids:
        g.add_node("thing", {"name": node}, node)
    for a, b in zip(ids, ids[1:]):
        g.add_edge(a, b, "next")


def test_nodes_and_edges_upsert_without_duplicates(graph: Graph) -> None:
    made = graph.add_node("entity", {"name": "lease"}, "entity:lease")
    assert made["created"] and made["node"]["properties"] == {"name": "lease"} and made["node"]["created_at"]
    again = graph.add_node("component", {"name": "lease", "v": 2}, "entity:lease")
    assert not again["created"] and again["node"]["label"] == "component"
    auto = graph.add_node("topic", {"name": "ops"})
    assert auto["node"]["id"].startswith("topic:")
    first = graph.add_edge("entity:lease", auto["node"]["id"], "part_of", {"w": 1})
    second = graph.add_edge("entity:lease", auto["node"]["id"], "part_of", {"w": 2})
    assert first["created"] and not second["created"] and first["edge"]["id"] == second["edge"]["id"]
    assert graph.counts() == {"nodes": 2, "edges": 1}
    assert graph.match({"relationship": "part_of"})["matches"][0]["edge"]["properties"] == {"w": 2}


def test_neighbors_by_depth_and_relationship(graph: Graph) -> None:
    chain(graph, "abcde")
    graph.add_node("thing", {}, "x")
    graph.add_edge("x", "c", "other")
    one = graph.neighbors("c")
    assert sorted(n["node"]["id"] for n in one["neighbors"]) == ["b", "d", "x"]
    via = {n["node"]["id"]: n["via"] for n in one["neighbors"]}
    assert via["b"] == {"edge": via["b"]["edge"], "relationship": "next", "from": "b", "to": "c"}
    two = graph.neighbors("c", depth=2, relationship="next")
    assert {n["node"]["id"]: n["depth"] for n in two["neighbors"]} == {"b": 1, "d": 1, "a": 2, "e": 2}
    assert graph.neighbors("a", depth=5, limit=2)["truncated"] is True


def test_shortest_path_and_no_path(graph: Graph) -> None:
    chain(graph, "abcd")
    graph.add_node("thing", {}, "lonely")
    path = graph.shortest_path("d", "a")
    assert path["found"] and path["length"] == 3 and [n["id"] for n in path["nodes"]] == ["d", "c", "b", "a"]
    assert path["edges"][0] == {"id": path["edges"][0]["id"], "relationship": "next", "from": "c", "to": "d",
                                "properties": {}}
    assert graph.shortest_path("a", "d", max_depth=2)["found"] is False
    assert graph.shortest_path("a", "lonely") == {"found": False, "length": None, "nodes": [], "edges": []}
    assert graph.shortest_path("a", "a")["length"] == 0


def test_match_nodes_and_edges_by_properties(graph: Graph) -> None:
    graph.add_node("entity", {"name": "lease", "team": "core"}, "entity:lease")
    graph.add_node("entity", {"name": "cache", "team": "edge"}, "entity:cache")
    graph.add_node("tag", {"name": "ops"}, "tag:ops")
    graph.add_edge("entity:lease", "tag:ops", "tagged")
    assert [n["id"] for n in graph.match({"label": "entity", "properties": {"team": "core"}})["nodes"]] == ["entity:lease"]
    assert [n["id"] for n in graph.match({"node": {"label": "entity"}})["nodes"]] == ["entity:cache", "entity:lease"]
    found = graph.match({"from": {"label": "entity"}, "relationship": "tagged", "to": {"id": "tag:ops"}})["matches"]
    assert [(m["from"]["id"], m["to"]["id"]) for m in found] == [("entity:lease", "tag:ops")]
    assert graph.match({"label": "entity"}, limit=1)["truncated"] is True


def test_query_is_parameterised_and_read_only_by_default(graph: Graph) -> None:
    chain(graph, "ab")
    res = graph.query("MATCH (n:Node) WHERE n.id = $id RETURN n, n.label AS label", {"id": "a"})
    assert res["columns"] == ["n", "label"] and res["rows"][0][1] == "thing"
    assert res["rows"][0][0]["properties"] == {"name": "a"} and "_id" not in res["rows"][0][0]
    with pytest.raises(UsageError, match="read-only"):
        graph.query("CREATE (n:Node {id: 'z', label: 'x', properties: '{}', created_at: ''})")
    with pytest.raises(UsageError, match="read-only"):
        graph.query("MATCH (n:Node) DETACH DELETE n")
    for escape in ("COMMIT", "MATCH (n) RETURN n; CREATE (m:Node {id:'q'})", "ROLLBACK",
                   "COPY Node TO '/tmp/out.csv'", "LOAD FROM '/etc/passwd' RETURN *", "DROP TABLE Edge",
                   "ATTACH '/tmp/other.kuzu' AS o"):
        with pytest.raises(UsageError):
            graph.query(escape)
    assert graph.counts() == {"nodes": 2, "edges": 1}
    assert graph.query("MATCH (n:Node) WHERE n.id = 'a;b' RETURN count(n)")["rows"] == [[0]]  # ';' inside a string
    written = graph.query("MATCH (n:Node {id: $id}) DETACH DELETE n", {"id": "a"}, allow_write=True)
    assert written["rows"] == [] and graph.counts() == {"nodes": 1, "edges": 0}
    with pytest.raises(UsageError, match="Cypher error"):
        graph.query("MATCH (n RETURN n")
    with pytest.raises(UsageError, match="params"):
        graph.query("MATCH (n:Node) RETURN n", {"bad key": 1})  # type: ignore[dict-item]


@pytest.mark.parametrize("call", [
    lambda g: g.add_node(""), lambda g: g.add_node("x" * 65), lambda g: g.add_node("ok", properties=[1]),
    lambda g: g.add_node("ok", node_id="a\nb"), lambda g: g.add_edge("nope", "also", "r"),
    lambda g: g.neighbors("missing"), lambda g: g.neighbors("a", depth=0), lambda g: g.neighbors("a", depth=9),
    lambda g: g.shortest_path("a", "missing"), lambda g: g.match({}), lambda g: g.match({"colour": "red"}),
    lambda g: g.match({"from": {"bogus": 1}}), lambda g: g.query(""),
])
def test_bad_input_is_refused_without_changes(graph: Graph, call) -> None:
    graph.add_node("thing", {}, "a")
    with pytest.raises(UsageError):
        call(graph)
    assert graph.counts() == {"nodes": 1, "edges": 0}


def test_data_survives_reopen(tmp_path: Path) -> None:
    g = Graph(tmp_path / "graph")
    chain(g, "ab")
    g.close()
    again = Graph(tmp_path / "graph")
    assert again.counts() == {"nodes": 2, "edges": 1}
    again.close()


@pytest.mark.parametrize("damage", ["truncate_junk", "middle_junk", "folder"])
def test_corrupt_database_file_is_reported_not_crashing(tmp_path: Path, damage: str) -> None:
    g = Graph(tmp_path / "graph")
    chain(g, "abc")
    g.close()
    db = tmp_path / "graph" / "graph.kuzu"
    if damage == "truncate_junk":
        db.write_bytes(b"garbage" * 10)
    elif damage == "middle_junk":
        with open(db, "r+b") as fh:  # this kind of damage makes Kuzu segfault when opened in-process
            fh.seek(4096)
            fh.write(bytes((i * 97 + 13) % 256 for i in range(100_000)))
    else:
        db.unlink()
        db.mkdir()
    broken = Graph(tmp_path / "graph")
    with pytest.raises(GraphUnavailable) as info:
        broken.add_node("thing", {}, "z")
    assert str(info.value)


def test_database_held_by_another_process_is_reported(tmp_path: Path) -> None:
    g = Graph(tmp_path / "graph")
    chain(g, "ab")
    g.close()
    holder = subprocess.Popen(
        [sys.executable, "-c", "import kuzu, sys; db = kuzu.Database(sys.argv[1]); kuzu.Connection(db); "
         "print('held', flush=True); sys.stdin.read()", str(tmp_path / "graph" / "graph.kuzu")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(GraphUnavailable, match="lock"):
            Graph(tmp_path / "graph").neighbors("a")
    finally:
        holder.communicate("", timeout=30)
    assert Graph(tmp_path / "graph").neighbors("a")["neighbors"][0]["node"]["id"] == "b"


def test_missing_kuzu_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "kuzu", None)
    with pytest.raises(GraphUnavailable, match="cannot import kuzu"):
        Graph(tmp_path / "graph").add_node("x")
