"""Mnemara 0.18's ``turns.sqlite`` -> ours, every row kept.

0.18 stores one row per turn with ``ts, role, content (JSON blocks or a plain
string), tool_uses, tokens_in, tokens_out, pin_label, compressed_read_stub``
and deletes rows on eviction, so every row it still has is live. Each row
becomes one of ours with the same id, timestamp and blocks:

- roles ``user``/``assistant``/``system`` stay; any other role (a renamed row,
  ``tool``) becomes ``user`` with ``meta.legacy_role`` naming the original;
- ``tokens_in``/``tokens_out`` and ``tool_uses`` go to ``meta``;
  ``compressed_read_stub`` becomes ``protected``;
- a pinned row keeps its pin; labels become slugs (unique: ``-<id>`` on a clash)
  and slot order follows 0.18's (sorted by label, then id);
- a ``marker`` row (``mark_segment``) stays on disk out of the window
  (``evicted``, ``meta.legacy_marker``) and the rows after it, up to the next
  marker, carry ``meta.segment`` with its name, so a segment still evicts or
  pins together.
"""
from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

from mnemara.store.rows import Turn

from mnemara.store.turns import ROLES, TurnStore

_SLUG_BAD = re.compile(r"[^A-Za-z0-9_.-]+")


def _blocks(raw: str | None) -> list[dict[str, Any]]:
    if raw is None:
        return [{"type": "text", "text": ""}]
    try:
        value = json.loads(raw)
    except ValueError:
        return [{"type": "text", "text": raw}]
    if isinstance(value, str):
        return [{"type": "text", "text": value}]
    if isinstance(value, list):
        out = []
        for item in value:
            if isinstance(item, dict) and isinstance(item.get("type"), str):
                out.append(item)
            else:
                out.append({"type": "text", "text": item if isinstance(item, str) else json.dumps(item)})
        return out or [{"type": "text", "text": ""}]
    return [{"type": "text", "text": raw}]


def _slug(label: str, row_id: int, taken: set[str]) -> str:
    base = _SLUG_BAD.sub("-", label.strip()).strip("-._")[:50] or "pinned"
    if not base[0].isalnum():
        base = "p" + base
    slug = base if base not in taken else f"{base}-{row_id}"
    taken.add(slug)
    return slug


def read_rows(path: Path) -> list[Turn]:
    """Every row of a 0.18 store as our :class:`Turn` objects (ids kept)."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        cols = {r[1] for r in conn.execute("PRAGMA table_info(turns)")}
        pick = ["id", "ts", "role", "content", "tool_uses", "tokens_in", "tokens_out"]
        pick += [c if c in cols else "NULL" for c in ("pin_label", "compressed_read_stub")]
        rows = conn.execute(f"SELECT {', '.join(pick)} FROM turns ORDER BY id").fetchall()
    finally:
        conn.close()
    pinned = sorted((r for r in rows if r[7] is not None and str(r[7]).strip()), key=lambda r: (str(r[7]), r[0]))
    taken: set[str] = set()
    slot = {r[0]: (pos, _slug(str(r[7]), r[0], taken)) for pos, r in enumerate(pinned)}
    turns: list[Turn] = []
    segment: str | None = None
    for row_id, ts, role, content, tool_uses, t_in, t_out, _label, stub in rows:
        meta: dict[str, Any] = {"migrated_from": "0.18"}
        if t_in is not None:
            meta["tokens_in"] = t_in
        if t_out is not None:
            meta["tokens_out"] = t_out
        if tool_uses:
            try:
                meta["tool_uses"] = json.loads(tool_uses)
            except ValueError:
                meta["tool_uses"] = tool_uses
        evicted = False
        if role == "marker":
            name = _blocks(content)[0].get("text", "")
            segment = str(name)
            meta["legacy_marker"] = segment
            blocks = [{"type": "text", "text": f"[segment marker {segment}]"}]
            role, evicted = "system", True
        else:
            blocks = _blocks(content)
            if segment is not None:
                meta["segment"] = segment
            if role not in ROLES:
                meta["legacy_role"] = role
                role = "user"
        pos, label = slot.get(row_id, (None, None))
        turns.append(Turn(id=int(row_id), role=role, blocks=blocks, tokens=0, created_at=str(ts or ""),
                          pin_label=label, slot_pos=pos, evicted=evicted and label is None,
                          protected=bool(stub), meta=meta))
    return turns


def convert_turns(src: Path, dst: Path) -> dict[str, int]:
    """Write every row of the 0.18 store ``src`` into a new store at ``dst``; returns counts."""
    turns = read_rows(src)
    with TurnStore(dst) as store:
        store.import_rows(turns, keep_ids=True, evict_live=False)
        counts = store.counts()
    return {"rows": len(turns), "pinned": counts["pinned"],
            "markers": sum(1 for t in turns if "legacy_marker" in t.meta)}
