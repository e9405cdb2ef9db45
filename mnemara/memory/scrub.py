"""Make deleted data really gone from LanceDB and Kuzu (used by forget).

Both stores keep deleted bytes on disk: LanceDB marks rows deleted and keeps
old versions and data files (compaction leaves a fragment alone when few of
its rows are deleted); Kuzu leaves deleted and overwritten strings in its
pages even after a checkpoint. So after removing rows we *rewrite*:

* each LanceDB table is written again from its live rows as a new version,
  the full-text index is rebuilt, and every older version and unreferenced
  file is cleaned up;
* the Kuzu database is copied node by node and edge by edge into a fresh file
  that then replaces the old one.

Rewriting while another process reads the same index can make that reader's
query fail once (it retries on its next call); forget is a rare, explicit act.
"""
from __future__ import annotations

import os
import warnings
from datetime import timedelta
from pathlib import Path
from collections.abc import Callable
from typing import Any, Iterable

from mnemara.core.backend_loader import load_backend
from mnemara.core.fsutil import check_no_links, locked


def purge_lance(index_dir: Path, drop_chunk_ids: Iterable[str] = ()) -> dict[str, Any]:
    """Delete chunks by id, drop vectors no remaining chunk uses, and rewrite every table
    so no old bytes remain (new version, FTS index rebuilt, older versions cleaned up)."""
    from mnemara.memory.search.rag import RagUnavailable

    lancedb = load_backend("lancedb", RagUnavailable)
    pa = load_backend("pyarrow", RagUnavailable)
    pc = load_backend("pyarrow.compute", RagUnavailable)
    FTS = load_backend("lancedb.index", RagUnavailable).FTS

    ids = pa.array(sorted(set(drop_chunk_ids)), pa.string())
    stats: dict[str, Any] = {"tables": 0, "chunks_deleted": 0, "vectors_deleted": 0}
    index_dir = Path(index_dir)
    if not index_dir.is_dir():
        return stats
    with locked(index_dir / ".lock"):
        db = lancedb.connect(str(index_dir))
        names = sorted(db.list_tables().tables, key=lambda n: n != "chunks")  # chunks first
        used: Any = None
        for name in names:
            table = db.open_table(name)
            had_fts = any(ix.index_type == "FTS" for ix in table.list_indices())
            data = table.to_arrow()
            if name == "chunks":
                kept = data.filter(pc.invert(pc.is_in(data["id"], value_set=ids)))
                stats["chunks_deleted"] += data.num_rows - kept.num_rows
                used = pc.unique(kept["hash"])
            elif name.startswith("vec_") and used is not None and "hash" in data.schema.names:
                kept = data.filter(pc.is_in(data["hash"], value_set=used))
                stats["vectors_deleted"] += data.num_rows - kept.num_rows
            else:
                kept = data
            table = db.create_table(name, kept, mode="overwrite")
            if had_fts and kept.num_rows:
                table.create_index("search_text", config=FTS(), replace=True)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                table.optimize(cleanup_older_than=timedelta(0), delete_unverified=True)
            stats["tables"] += 1
    return stats


def rewrite_graph(graph_file: Path, drop_node_ids: Iterable[str], rename: dict[str, str] | None = None,
                  scrub: Callable[[str], str] | None = None) -> dict[str, Any]:
    """Copy the Kuzu database minus ``drop_node_ids`` (and their edges, and entity/tag nodes
    left without any edge) into a fresh file that replaces the old one.

    ``rename`` maps node ids to new ids (their edges follow); a node renamed to an id that
    exists already is merged into it (its edges move over, repeated edges are kept once).
    ``scrub`` rewrites the JSON properties of every node and edge kept (forget redacts text there);
    the answer's ``redacted_nodes`` names the kept nodes whose properties it changed.
    """
    from mnemara.memory.graph.store import (SCHEMA, GraphUnavailable, check_opens, close_database, kuzu_version,
                                      open_database)
    from mnemara.memory.graph.stamp import drop_stamp, write_stamp

    kuzu = load_backend("kuzu", GraphUnavailable)

    graph_file = Path(graph_file)
    if not graph_file.exists():
        return {"nodes_deleted": 0, "edges_deleted": 0, "redacted_nodes": []}
    drop = set(drop_node_ids)
    check_opens(kuzu, graph_file)  # before the stamp goes: an unchanged, cleanly closed file needs no child
    drop_stamp(graph_file)  # opened for writing, then replaced: the clean-close stamp no longer holds
    db = open_database(kuzu, graph_file)
    conn = kuzu.Connection(db)
    nodes = conn.execute("MATCH (n:Node) RETURN n.id, n.label, n.properties, n.created_at").get_all()
    edges = conn.execute(
        "MATCH (a:Node)-[e:Edge]->(b:Node) RETURN a.id, b.id, e.id, e.relationship, e.properties, e.created_at").get_all()
    conn.close()
    close_database(db)
    if rename:
        present = {n[0] for n in nodes}
        merged = {old for old, new in rename.items() if new in present and old in present}
        nodes = [n for n in nodes if n[0] not in merged]
        nodes = [(rename.get(n[0], n[0]), *n[1:]) for n in nodes]
        seen: set[tuple[str, str, str]] = set()
        moved = []
        for e in edges:
            a, b = rename.get(e[0], e[0]), rename.get(e[1], e[1])
            if (a, b, e[3]) not in seen:
                seen.add((a, b, e[3]))
                moved.append((a, b, *e[2:]))
        edges = moved
    kept_edges = [e for e in edges if e[0] not in drop and e[1] not in drop]
    linked = {e[0] for e in kept_edges} | {e[1] for e in kept_edges}
    orphaned = {e[1] for e in edges if (e[0] in drop) and e[1] not in linked}
    drop |= {n[0] for n in nodes if n[0] in orphaned and n[1] in ("entity", "tag")}
    kept_nodes = [n for n in nodes if n[0] not in drop]
    redacted: list[str] = []
    if scrub is not None:
        scrubbed = [(n[0], n[1], scrub(n[2]), n[3]) for n in kept_nodes]
        redacted = [new[0] for old, new in zip(kept_nodes, scrubbed) if new[2] != old[2]]
        kept_nodes = scrubbed
        kept_edges = [(*e[:4], scrub(e[4]), e[5]) for e in kept_edges]
    fresh = graph_file.with_name(graph_file.name + ".rewrite")
    for leftover in (fresh, fresh.with_name(fresh.name + ".wal")):
        if leftover.exists():
            leftover.unlink()
    new_db = open_database(kuzu, fresh)
    new = kuzu.Connection(new_db)
    for statement in SCHEMA:
        new.execute(statement)
    for start in range(0, len(kept_nodes), 2000):
        rows = [{"id": n[0], "label": n[1], "p": n[2], "c": n[3]} for n in kept_nodes[start:start + 2000]]
        new.execute("UNWIND $rows AS r CREATE (:Node {id: r.id, label: r.label, properties: r.p, created_at: r.c})",
                    {"rows": rows})
    for start in range(0, len(kept_edges), 2000):
        rows = [{"f": e[0], "t": e[1], "id": e[2], "r": e[3], "p": e[4], "c": e[5]} for e in kept_edges[start:start + 2000]]
        new.execute("UNWIND $rows AS r MATCH (a:Node {id: r.f}), (b:Node {id: r.t}) "
                    "CREATE (a)-[:Edge {id: r.id, relationship: r.r, properties: r.p, created_at: r.c}]->(b)",
                    {"rows": rows})
    new.execute("CHECKPOINT")
    new.close()
    close_database(new_db)
    check_no_links(graph_file)
    os.replace(fresh, graph_file)
    for wal in (fresh.with_name(fresh.name + ".wal"), graph_file.with_name(graph_file.name + ".wal")):
        if wal.exists():
            wal.unlink()
    write_stamp(graph_file, kuzu_version(kuzu))  # Kuzu closed the new file cleanly
    return {"nodes_deleted": len(nodes) - len(kept_nodes), "edges_deleted": len(edges) - len(kept_edges),
            "redacted_nodes": redacted}
