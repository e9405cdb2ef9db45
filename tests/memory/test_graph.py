"""The property graph on real Kuzu: nodes, edges, traversal, guarded Cypher, corrupt and locked files."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

import pytest

from mnemara.core.errors import UsageError
from mnemara.memory.graph.store import Graph, GraphUnavailable
from mnemara.memory.graph.stamp import STAMP_FILE, stamp_path, stamped_version, write_stamp


@pytest.fixture
def graph(tmp_path: Path):
    g = Graph(tmp_path / "graph")
    yield g
    g.close()


def kuzu_version() -> str:
    import kuzu  # here, not at the top: collecting this file must not import Kuzu into every worker

    return str(kuzu.__version__)


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
    assert stamped_version(db), "the clean close left a valid stamp: the damage below must still be caught"
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
    assert broken.probes == (0 if damage == "folder" else 1), "a changed file is probed despite the old stamp"
    with pytest.raises(GraphUnavailable) as again:
        broken.neighbors("a")
    assert str(again.value) == str(info.value)
    assert broken.probes == (0 if damage == "folder" else 1), "the same refused file is not probed twice"
    if damage == "truncate_junk":
        db.write_bytes(b"other garbage" * 10)
        with pytest.raises(GraphUnavailable):
            broken.neighbors("a")
        assert broken.probes == 2, "a file changed since the refusal is probed again"
    if damage != "folder":
        db.unlink()  # moved aside: a new graph starts
        assert broken.add_node("thing", {}, "z")["created"]


def test_a_probe_refused_for_the_lock_is_tried_again(tmp_path: Path) -> None:
    g = Graph(tmp_path / "graph")
    chain(g, "ab")
    g.close()
    db = tmp_path / "graph" / "graph.kuzu"
    stamp_path(db).unlink()  # so that the probe runs
    holder = subprocess.Popen(  # holds the lock Kuzu takes, without changing the file
        [sys.executable, "-c", "import fcntl, sys; f = open(sys.argv[1], 'r+b'); fcntl.lockf(f, fcntl.LOCK_EX); "
         "print('held', flush=True); sys.stdin.read()", str(db)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    waiting = Graph(tmp_path / "graph")
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(GraphUnavailable, match="lock"):
            waiting.neighbors("a")
    finally:
        holder.communicate("", timeout=30)
    assert waiting.neighbors("a")["neighbors"][0]["node"]["id"] == "b" and waiting.probes == 2
    waiting.close()


def test_probe_is_skipped_only_for_a_file_unchanged_since_a_clean_close(tmp_path: Path) -> None:
    db = tmp_path / "graph" / "graph.kuzu"
    g = Graph(tmp_path / "graph")
    chain(g, "ab")
    assert g.probes == 0 and stamped_version(db) is None  # a new file: nothing to probe, no stamp while open
    g.close()
    assert stamped_version(db) == kuzu_version()
    again = Graph(tmp_path / "graph")
    assert again.counts() == {"nodes": 2, "edges": 1}
    assert again.probes == 0, "unchanged since a clean close: the probe is skipped"
    assert not stamp_path(db).exists(), "opened for writing: a crash from now on must not leave a valid stamp"
    again.add_node("thing", {}, "c")
    assert not stamp_path(db).exists()
    again.close()
    stamp_path(db).unlink()  # e.g. a clock too coarse to stamp: reopening what this instance closed is no risk
    assert again.counts() == {"nodes": 3, "edges": 1} and again.probes == 0
    again.close()
    stamp_path(db).unlink()
    os.utime(db)  # ...unless the file changed since
    assert again.counts() == {"nodes": 3, "edges": 1} and again.probes == 1
    again.close()
    stamp_path(db).unlink()
    unstamped = Graph(tmp_path / "graph")
    assert unstamped.counts() == {"nodes": 3, "edges": 1} and unstamped.probes == 1, "no stamp: probed as before"
    unstamped.close()


def _stamp_tampering(db: Path) -> dict[str, Callable[[], None]]:
    stamp = stamp_path(db)

    def edit(**changes: object) -> Callable[[], None]:
        def run() -> None:
            stamp.write_text(json.dumps({**json.loads(stamp.read_text()), **changes}))
            os.utime(stamp, ns=(time.time_ns(), time.time_ns() + 10**9))  # keep it "written after the file"
        return run

    def rewrite_file_keep_mtime() -> None:  # same size, mtime put back: only the ctime tells
        st = db.stat()
        with open(db, "r+b") as fh:
            fh.seek(8192)
            fh.write(b"\0" * 64)
        os.utime(db, ns=(st.st_atime_ns, st.st_mtime_ns))

    def racy() -> None:  # stamp not written in a later clock tick than the file's last change
        st = db.stat()
        os.utime(stamp, ns=(st.st_atime_ns, st.st_ctime_ns))

    return {
        "garbage": lambda: stamp.write_bytes(b"\x00not json{"),
        "a list": lambda: stamp.write_text("[]"),
        "missing field": lambda: stamp.write_text(json.dumps({k: v for k, v in json.loads(stamp.read_text()).items()
                                                              if k != "ino"})),
        "extra field": edit(trust_me=True),
        "size": edit(size=1),
        "bool for an int": edit(format=True),
        "string for an int": edit(mtime_ns="0"),
        "other kuzu": edit(kuzu="0.0.1"),
        "unknown format": edit(format=2),
        "a folder": lambda: (stamp.unlink(), stamp.mkdir()),
        "wal beside": lambda: db.with_name(db.name + ".wal").write_bytes(b"x"),
        "file rewritten, mtime put back": rewrite_file_keep_mtime,
        "racy": racy,
    }


def test_a_stamp_that_does_not_match_exactly_means_probe(tmp_path: Path) -> None:
    db = tmp_path / "graph" / "graph.kuzu"
    g = Graph(tmp_path / "graph")
    chain(g, "ab")
    g.close()
    pristine = {p.name: p.read_bytes() for p in db.parent.iterdir()}
    for case, tamper in _stamp_tampering(db).items():
        tamper()
        # the opener compares the version: "other kuzu" is refused there
        assert stamped_version(db) == ("0.0.1" if case == "other kuzu" else None), case
        if case in ("garbage", "other kuzu"):  # the refusal is what decides; two cases show Graph obeys it
            again = Graph(tmp_path / "graph")
            assert again.counts() == {"nodes": 2, "edges": 1} and again.probes == 1, case
            again.close()
        if case == "a folder":
            with pytest.raises(GraphUnavailable, match="cannot remove the clean-close stamp"):
                Graph(tmp_path / "graph").counts()
        for path in db.parent.iterdir():  # back to the clean close
            if path.is_dir():
                path.rmdir()
            else:
                path.unlink()
        for name, data in pristine.items():
            (db.parent / name).write_bytes(data)
        time.sleep(0.01)  # the stamp must be written in a later clock tick than the file
        (db.parent / STAMP_FILE).write_text(json.dumps({**json.loads(pristine[STAMP_FILE]),
                                                        **_state_of(db)}))
        assert stamped_version(db) == kuzu_version(), f"not restored after {case}"


def _state_of(db: Path) -> dict[str, int]:
    st = db.stat()
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "ctime_ns": st.st_ctime_ns, "ino": st.st_ino,
            "dev": st.st_dev}


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


def test_writing_a_stamp_leaves_the_locks_of_this_process_alone(tmp_path: Path) -> None:
    """Closing any descriptor of a file drops every POSIX lock the process holds on it, Kuzu's included."""
    g = Graph(tmp_path / "graph")
    chain(g, "ab")
    g.close()
    db = tmp_path / "graph" / "graph.kuzu"
    import kuzu

    other = kuzu.Database(str(db))  # e.g. a second Graph of the same folder in this process
    try:
        assert write_stamp(db, kuzu_version())
        taken = subprocess.run([sys.executable, "-c", "import fcntl, sys; f = open(sys.argv[1], 'r+b'); "
                                "fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)", str(db)], capture_output=True)
        assert taken.returncode != 0, "another process could lock the file: Kuzu's lock was dropped"
    finally:
        other.close()


def test_a_graph_file_held_for_writing_is_not_opened_again_in_the_same_process(tmp_path: Path) -> None:
    """Kuzu's file lock keeps other processes out, not this one (a second Database on the file here
    would write it behind the first one's back): this process keeps its own account of what it holds."""
    import kuzu

    from mnemara.memory.graph.store import open_database
    from mnemara.memory.scrub import rewrite_graph

    holder = Graph(tmp_path / "graph")
    chain(holder, "ab")  # a session's graph: open for writing
    db_file = tmp_path / "graph" / "graph.kuzu"
    (tmp_path / "alias.kuzu").symlink_to(db_file)
    before = db_file.read_bytes()
    for path in (db_file, tmp_path / "alias.kuzu"):
        for read_only in (False, True):
            with pytest.raises(GraphUnavailable, match="already open for writing in this process"):
                open_database(kuzu, path, read_only=read_only)
    with pytest.raises(GraphUnavailable, match="lock"):  # forget and the note-id migration wait on it, as on Kuzu's
        rewrite_graph(db_file, ["a"])
    assert db_file.read_bytes() == before and not (tmp_path / "graph" / "graph.kuzu.rewrite").exists()
    import mnemara.memory.graph.store as graph_module

    def no_child(*args: object, **kwargs: object) -> None:
        raise AssertionError("a crash probe was started for a file this process holds")

    original_run = graph_module.subprocess.run
    graph_module.subprocess.run = no_child  # type: ignore[assignment]
    try:  # a child could only fail on the lock, or catch the file mid-write: none is started
        assert "open for writing in this process" in (graph_module.probe_failure(db_file) or "")
    finally:
        graph_module.subprocess.run = original_run
    holder.close()

    readers = [open_database(kuzu, db_file, read_only=True) for _ in range(2)]  # readers share the file
    with pytest.raises(GraphUnavailable, match="already open in this process"):
        open_database(kuzu, db_file)
    readers[0].close()
    del readers[1]  # dropped without close: Kuzu closes it, and so does the account
    assert rewrite_graph(db_file, ["a"])["nodes_deleted"] == 1
    assert Graph(tmp_path / "graph").get_node("a") is None


def test_an_open_in_this_process_waits_for_a_close_in_progress(tmp_path: Path) -> None:
    """Kuzu marks a database closed before it is done checkpointing into the file; an open here in
    that moment would read a file still being written. The account is held through the close."""
    import threading

    import kuzu

    from mnemara.memory.graph.store import close_database, open_database

    g = Graph(tmp_path / "graph")
    chain(g, "ab")
    g.close()
    db_file = tmp_path / "graph" / "graph.kuzu"
    db = open_database(kuzu, db_file)
    opened: list[object] = []
    other = threading.Thread(target=lambda: opened.append(open_database(kuzu, db_file, read_only=True)))
    real_close = db.close

    def close_while_another_thread_opens() -> None:
        other.start()
        other.join(0.3)
        assert opened == [], "another thread opened the file while this one was closing it"
        real_close()

    db.close = close_while_another_thread_opens
    close_database(db)
    other.join(30)
    assert len(opened) == 1, "the waiting open never got the file"
    close_database(opened[0])
