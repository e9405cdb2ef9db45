"""Read ``applies_to`` edges from the instance graph without writing anything.

The graph (see :mod:`mnemara.memory.surfaces` for its conventions) keeps a
memory atom as a ``memory_atom`` node whose properties hold its ``file`` and
``timestamp``, linked by ``applies_to`` edges to ``entity`` nodes. Replay
matches atoms by file name and timestamp, not by node id, so nodes named the
way they were before note ids (``memory:<day>@<ts>#<offset>``) count as well.

Kuzu is opened read-only in a child process: a dry run must not touch the
graph file, and a damaged file that crashes Kuzu must not take replay down.
Any failure raises :class:`GraphLookupError` and replay carries on without it.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Sequence

from mnemara.instance import Instance
from mnemara.memory.graph import DB_FILE  # kuzu itself is imported only in the child
from mnemara.replay.augment import EntityLookup
from mnemara.replay.load import LoadedAtom

TIMEOUT = 60
TEXT_PREFIX = 200  # what mnemara.memory.surfaces stores as a memory_atom's text
_CHILD = r"""
import json, sys, kuzu
db = kuzu.Database(sys.argv[1], read_only=True)
conn = kuzu.Connection(db)
tables = {row[1] for row in conn.execute("CALL show_tables() RETURN *").get_all()}
rows = []
if {"Node", "Edge"} <= tables:
    rows = conn.execute(
        "MATCH (a:Node)-[e:Edge]->(b:Node) WHERE e.relationship = 'applies_to' "
        "RETURN a.properties, b.id, b.properties"
    ).get_all()
json.dump(rows, sys.stdout)
"""


class GraphLookupError(Exception):
    """The graph could not be read; ``str(exc)`` says why in one line."""


def read_applies_to(graph_file: Path) -> list[tuple[str, str, str | None, str]]:
    """``(day file name, timestamp, text prefix or None, entity)`` per ``applies_to`` edge of a memory atom."""
    if not graph_file.exists():
        return []
    if not graph_file.is_file():
        raise GraphLookupError(f"{graph_file} is not a Kuzu database file")
    try:
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, str(graph_file)], capture_output=True, text=True, timeout=TIMEOUT
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
