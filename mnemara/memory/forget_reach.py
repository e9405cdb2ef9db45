"""How far ``mnemara forget`` reaches beyond the note files: every row of turns.sqlite,
the spool and prompt history, and graph node properties that quote the text.

A note's text travels: the user typed it, the model repeated it, a tool call carried
it, a pinned slot or a graph node property holds a copy. :func:`pattern_for` matches
every form of it (the note's text, the query the user forgot by, their JSON-escaped
forms, any letter case). :func:`redact_turns` rewrites each row of ``turns.sqlite``
that holds it (content and meta, pinned slots and evicted rows too, damaged rows by
their raw text), then vacuums the file so the old bytes leave the disk, and scans
again: a row that still holds the text is named in the receipt with its id.
"""
from __future__ import annotations

import json
import os
import re
import sqlite3
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from mnemara.core.fsutil import rewrite_locked

REDACTED = "[forgotten]"
OWN_FILES = (".prompt_history", "spool.jsonl", "unsent.json")  # instance files holding typed text that forget rewrites
REQUESTS_DIR = "requests"  # the recorded API calls (mnemara.store.request_log): every one holds the window it sent
MIN_NEEDLE = 4


def needles_for(texts: Iterable[str], query: str | None = None) -> list[str]:
    """Every stored form of ``texts`` and ``query`` (as typed, JSON-escaped), longest first."""
    forms: set[str] = set()
    for text in [*texts, *([query] if query else [])]:
        text = text.strip()
        forms |= {text, json.dumps(text)[1:-1], json.dumps(text, ensure_ascii=False)[1:-1]}
    return sorted((f for f in forms if len(f) >= MIN_NEEDLE), key=len, reverse=True)


def pattern_for(texts: Iterable[str], query: str | None = None) -> re.Pattern[str] | None:
    """A case-insensitive pattern for every stored form of ``texts`` and ``query``."""
    return pattern_of(needles_for(texts, query))


def pattern_of(needles: list[str]) -> re.Pattern[str] | None:
    """One case-insensitive pattern matching any of ``needles`` as they are (None for none)."""
    if not needles:
        return None
    return re.compile("|".join(re.escape(n) for n in needles), re.IGNORECASE)


def _scrub(value: object, pattern: re.Pattern[str]) -> object:
    if isinstance(value, str):
        return pattern.sub(REDACTED, value)
    if isinstance(value, list):
        return [_scrub(v, pattern) for v in value]
    if isinstance(value, dict):
        return {k: _scrub(v, pattern) for k, v in value.items()}
    return value


def scrub_json_text(raw: str, pattern: re.Pattern[str]) -> str:
    """``raw`` with the text redacted: inside the parsed JSON when it parses, else in the raw text."""
    try:
        value = json.loads(raw)
    except (TypeError, ValueError):
        return pattern.sub(REDACTED, raw)
    return json.dumps(_scrub(value, pattern), ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def rows_holding(db_path: Path, pattern: re.Pattern[str]) -> list[int]:
    """Ids of every row (live, evicted, pinned, damaged) whose raw content or meta holds the text."""
    if not Path(db_path).exists():
        return []
    conn = sqlite3.connect(db_path)  # only reads; a read-only connection would leave -wal/-shm files behind
    try:
        rows = conn.execute("SELECT id, content, meta FROM turns ORDER BY id").fetchall()
    finally:
        conn.close()
    return [rid for rid, content, meta in rows if pattern.search(str(content)) or pattern.search(str(meta or ""))]


def redact_turns(db_path: Path, ids: list[int], pattern: re.Pattern[str]) -> dict[str, Any]:
    """Redact rows ``ids`` in place, vacuum the file, and say which rows still hold the text."""
    from mnemara.store.turns import TurnStore

    with TurnStore(db_path) as store:  # one transaction for all rows, then vacuumed
        store.redact(ids, lambda raw: scrub_json_text(raw, pattern))
    left = rows_holding(db_path, pattern)
    return {"turn_row_ids": list(ids), "left_in_turns": [f"turns.sqlite row {rid}" for rid in left]}


def scrub_own_files(root: Path, pattern: re.Pattern[str]) -> list[str]:
    """Redact the text in the instance's prompt history, spool and recorded API calls; returns the files changed."""
    changed = []
    for name in OWN_FILES:
        path = Path(root) / name
        if path.is_file() and rewrite_locked(path, lambda old: pattern.sub(REDACTED, old)):
            changed.append(name)
    calls = Path(root) / REQUESTS_DIR
    for path in sorted(calls.glob("*.json")) if calls.is_dir() else []:
        if rewrite_locked(path, lambda old: scrub_json_text(old, pattern) if pattern.search(old) else None):
            changed.append(f"{REQUESTS_DIR}/{path.name}")
    return changed


def graph_scrubber(pattern: re.Pattern[str]) -> Callable[[str], str]:
    """Redacts the text inside a graph node's or edge's JSON properties."""
    return lambda props: scrub_json_text(props, pattern) if props else props


CHUNK = 4 * 1024 * 1024


def files_holding(root: Path, needles: list[str], skip: Callable[[Path], bool] = lambda path: False) -> list[str]:
    """Files under ``root`` (relative paths) whose bytes hold a needle in any letter case, binary ones
    too (SQLite, LanceDB and Kuzu keep strings as UTF-8). Read in overlapping chunks, so no file is
    too big to check; bytes are compared, never decoded, so a read costs about what the disk does."""
    forms = {variant.encode("utf-8").lower() for n in needles for variant in (n, n.lower(), n.upper())}
    if not forms:
        return []
    overlap = max(map(len, forms)) - 1  # a needle's bytes, however a chunk edge splits them
    out = []
    for folder, _, names in os.walk(root):
        for name in names:
            path = Path(folder, name)
            if skip(path) or not path.is_file():  # a FIFO or a device would block or never end
                continue
            try:
                with open(path, "rb") as fh:
                    tail = b""
                    while block := fh.read(CHUNK):
                        window = (tail + block).lower()
                        if any(form in window for form in forms):
                            out.append(str(path.relative_to(root)))
                            break
                        tail = block[-overlap:] if overlap else b""
            except OSError:
                continue
    return sorted(out)
