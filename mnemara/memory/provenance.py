"""Who wrote each note: ``memory/provenance.jsonl``, one JSON line per note, appended when it is written.

So a user can ask "where did this fact come from?" and open the turn. Writers and what they add:

* ``user``: ``mnemara note`` or ``/note`` (``via``);
* ``agent``: ``write_memory``, with the row id of the turn's user message in ``turns.sqlite``
  (``turn_row``) and the tool call id (``tool_call``);
* ``replay``, ``import``, ``migrate``: a note brought in by one of them (``migrate`` marks the notes
  an instance had before it was migrated, with no record of their own).

A note with no line here was written before provenance was recorded, or by hand. The file holds ids
and ids only (never a note's text), so ``mnemara forget`` has nothing to rewrite in it. A line that
cannot be read is skipped: provenance informs, it never blocks a read or a write.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mnemara.core.debuglog import now_iso
from mnemara.core.fsutil import locked_append

PROVENANCE_FILE = "provenance.jsonl"
WRITERS = ("user", "agent", "replay", "import", "migrate")


def record(memory_dir: Path, note_id: str, by: str, **detail: Any) -> None:
    """Append who wrote note ``note_id`` (``by`` one of :data:`WRITERS`); details with a None value are left out."""
    if by not in WRITERS:
        raise ValueError(f"unknown writer {by!r}: one of {', '.join(WRITERS)}")
    entry = {"id": note_id, "by": by, "at": now_iso(), **{k: v for k, v in detail.items() if v is not None}}
    locked_append(Path(memory_dir) / PROVENANCE_FILE, json.dumps(entry, ensure_ascii=False) + "\n", own_line=True)


def load(memory_dir: Path) -> dict[str, dict[str, Any]]:
    """Note id -> its provenance entry (the first one written for that id)."""
    out: dict[str, dict[str, Any]] = {}
    try:
        raw = (Path(memory_dir) / PROVENANCE_FILE).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return out
    for line in raw.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and isinstance(entry.get("id"), str):
            out.setdefault(entry["id"], entry)
    return out


def describe(entry: dict[str, Any] | None) -> str:
    """One line: "agent (turn row 12, tool call toolu_01...)", "user (mnemara note)", or "unknown"."""
    if not entry:
        return "unknown"  # written before provenance was recorded, or by hand (the module doc says so)
    parts = []
    if entry.get("via"):
        parts.append(str(entry["via"]))
    if entry.get("turn_row") is not None:
        parts.append(f"turn row {entry['turn_row']}")
    if entry.get("tool_call"):
        parts.append(f"tool call {entry['tool_call']}")
    return str(entry.get("by", "unknown")) + (f" ({', '.join(parts)})" if parts else "")


def record_missing(memory_dir: Path, note_ids: list[str], by: str) -> int:
    """Record ``by`` for every note of ``note_ids`` with no provenance yet; returns how many."""
    known = load(memory_dir)
    missing = [i for i in note_ids if i not in known]
    for note_id in missing:
        record(memory_dir, note_id, by)
    return len(missing)


def for_hit(memory_dir: Path, hit_id: str, known: dict[str, dict[str, Any]]) -> str | None:
    """The provenance line of a search hit (``note:<id>``), or None for a wiki page or entry."""
    if not hit_id.startswith("note:"):
        return None
    return describe(known.get(hit_id.removeprefix("note:")))
