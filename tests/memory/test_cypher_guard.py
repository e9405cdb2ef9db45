"""graph_query accepts only statements that are safe by construction (issue 13 item 1).

The bypasses that worked against the old keyword filter run here against the real Kuzu
database; a hypothesis fuzz of comment/quote/escape combinations checks that whatever the
guard accepts never names a forbidden command outside a string and never touches a file.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mnemara.core.errors import UsageError
from mnemara.memory.graph.cypher_guard import CALL_ALLOWLIST, REFUSED_WORDS, check_cypher
from mnemara.memory.graph.store import Graph

SECRET = "canary-secret-3141|x|y"


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("cypher")
    secret = root / "secret.csv"
    secret.write_text(SECRET + "\n")
    config = root / "config.json"
    config.write_text('{"schema_version": 1}\n')
    return {"root": root, "secret": secret, "config": config, "out": root / "out.csv",
            "attach": root / "other.kuzu"}


@pytest.fixture(scope="module")
def graph(files: dict[str, Path]):
    g = Graph(files["root"] / "graph", probe=False)
    g.add_node("thing", {"name": "a"}, "a")
    g.add_node("thing", {"name": "b"}, "b")
    g.add_edge("a", "b", "rel")
    yield g
    g.close()


def untouched(files: dict[str, Path], graph: Graph) -> None:
    assert files["config"].read_text() == '{"schema_version": 1}\n'
    assert not files["out"].exists() and not files["attach"].exists()
    assert graph.counts() == {"nodes": 2, "edges": 1}


def issue_bypasses(files: dict[str, Path]) -> list[tuple[str, bool]]:
    """The attacks of issue 13 item 1, each with the write flag it was tried with."""
    return [
        (f"// '\nLOAD FROM '{files['secret']}' (file_format='csv', header=false, delim='|') RETURN *", False),
        (f"// '\nCOPY (RETURN 1 AS x) TO '{files['config']}'", False),
        (f"// '\nCOPY (RETURN 1 AS x) TO '{files['config']}'", True),
        ("// '\nCOMMIT; CREATE (n:Node {id: 'evil', label: 'x', properties: '{}', created_at: ''})", False),
        ("/* ' */ COMMIT; CREATE (n:Node {id: 'evil', label: 'x', properties: '{}', created_at: ''})", False),
        (f"ATTACH '{files['attach']}' AS other (dbtype kuzu)", False),
        (f"MATCH (n:Node) RETURN n; LOAD FROM '{files['secret']}' RETURN *", False),
        (f"LOAD FROM '{files['secret']}' (header=false) RETURN *", True),
        (f"MATCH (n:Node) WITH n LOAD FROM '{files['secret']}' RETURN *", False),
        (f"EXPORT DATABASE '{files['root'] / 'dump'}'", True),
        (f"IMPORT DATABASE '{files['root'] / 'dump'}'", True),
        ("INSTALL httpfs", True),
        ("CALL current_setting('home_directory') RETURN *", False),
        (f"CALL READ_CSV_SERIAL('{files['secret']}') RETURN *", False),
        (f"CALL file_search_path='{files['root']}'", True),
        ("CREATE NODE TABLE Evil(id STRING, PRIMARY KEY(id))", True),
        ("DROP TABLE Edge", True),
        ("ALTER TABLE Node ADD extra STRING", True),
        ("BEGIN TRANSACTION", True),
        ("CHECKPOINT", True),
        (f"RETURN 1 AS x\n// '\nLOAD FROM '{files['secret']}' RETURN *", False),
        ("RETURN 'a\\' LOAD FROM x //'", False),
        ("RETURN 'a''b'", False),
        (f"UNWIND [1] AS x WITH 1LOAD FROM '{files['secret']}' RETURN *", False),
        ("RETURN 1 AS `a``b`", False),
        ("MATCH (n:Node) RETURN\u00a0n", False),
    ]


def test_every_issue_bypass_is_refused_and_touches_nothing(graph: Graph, files: dict[str, Path]) -> None:
    for cypher, write in issue_bypasses(files):
        with pytest.raises(UsageError, match="refused|empty") as refused:
            graph.query(cypher, allow_write=write)
        assert SECRET not in str(refused.value), cypher
        untouched(files, graph)


def test_schema_commands_are_refused_even_with_write(graph: Graph) -> None:
    for cypher in ("CREATE REL TABLE R(FROM Node TO Node)", "CREATE MACRO m(x) AS x", "CREATE SEQUENCE s",
                   "DROP TABLE Node", "ALTER TABLE Node RENAME TO N", "COMMENT ON TABLE Node IS 'x'"):
        with pytest.raises(UsageError, match="refused"):
            graph.query(cypher, allow_write=True)
    assert graph.counts() == {"nodes": 2, "edges": 1}


def test_ordinary_queries_still_run(graph: Graph) -> None:
    assert graph.query("MATCH (a:Node)--(b:Node) RETURN count(*)")["rows"] == [[2]]
    assert graph.query("MATCH (n:Node) WHERE n.id = 'a;b // c /* d' RETURN count(n);")["rows"] == [[0]]
    assert graph.query('MATCH (n:Node {id: "a"}) RETURN n.`label`')["rows"] == [["thing"]]
    assert graph.query("MATCH (n:Node) WHERE n.id = $id RETURN n.label", {"id": "it's \\ odd"})["rows"] == []
    tables = graph.query("CALL show_tables() RETURN name")["rows"]
    assert sorted(r[0] for r in tables) == ["Edge", "Node"]
    assert graph.query("UNWIND [1.5, 2e3, 7] AS x RETURN sum(x)")["rows"] == [[2008.5]]
    with pytest.raises(UsageError, match="read-only"):
        graph.query("CREATE (n:Node {id: 'z', label: 'x', properties: '{}', created_at: ''})")
    made = graph.query("CREATE p = (n:Node {id: 'z', label: 'x', properties: '{}', created_at: ''}) RETURN 1",
                       allow_write=True)
    assert made["rows"] == [[1]]
    graph.query("MATCH (n:Node {id: 'z'}) DETACH DELETE n", allow_write=True)
    assert graph.counts() == {"nodes": 2, "edges": 1}


@pytest.mark.parametrize("cypher, needle", [
    ("RETURN 1 // note", "comments"), ("RETURN 1 /* note */", "comments"), ("RETURN 'open", "unterminated"),
    ("RETURN 1; RETURN 2", "one statement"), ("MATCH (load:Node) RETURN load", "LOAD"),
    ("CALL db_version() RETURN *; ", None), ("CALL", "CALL may only"), ("SHOW TABLES", "starts with"),
    ("RETURN 1 # x", "character"), ("MATCH (n) DETACH n", "DETACH DELETE"),
])
def test_refusals_say_what_was_refused(cypher: str, needle: str | None) -> None:
    if needle is None:
        assert check_cypher(cypher) == "CALL db_version() RETURN *"
        return
    with pytest.raises(UsageError, match=re.escape(needle)):
        check_cypher(cypher)


# -- fuzz --------------------------------------------------------------------------------
FRAGMENTS = [
    "//", "/*", "*/", "'", '"', "`", "\\", "\\'", '\\"', "\n", "\r", " ", ";", "--", "''", "``", "$x", "1", "1e",
    "MATCH (n:Node) ", "RETURN n", "RETURN 1 AS x", "RETURN ", "WITH n ", "CALL show_tables() RETURN *",
    "CREATE (m:Node {id: 'q', label: 'x', properties: '{}', created_at: ''})", "COMMIT", "COMMIT;",
    "CALL current_setting('home_directory') RETURN *", "ATTACH '{attach}' AS o", "load", "Copy",
    "LOAD FROM '{secret}' (header=false, delim='|') RETURN *", "COPY (RETURN 1 AS x) TO '{out}'",
    "COPY (RETURN 1 AS x) TO '{config}'", "EXPORT DATABASE '{out}'", "\u00a0", "\u2028", "é",
]


STARTS = ["", "MATCH (n:Node) RETURN n.id AS ", "RETURN '", 'RETURN "', "RETURN `", "RETURN 1 AS x ",
          "MATCH (n:Node) WHERE n.id = '"]


def _strip_literals(text: str) -> str:
    """An independent view of an accepted statement: literals blanked (accepted ones hold no backslash)."""
    return re.sub(r"'[^']*'|\"[^\"]*\"|`[^`]*`", " '' ", text)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.tuples(st.sampled_from(STARTS), st.lists(st.sampled_from(FRAGMENTS), max_size=7)), write=st.booleans())
def test_fuzz_accepted_queries_never_name_forbidden_commands_or_touch_files(
        graph: Graph, files: dict[str, Path], parts: list[str], write: bool) -> None:
    cypher = parts[0] + "".join(parts[1])
    for key, path in files.items():
        cypher = cypher.replace("{" + key + "}", str(path))
    try:
        statement = check_cypher(cypher)
    except UsageError:
        return
    bare = _strip_literals(statement)
    assert "//" not in bare and "/*" not in bare and ";" not in bare and "\\" not in statement
    words = {w.upper() for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", bare)}
    assert not words & REFUSED_WORDS, statement
    for call in re.finditer(r"(?i)\bCALL\s+([A-Za-z_]+)", bare):
        assert call.group(1).upper() in CALL_ALLOWLIST
    try:
        answer = graph.query(cypher, allow_write=write)
    except UsageError:
        answer = {}
    assert SECRET not in json.dumps(answer, default=str)
    assert files["config"].read_text() == '{"schema_version": 1}\n'
    assert not files["out"].exists() and not files["attach"].exists()
    if write:  # a fuzz CREATE may add node 'q'; put the graph back for the next example
        graph.query("MATCH (n:Node {id: 'q'}) DETACH DELETE n", allow_write=True)
    assert graph.counts() == {"nodes": 2, "edges": 1}
