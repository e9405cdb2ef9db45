"""Bring an instance written before note ids up to them (run by ``mnemara migrate``; idempotent).

Nothing here is needed for old files to work: ids are computed from the day
files and old byte-offset ids keep resolving. This writes the two places that
*stored* old ids so they name notes the new way:

* ``memory/status.json`` version 1 is written back keyed by note id;
* graph nodes ``memory:<day>@<timestamp>#<offset>`` (label ``memory_atom``) are
  renamed ``note:<id>``, matched by their file, timestamp and text prefix; a
  node whose note is gone keeps its name.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mnemara.memory.notes import all_notes
from mnemara.memory.status import migrate_status


def legacy_graph_renames(memory_dir: Path, rows: list[tuple[str, str]]) -> dict[str, str]:
    """``{old node id: note:<id>}`` for the ``memory:`` nodes among ``rows`` (id, properties JSON)."""
    notes = all_notes(memory_dir, archive=True)
    by_place: dict[tuple[str, str], list[Any]] = {}
    for note in notes:
        by_place.setdefault((note.file.name, note.timestamp), []).append(note)
    out: dict[str, str] = {}
    for node_id, props in rows:
        if not node_id.startswith("memory:"):
            continue
        try:
            data = json.loads(props or "{}")
        except json.JSONDecodeError:
            continue
        if not isinstance(data, dict):
            continue
        place = (Path(str(data.get("file", ""))).name, str(data.get("timestamp", "")))
        prefix = str(data.get("text", ""))
        found = [n for n in by_place.get(place, []) if n.text.startswith(prefix)]
        if found:
            out[node_id] = found[0].ref
    return out


def migrate_note_ids(root: Path) -> list[str]:
    """Upgrade ``status.json`` and graph node names of the instance at ``root``; lines saying what changed."""
    root = Path(root)
    lines = []
    if migrate_status(root / "memory"):
        lines.append("memory/status.json: keyed by note id")
    graph_file = root / "graph" / "graph.kuzu"
    if graph_file.exists():
        from mnemara.memory.forget import graph_nodes_of
        from mnemara.memory.scrub import rewrite_graph

        rows = graph_nodes_of(root)
        if rows is None:
            return lines + ["graph: not readable now (a session holding it, or a damaged file); node names left as they are"]
        renames = legacy_graph_renames(root / "memory", rows)
        if renames:
            rewrite_graph(graph_file, [], rename=renames)
            lines.append(f"graph: {len(renames)} note node(s) renamed note:<id>")
    return lines
