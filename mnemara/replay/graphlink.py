"""Read ``applies_to`` edges from the instance graph without writing anything.

The graph (see :mod:`mnemara.memory.surfaces` for its conventions) keeps a
memory atom as a ``memory_atom`` node whose properties hold its ``file`` and
``timestamp``, linked by ``applies_to`` edges to ``entity`` nodes. Replay
matches atoms by file name and timestamp, not by node id, so nodes named the
way they were before note ids (``memory:<day>@<ts>#<offset>``) count as well.

Kuzu opens the file read-only (a dry run must not touch the graph file), in a
child process so that a damaged file that crashes Kuzu cannot take replay down.
When the file is exactly as Mnemara last closed it cleanly (see
:mod:`mnemara.memory.graph.stamp`) there is nothing new to crash on and it is
read in-process instead. Any failure raises :class:`GraphLookupError` and
replay carries on without it.
"""
from __future__ import annotations

from mnemara.core.errors import MnemaraError

import json
import subprocess
import sys
from pathlib import Path
from typing import Sequence

from mnemara.core.backend_loader import load_backend
from mnemara.core.errors import BackendUnavailable
from mnemara.store.instance import Instance
from mnemara.memory.graph.store import DB_FILE, close_database, kuzu_version, open_database
from mnemara.memory.graph.stamp import stamped_version
from mnemara.replay.augment import EntityLookup
from mnemara.replay.load import LoadedAtom

TIMEOUT = 60
TEXT_PREFIX = 200  # what mnemara.memory.surfaces stores as a memory_atom's text
TABLES = "CALL show_tables() RETURN *"
APPLIES_TO = ("MATCH (a:Node)-[e:Edge]->(b:Node) WHERE e.relationship = 'applies_to' "
              "RETURN a.properties, b.id, b.properties")
_CHILD = r"""
import json, sys, kuzu
db = kuzu.Database(sys.argv[1], read_only=True)
conn = kuzu.Connection(db)
tables = {row[1] for row in conn.execute(sys.argv[2]).get_all()}
rows = conn.execute(sys.argv[3]).get_all() if {"Node", "Edge"} <= tables else []
json.dump(rows, sys.stdout)
"""


class GraphLookupError(MnemaraError):
    """The graph could not be read; ``str(exc)`` says why in one line."""


def read_applies_to(graph_file: Path) -> list[tuple[str, str, str | None, str]]:
    """``(day file name, timestamp, text prefix or None, entity)`` per ``applies_to`` edge of a memory atom."""
    if not graph_file.exists():
        return []
    if not graph_file.is_file():
        raise GraphLookupError(f"{graph_file} is not a Kuzu database file")
    rows = _read_in_process(graph_file)
    if rows is None:
        rows = _read_in_child(graph_file)
    out = []
    for atom_props, entity_id, entity_props in rows:
        atom = _json(atom_props)
        entity = _json(entity_props)
        file, stamp = str(atom.get("file", "")), str(atom.get("timestamp", ""))
        name = str(entity.get("name") or str(entity_id).removeprefix("entity:"))
        text = atom.get("text")
        if file and stamp and name:
            out.append((Path(file).name, stamp, text if isinstance(text, str) else None, name))
    return out


def _read_in_process(graph_file: Path) -> list | None:
    """The rows, read here when the file is unchanged since a clean close by this Kuzu; else None."""
    recorded = stamped_version(graph_file)
    if recorded is None:
        return None
    try:
        kuzu = load_backend("kuzu")
    except BackendUnavailable:
        return None  # the child reports the reason
    if kuzu_version(kuzu) != recorded:
        return None
    try:
        db = open_database(kuzu, graph_file, read_only=True)
        try:
            conn = kuzu.Connection(db)
            tables = {row[1] for row in conn.execute(TABLES).get_all()}
            rows = conn.execute(APPLIES_TO).get_all() if {"Node", "Edge"} <= tables else []
            conn.close()
        finally:
            close_database(db)
    except Exception as exc:  # e.g. a session holds the file; Kuzu says so in one line
        lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
        raise GraphLookupError(lines[0][:300] if lines else type(exc).__name__) from None
    return [list(row) for row in rows]


def _read_in_child(graph_file: Path) -> list:
    try:
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, str(graph_file), TABLES, APPLIES_TO], capture_output=True, text=True,
            timeout=TIMEOUT,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GraphLookupError(f"cannot read {graph_file.name}: {exc}") from None
    if done.returncode < 0:
        raise GraphLookupError(f"{graph_file.name} crashed Kuzu on open (signal {-done.returncode}); it looks corrupt")
    if done.returncode != 0:
        lines = [line.strip() for line in done.stderr.splitlines() if line.strip()]
        raise GraphLookupError(lines[-1][:300] if lines else f"graph reader exited {done.returncode}")
    try:
        rows = json.loads(done.stdout or "[]")
    except json.JSONDecodeError:
        raise GraphLookupError("graph reader answered something that is not JSON") from None
    if not isinstance(rows, list):
        raise GraphLookupError("graph reader answered something that is not a list of rows")
    return rows


def _json(value: object) -> dict:
    try:
        data = json.loads(value) if isinstance(value, str) else value
    except json.JSONDecodeError:
        return {}
    return data if isinstance(data, dict) else {}


def graph_entity_lookup(instance: Instance) -> EntityLookup:
    """An :data:`EntityLookup` over ``graph/graph.kuzu`` of ``instance``."""
    graph_file = instance.graph_dir / DB_FILE

    def lookup(atoms: Sequence[LoadedAtom]) -> dict[int, list[str]]:
        # Timestamps have one-second resolution, so the node's text prefix (when stored) tells
        # apart notes written in the same second.
        by_place: dict[tuple[str, str, str | None], list[str]] = {}
        for file_name, stamp, text, name in read_applies_to(graph_file):
            by_place.setdefault((file_name, stamp, text), []).append(name)
        out: dict[int, list[str]] = {}
        for a in atoms:
            for text in (a.atom.text[:TEXT_PREFIX], None):
                names = by_place.get((a.atom.file.name, a.atom.timestamp, text))
                if names:
                    out.setdefault(a.index, []).extend(n for n in names if n not in out.get(a.index, []))
        return out

    return lookup
