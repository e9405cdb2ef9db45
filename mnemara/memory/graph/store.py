"""A property graph on Kuzu under ``graph/`` (one database file, opened lazily).

Schema (created on first use)::

    Node(id STRING PRIMARY KEY, label STRING, properties STRING /* JSON */, created_at STRING)
    Edge(FROM Node TO Node, id STRING, relationship STRING, properties STRING /* JSON */, created_at STRING)

Kuzu is a native library: a damaged database file can crash the process that
opens it instead of raising. So an existing file is first opened by a short
child process (a probe); only when that survives is it opened in-process. The
probe is skipped when the file is exactly as Mnemara last closed it cleanly
(see :mod:`mnemara.memory.graph.stamp`).
Every backend failure raises :class:`GraphUnavailable`; bad input raises
:class:`UsageError`.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import uuid
import weakref
from datetime import datetime, timezone
from pathlib import Path
from collections.abc import Sequence
from types import ModuleType
from typing import Any, Protocol

from mnemara.core.backend_loader import load_backend
from mnemara.core.errors import BackendUnavailable, UsageError
from mnemara.core.fsutil import LinkRefused, check_no_links, private_mkdir, tighten_modes
from mnemara.memory.graph.cypher_guard import check_cypher
from mnemara.memory.graph.bounded_query import QueryLimits, run_bounded
from mnemara.memory.graph.values import json_value as _json
from mnemara.memory.graph.stamp import drop_stamp, file_state, has_companions, unchanged_since_clean_close, write_stamp

DB_FILE = "graph.kuzu"
NAME_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_ :.-]{0,63}")
MAX_ID = 300
MAX_PROPERTIES = 100_000
MAX_ROWS = 500
MAX_DEPTH = 5
MAX_PATH = 30
SCHEMA = (
    "CREATE NODE TABLE IF NOT EXISTS Node(id STRING, label STRING, properties STRING, created_at STRING, PRIMARY KEY(id))",
    "CREATE REL TABLE IF NOT EXISTS Edge(FROM Node TO Node, id STRING, relationship STRING, properties STRING, created_at STRING)",
)
# Kuzu's buffer pool defaults to 80% of the machine's memory; reserving that much costs ~30 ms of CPU on
# every open and close (a session reopens the graph after each idle spell). A memory graph is megabytes.
BUFFER_POOL = 512 * 1024 * 1024
_PROBE = """
import sys, kuzu
db = kuzu.Database(sys.argv[1], read_only=True)
conn = kuzu.Connection(db)
tables = {row[1] for row in conn.execute("CALL show_tables() RETURN *").get_all()}
if "Node" in tables:
    conn.execute("MATCH (n:Node) RETURN count(n)").get_all()
if "Edge" in tables:
    conn.execute("MATCH ()-[e:Edge]->() RETURN count(e)").get_all()
"""


class GraphUnavailable(BackendUnavailable):
    """Kuzu cannot be used; ``str(exc)`` is the reason."""


class ClosableDatabase(Protocol):
    """A database :func:`open_database` opened (a ``kuzu.Database``): what :func:`close_database` calls."""

    def close(self) -> None: ...


def open_database(kuzu: ModuleType, path: Path, *, read_only: bool = False) -> Any:
    """``kuzu.Database`` of ``path`` the way Mnemara opens it in-process (bounded buffer pool).

    Kuzu's file lock keeps other processes out, not this one: a second ``Database`` on a file this
    process holds would write it behind the first one's back (``forget`` rewriting a graph that a
    session of the same process still holds put the forgotten text back). So this process keeps
    its own account: writing needs the file to be open nowhere else here, reading needs it open
    here only for reading. A refusal raises :class:`GraphUnavailable` naming the lock, like Kuzu's.
    """
    key = os.path.realpath(path)
    with _open_here_lock:
        held = _live(key)
        if held and not (read_only and all(ro for _, ro in held)):
            raise GraphUnavailable(
                f"{path} is already open {'for writing ' if not all(ro for _, ro in held) else ''}in this "
                "process (Kuzu's file lock cannot tell; a session may still hold it): close that first")
        db = kuzu.Database(str(path), read_only=read_only, buffer_pool_size=BUFFER_POOL)
        _open_here[key] = [*held, (weakref.ref(db), read_only)]
    return db


_open_here: dict[str, list[tuple[weakref.ref[Any], bool]]] = {}  # graph files this process has open, and how
_open_here_lock = threading.Lock()


def _live(key: str) -> list[tuple[weakref.ref[Any], bool]]:
    """The databases of this process still open on the file ``key`` (a real path), and whether read-only.
    The caller holds ``_open_here_lock``."""
    return [(ref, ro) for ref, ro in _open_here.get(key, [])
            if (db := ref()) is not None and not getattr(db, "is_closed", False)]


def held_for_writing_here(path: Path) -> bool:
    """Whether a database of this process opened by :func:`open_database` has ``path`` open for writing."""
    with _open_here_lock:
        return any(not ro for _, ro in _live(os.path.realpath(path)))


def close_database(db: ClosableDatabase) -> None:
    """Close a database from :func:`open_database` and take it off this process's account.

    The account is held while Kuzu closes (it checkpoints and writes the file), so no open here
    can slip in between Kuzu marking the database closed and Kuzu being done with the file.
    """
    with _open_here_lock:
        try:
            db.close()
        finally:
            for key in list(_open_here):
                kept = [(ref, ro) for ref, ro in _live(key) if ref() is not db]
                if kept:
                    _open_here[key] = kept
                else:
                    del _open_here[key]


def kuzu_version(kuzu: ModuleType) -> str:
    """The version of an imported Kuzu module, as stamps record it ('' when it has none)."""
    return str(getattr(kuzu, "__version__", "") or "")


def _now() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text.split(" See the docs:")[0][:300]


def probe_failure(path: Path) -> str | None:
    """Open ``path`` in a child process first (some damage crashes Kuzu instead of raising):
    None when it opened, else one line saying why not.

    While this process holds the file for writing, no child is started: it could only fail on the
    lock, or (Kuzu's lock being per process) catch the file mid-write; the answer names the lock.
    """
    if held_for_writing_here(path):
        return f"{path} is open for writing in this process (a session may still hold it; Kuzu's lock cannot tell)"
    try:
        done = subprocess.run([sys.executable, "-c", _PROBE, str(path)], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"cannot check {path}: {_one_line(exc)}"
    if done.returncode == 0:
        return None
    if done.returncode < 0:
        return (f"{path} crashed Kuzu on open (signal {-done.returncode}); the file looks corrupt "
                "(move it aside to start a new graph)")
    lines = [ln.strip() for ln in done.stderr.splitlines() if ln.strip() and not ln.startswith("See the docs")]
    last = lines[-1] if lines else f"probe exit {done.returncode}"
    return _one_line(Exception(re.sub(r"^\w+(Error|Exception): ", "", last)))


def check_opens(kuzu: ModuleType, path: Path) -> None:
    """Raise GraphUnavailable unless ``path`` can be opened in this process without risk: it is
    exactly as this Kuzu version last closed it cleanly, or a child process opened it first.
    For the code that opens a graph file without a :class:`Graph` (forget, note-id migration)."""
    if unchanged_since_clean_close(path, kuzu_version(kuzu)):
        return
    why = probe_failure(path)
    if why is not None:
        raise GraphUnavailable(why)


def _companions_of(db_file: Path) -> list[str]:
    """Files beside ``db_file`` named after it (Kuzu's WAL, shadow and lock files)."""
    try:
        return [name for name in os.listdir(db_file.parent) if name.startswith(db_file.name) and name != db_file.name]
    except OSError:
        return []


class Graph:
    """The graph of one instance (``graph_dir``). Not thread-safe; one per session."""

    def __init__(self, graph_dir: Path, *, probe: bool = True) -> None:
        self.graph_dir = Path(graph_dir)
        self.path = self.graph_dir / DB_FILE
        self.probe = probe
        self._db: Any = None
        self._conn: Any = None
        self._kuzu_version = ""
        self.probes = 0  # crash probes run by this instance (tests observe the skip with it)
        self._refused: tuple[tuple[int, ...], str] | None = None  # (file state, why) of a failed probe
        self._closed_as: tuple[int, ...] | None = None  # the file as this instance last closed it cleanly

    # -- connection ------------------------------------------------------------------
    def _connection(self) -> Any:
        if self._conn is not None:
            return self._conn
        kuzu = load_backend("kuzu", GraphUnavailable)
        try:
            private_mkdir(self.graph_dir)
        except OSError as exc:
            raise GraphUnavailable(f"cannot create {self.graph_dir}: {_one_line(exc)}") from None
        if self.path.is_dir():
            raise GraphUnavailable(f"{self.path} is a folder, not a Kuzu database file")
        try:  # Kuzu follows links: a planted graph.kuzu (or its .wal) -> ~/.bashrc would be written through
            for name in (self.path, *(self.graph_dir / n for n in _companions_of(self.path))):
                check_no_links(name)
        except LinkRefused as exc:
            raise GraphUnavailable(str(exc)) from None
        version = kuzu_version(kuzu)
        unchanged = unchanged_since_clean_close(self.path, version)
        if not unchanged and self._closed_as is not None:  # reopening what this instance closed: on a
            # filesystem whose clock ticks too coarsely for a stamp, the file as it was left counts too
            unchanged = file_state(self.path) == self._closed_as and not has_companions(self.path)
        try:  # opened for writing: a session that dies from here on must not leave a valid stamp
            drop_stamp(self.path)
        except OSError as exc:
            raise GraphUnavailable(f"cannot remove the clean-close stamp beside {self.path}: {_one_line(exc)}") from None
        if self.probe and self.path.exists() and not unchanged:
            self._probe()
        self._kuzu_version = version
        try:
            self._db = open_database(kuzu, self.path)
            conn = kuzu.Connection(self._db)
            for statement in SCHEMA:
                conn.execute(statement)
            tighten_modes(self.graph_dir)
        except Exception as exc:
            self._db = None
            raise GraphUnavailable(_one_line(exc)) from None
        self._conn = conn
        return conn

    def _probe(self) -> None:
        """:func:`probe_failure` of the file; raise GraphUnavailable when that fails.

        A file the probe refused is not probed again while it stays exactly as it was (each
        graph call of a session would otherwise pay a child process to learn the same thing),
        unless the refusal was about Kuzu's lock, which another process may release any moment.
        """
        state = file_state(self.path)
        if state is not None and self._refused is not None and self._refused[0] == state:
            raise GraphUnavailable(self._refused[1])
        self.probes += 1
        why = probe_failure(self.path)
        if why is None:
            return
        if state is not None and "lock" not in why.lower():
            self._refused = (state, why)
        raise GraphUnavailable(why)

    def close(self) -> None:
        """Release the database (and its file lock) so other processes can open it.

        A close without error records the clean-close stamp, so the next open skips the probe.
        """
        conn, db = self._conn, self._db
        self._conn = self._db = None
        clean = db is not None
        try:
            if conn is not None:
                conn.close()
            if db is not None:
                close_database(db)
        except Exception:
            clean = False
        if clean:
            tighten_modes(self.graph_dir)  # Kuzu writes 0644 files; before the stamp, which records ctime
            write_stamp(self.path, self._kuzu_version)
            self._closed_as = file_state(self.path)

    def _run(self, cypher: str, params: dict[str, Any] | None = None) -> list[list[Any]]:
        conn = self._connection()
        try:
            result = conn.execute(cypher, params or {})
            return result.get_all()
        except RuntimeError as exc:
            raise GraphUnavailable(_one_line(exc)) from None

    # -- writing ------------------------------------------------------------------------
    def add_node(self, label: str, properties: dict[str, Any] | None = None, node_id: str | None = None) -> dict[str, Any]:
        """Create the node, or update label and properties of an existing one with that id."""
        label = _check_name(label, "label")
        props = _props(properties)
        node_id = _check_id(node_id) if node_id else f"{label.lower().replace(' ', '_')}:{uuid.uuid4().hex[:12]}"
        existed = bool(self._run("MATCH (n:Node {id: $id}) RETURN n.id", {"id": node_id}))
        self._run("MERGE (n:Node {id: $id}) ON CREATE SET n.label = $label, n.properties = $props, n.created_at = $now "
                  "ON MATCH SET n.label = $label, n.properties = $props",
                  {"id": node_id, "label": label, "props": props, "now": _now()})
        node = self.get_node(node_id)
        assert node is not None
        return {"node": node, "created": not existed}

    def ensure_node(self, node_id: str, label: str, properties: dict[str, Any] | None = None) -> None:
        """Create the node if missing; an existing node is left as it is."""
        self._run("MERGE (n:Node {id: $id}) ON CREATE SET n.label = $label, n.properties = $props, n.created_at = $now",
                  {"id": _check_id(node_id), "label": _check_name(label, "label"), "props": _props(properties),
                   "now": _now()})

    def add_edge(self, from_id: str, to_id: str, relationship: str, properties: dict[str, Any] | None = None,
                 edge_id: str | None = None) -> dict[str, Any]:
        """Create an edge (both nodes must exist). The same (from, relationship, to) updates, never duplicates."""
        from_id, to_id = _check_id(from_id), _check_id(to_id)
        relationship = _check_name(relationship, "relationship")
        props = _props(properties)
        found = self._run("MATCH (a:Node {id: $a}), (b:Node {id: $b}) OPTIONAL MATCH (a)-[e:Edge]->(b) "
                          "WHERE e.relationship = $r RETURN e.id", {"a": from_id, "b": to_id, "r": relationship})
        if not found:
            missing = next((n for n in (from_id, to_id) if self.get_node(n) is None), from_id)
            raise UsageError(f"no node with id {missing!r} (create it with graph_add_node first)")
        existing = [row for row in found if row[0] is not None]
        if existing:
            self._run("MATCH (a:Node {id: $a})-[e:Edge]->(b:Node {id: $b}) WHERE e.relationship = $r SET e.properties = $p",
                      {"a": from_id, "b": to_id, "r": relationship, "p": props})
            edge_id = existing[0][0]
        else:
            edge_id = _check_id(edge_id) if edge_id else f"e:{uuid.uuid4().hex[:16]}"
            self._run("MATCH (a:Node {id: $a}), (b:Node {id: $b}) CREATE (a)-[:Edge {id: $id, relationship: $r, "
                      "properties: $p, created_at: $now}]->(b)",
                      {"a": from_id, "b": to_id, "id": edge_id, "r": relationship, "p": props, "now": _now()})
        return {"edge": {"id": edge_id, "from": from_id, "to": to_id, "relationship": relationship,
                         "properties": json.loads(props)}, "created": not existing}

    def set_targets(self, from_id: str, relationship: str, targets: dict[str, tuple[str, dict[str, Any]]]) -> None:
        """Make ``from_id``'s outgoing ``relationship`` edges point at exactly ``targets``.

        ``targets`` maps node id -> (label, properties) for nodes to create when missing.
        """
        wanted = set(targets)
        current = {row[0] for row in self._run(
            "MATCH (a:Node {id: $a})-[e:Edge]->(b:Node) WHERE e.relationship = $r RETURN b.id",
            {"a": from_id, "r": relationship})}
        for stale in current - wanted:
            self._run("MATCH (a:Node {id: $a})-[e:Edge]->(b:Node {id: $b}) WHERE e.relationship = $r DELETE e",
                      {"a": from_id, "b": stale, "r": relationship})
        for target in sorted(wanted - current):
            label, props = targets[target]
            self.ensure_node(target, label, props)
            self.add_edge(from_id, target, relationship)

    # -- reading ------------------------------------------------------------------------
    def get_node(self, node_id: str) -> dict[str, Any] | None:
        rows = self._run("MATCH (n:Node {id: $id}) RETURN n.id, n.label, n.properties, n.created_at", {"id": node_id})
        return _node(rows[0]) if rows else None

    def neighbors(self, node_id: str, depth: int = 1, relationship: str | None = None, limit: int = 200) -> dict[str, Any]:
        """Nodes within ``depth`` hops (either direction), nearest first, with the edges that reached them."""
        node_id = _check_id(node_id)
        depth = _check_int(depth, "depth", 1, MAX_DEPTH)
        limit = _check_int(limit, "limit", 1, 1000)
        if relationship is not None:
            relationship = _check_name(relationship, "relationship")
        start = self.get_node(node_id)
        if start is None:
            raise UsageError(f"no node with id {node_id!r}")
        seen = {node_id}
        frontier = [node_id]
        found: list[dict[str, Any]] = []
        truncated = False
        rel_clause = " AND e.relationship = $r" if relationship else ""
        for level in range(1, depth + 1):
            if not frontier or truncated:
                break
            params: dict[str, Any] = {"ids": frontier}
            if relationship:
                params["r"] = relationship
            rows = [("out", *r) for r in self._run(
                "MATCH (a:Node)-[e:Edge]->(b:Node) WHERE a.id IN $ids" + rel_clause +
                " RETURN a.id, e.id, e.relationship, b.id, b.label, b.properties, b.created_at", params)]
            rows += [("in", *r) for r in self._run(
                "MATCH (b:Node)-[e:Edge]->(a:Node) WHERE a.id IN $ids" + rel_clause +
                " RETURN a.id, e.id, e.relationship, b.id, b.label, b.properties, b.created_at", params)]
            rows.sort(key=lambda r: (r[4], r[2]))
            next_frontier = []
            for direction, via, edge_id, rel, other, label, props, created in rows:
                if other in seen:
                    continue
                if len(found) >= limit:
                    truncated = True
                    break
                seen.add(other)
                next_frontier.append(other)
                found.append({"node": _node([other, label, props, created]), "depth": level,
                              "via": {"edge": edge_id, "relationship": rel, "from": via if direction == "out" else other,
                                      "to": other if direction == "out" else via}})
            frontier = next_frontier
        return {"node": start, "neighbors": found, "truncated": truncated}

    def shortest_path(self, from_id: str, to_id: str, max_depth: int = 10) -> dict[str, Any]:
        """The shortest undirected path between two nodes (``found: false`` when none within ``max_depth``)."""
        from_id, to_id = _check_id(from_id), _check_id(to_id)
        max_depth = _check_int(max_depth, "max_depth", 1, MAX_PATH)
        for node in (from_id, to_id):
            if self.get_node(node) is None:
                raise UsageError(f"no node with id {node!r}")
        if from_id == to_id:
            return {"found": True, "length": 0, "nodes": [self.get_node(from_id)], "edges": []}
        rows = self._run(
            f"MATCH p = (a:Node {{id: $a}})-[:Edge* SHORTEST 1..{max_depth}]-(b:Node {{id: $b}}) "
            "RETURN nodes(p), rels(p) LIMIT 1", {"a": from_id, "b": to_id})
        if not rows:
            return {"found": False, "length": None, "nodes": [], "edges": []}
        nodes, rels = rows[0]
        by_internal = {_internal(n["_id"]): n["id"] for n in nodes}
        edges = [{"id": r["id"], "relationship": r["relationship"], "from": by_internal.get(_internal(r["_src"])),
                  "to": by_internal.get(_internal(r["_dst"])), "properties": _json(r["properties"])} for r in rels]
        return {"found": True, "length": len(rels),
                "nodes": [_node([n["id"], n["label"], n["properties"], n["created_at"]]) for n in nodes], "edges": edges}

    def match(self, pattern: dict[str, Any], limit: int = 50) -> dict[str, Any]:
        """Nodes (``{"label", "id", "properties"}``) or edges (``{"from", "relationship", "to"}``) matching ``pattern``.

        ``properties`` match when every given key has an equal value in the JSON properties.
        """
        if not isinstance(pattern, dict) or not pattern:
            raise UsageError("pattern must be a non-empty JSON object")
        limit = _check_int(limit, "limit", 1, MAX_ROWS)
        if any(key in pattern for key in ("from", "to", "relationship")):
            return self._match_edges(pattern, limit)
        spec = pattern.get("node", pattern)
        where, params = _node_filter(spec, "n")
        rows = self._run("MATCH (n:Node)" + (f" WHERE {' AND '.join(where)}" if where else "") +
                         " RETURN n.id, n.label, n.properties, n.created_at ORDER BY n.id LIMIT 20000", params)
        want = _wanted_props(spec)
        nodes = [_node(r) for r in rows]
        nodes = [n for n in nodes if _props_match(n["properties"], want)]
        return {"nodes": nodes[:limit], "truncated": len(nodes) > limit}

    def _match_edges(self, pattern: dict[str, Any], limit: int) -> dict[str, Any]:
        unknown = set(pattern) - {"from", "to", "relationship", "properties"}
        if unknown:
            raise UsageError(f"unknown pattern keys {sorted(unknown)}: use from, relationship, to, properties")
        left, right = pattern.get("from") or {}, pattern.get("to") or {}
        where_a, params = _node_filter(left, "a")
        where_b, params_b = _node_filter(right, "b")
        params.update(params_b)
        where = where_a + where_b
        if pattern.get("relationship") is not None:
            where.append("e.relationship = $rel")
            params["rel"] = _check_name(pattern["relationship"], "relationship")
        rows = self._run(
            "MATCH (a:Node)-[e:Edge]->(b:Node)" + (f" WHERE {' AND '.join(where)}" if where else "") +
            " RETURN a.id, a.label, a.properties, a.created_at, e.id, e.relationship, e.properties, "
            "b.id, b.label, b.properties, b.created_at ORDER BY e.id LIMIT 20000", params)
        want_a, want_b, want_e = _wanted_props(left), _wanted_props(right), _wanted_props(pattern)
        out = []
        for r in rows:
            a, b = _node(r[0:4]), _node(r[7:11])
            edge = {"id": r[4], "relationship": r[5], "properties": _json(r[6])}
            if _props_match(a["properties"], want_a) and _props_match(b["properties"], want_b) and \
                    _props_match(edge["properties"], want_e):
                out.append({"from": a, "edge": edge, "to": b})
        return {"matches": out[:limit], "truncated": len(out) > limit}

    def query(self, cypher: str, params: dict[str, Any] | None = None, allow_write: bool = False) -> dict[str, Any]:
        """Run one Cypher statement with parameters; read-only unless ``allow_write``.

        Only what :func:`mnemara.memory.graph.cypher_guard.check_cypher` accepts runs, whatever ``allow_write`` says,
        and it runs in a child process with a time limit and a memory cap
        (:mod:`mnemara.memory.graph.bounded_query`): a statement can build lists and strings that
        neither Kuzu's buffer pool nor its timeout stops.
        """
        statement = check_cypher(cypher)
        if params is not None and (not isinstance(params, dict) or not all(
                isinstance(k, str) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k) for k in params)):
            raise UsageError("params must be a JSON object whose keys are parameter names")
        self._connection()  # the file exists with its schema (and passed the crash probe)
        self.close()  # Kuzu's lock is per process: the child opens the file; the next call here reopens it
        return run_bounded(self.path, statement, params or {}, write=allow_write,
                           limits=QueryLimits(max_rows=MAX_ROWS))

    def counts(self) -> dict[str, int]:
        nodes = self._run("MATCH (n:Node) RETURN count(n)")[0][0]
        edges = self._run("MATCH ()-[e:Edge]->() RETURN count(e)")[0][0]
        return {"nodes": int(nodes), "edges": int(edges)}


# -- validation and conversion ------------------------------------------------------------
def _check_name(value: object, what: str) -> str:
    if not isinstance(value, str) or not NAME_RE.fullmatch(value.strip()):
        raise UsageError(f"invalid {what} {value!r}: 1-64 of letters, digits, ' ', '_', ':', '.', '-'")
    return value.strip()


def _check_id(value: object) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_ID or any(ord(c) < 32 for c in value):
        raise UsageError(f"invalid node/edge id {value!r}: 1-{MAX_ID} printable characters")
    return value.strip()


def _check_int(value: object, what: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise UsageError(f"{what} must be an integer from {low} to {high}, got {value!r}")
    return value


def _props(properties: object) -> str:
    if properties is None:
        properties = {}
    if not isinstance(properties, dict):
        raise UsageError("properties must be a JSON object")
    try:
        text = json.dumps(properties, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError) as exc:
        raise UsageError(f"properties are not JSON: {exc}") from None
    if len(text) > MAX_PROPERTIES:
        raise UsageError(f"properties exceed {MAX_PROPERTIES} characters")
    return text




def _node(row: Sequence[Any]) -> dict[str, Any]:
    return {"id": row[0], "label": row[1], "properties": _json(row[2]) or {}, "created_at": row[3]}


def _internal(value: dict[str, Any]) -> tuple[int, int]:
    return (value["table"], value["offset"])


def _node_filter(spec: object, var: str) -> tuple[list[str], dict[str, Any]]:
    if not isinstance(spec, dict):
        raise UsageError("each node in a pattern must be a JSON object")
    unknown = set(spec) - {"id", "label", "properties"}
    if unknown:
        raise UsageError(f"unknown node pattern keys {sorted(unknown)}: use id, label, properties")
    where, params = [], {}
    if spec.get("id") is not None:
        where.append(f"{var}.id = ${var}_id")
        params[f"{var}_id"] = _check_id(spec["id"])
    if spec.get("label") is not None:
        where.append(f"{var}.label = ${var}_label")
        params[f"{var}_label"] = _check_name(spec["label"], "label")
    return where, params


def _wanted_props(spec: dict[str, Any]) -> dict[str, Any]:
    want = spec.get("properties") or {}
    if not isinstance(want, dict):
        raise UsageError("pattern properties must be a JSON object")
    return want


def _props_match(props: object, want: dict[str, Any]) -> bool:
    return not want or (isinstance(props, dict) and all(props.get(k) == v for k, v in want.items()))


