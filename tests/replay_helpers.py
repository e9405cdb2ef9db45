"""Shared builders for the replay tests."""
from __future__ import annotations

import hashlib
from datetime import datetime, timedelta, timezone
from pathlib import Path

from mnemara.store.instance import Instance
from mnemara.memory.notes import append_note, parse_text
from mnemara.replay.archive import read_entries
from mnemara.replay.load import block_text

NOW = datetime(2026, 5, 10, 22, 0, tzinfo=timezone.utc)

LEASE = [
    "The lease timeout in server.py is 30 seconds because the load balancer drops idle connections.",
    "Raised the lease timeout in server.py because idle connections kept dropping at the load balancer.",
    "Idle connections dropped by the load balancer explain the lease timeout in server.py.",
]
POLLING = [
    "I polled the build status three times in a row without progress.",
    "Polled the build status three times again; no progress, should have waited.",
    "Caught myself polling the build status three times with no progress.",
]


def make_instance(name: str = "rep") -> Instance:
    return Instance.create(name)


def add(inst: Instance, text: str, category: str = "insight", hours_ago: float = 1.0) -> None:
    append_note(inst.memory_dir, text, category, when=NOW - timedelta(hours=hours_ago))


def tree_hash(root: Path, skip: tuple[str, ...] = ()) -> str:
    """Hash of every path, mode and byte under ``root`` (dirs included), except names in ``skip``."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if path.name in skip:
            continue
        digest.update(str(path.relative_to(root)).encode())
        stat = path.stat()
        digest.update(str(stat.st_mode).encode())
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def where_is_every_atom(inst: Instance) -> dict[tuple[str, str, str], int]:
    """(timestamp, category, text) -> how many places hold it: day files plus archive entries."""
    counts: dict[tuple[str, str, str], int] = {}
    for path in sorted(inst.memory_dir.glob("*.md")):
        for atom in parse_text(path.read_text(encoding="utf-8"), path):
            key = (atom.timestamp, atom.category, atom.text)
            counts[key] = counts.get(key, 0) + 1
    for path in sorted(inst.archive_dir.glob("*.md")):
        for entry in read_entries(path):
            atoms = parse_text(entry.raw.decode("utf-8"), path)
            assert len(atoms) == 1, entry
            key = (atoms[0].timestamp, atoms[0].category, block_text(entry.raw))
            counts[key] = counts.get(key, 0) + 1
    return counts
