"""``mnemara memory list``: every note with its id, time, category and status, filtered."""
from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

from mnemara.core.errors import UsageError
from mnemara.memory import provenance
from mnemara.memory.notes import all_notes, parse_file, validate_category
from mnemara.memory.status import STATUSES, StatusBook

LIST_STATUSES = (*STATUSES, "all")


def list_notes(memory_dir: Path, *, day: str | None = None, category: str | None = None,
               status: str = "all", grep: str | None = None) -> list[dict[str, Any]]:
    """The notes of the day files matching every filter given, oldest file first, in file order.

    ``category`` matches the category or, ending in ``/``, every category under it;
    ``grep`` is a case-insensitive substring of the text. Bad filters raise :class:`UsageError`.
    """
    memory_dir = Path(memory_dir)
    if status not in LIST_STATUSES:
        raise UsageError(f"unknown status {status!r}: use one of {', '.join(LIST_STATUSES)}")
    if category is not None:
        category = category.strip()
        validate_category(category.rstrip("/"))
    if grep is not None and not grep.strip():
        raise UsageError("--grep needs some text to look for")
    if day is not None:
        try:
            date.fromisoformat(day)
        except ValueError:
            raise UsageError(f"invalid day {day!r}: use YYYY-MM-DD") from None
        path = memory_dir / f"{day}.md"
        try:
            notes = parse_file(path) if path.is_file() else []
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"cannot read memory/{day}.md: {exc}") from None
    else:
        notes = all_notes(memory_dir)
    book = StatusBook.load(memory_dir)
    written_by = provenance.load(memory_dir)
    out = []
    for note in notes:
        state = book.status_of(note)
        if status != "all" and state != status:
            continue
        if category is not None and not (note.category == category or (
                category.endswith("/") and note.category.startswith(category))):
            continue
        if grep is not None and grep.casefold() not in note.text.casefold():
            continue
        item: dict[str, Any] = {"id": note.id, "ts": note.timestamp, "category": note.category, "status": state,
                                "text": note.text, "file": note.location, "line": note.line,
                                "provenance": provenance.describe(written_by.get(note.id))}
        entry = book.entry(note)
        if entry and state != "active":
            item["reason"] = entry.get("reason", "")
            if entry.get("superseded_by"):
                item["superseded_by"] = entry["superseded_by"]
        out.append(item)
    return out


def one_line(item: dict[str, Any], width: int = 80) -> str:
    """``<id>  <time>  <category>  <status>  <first line of text>  [by <who wrote it>]``."""
    first = next((line.strip() for line in item["text"].splitlines() if line.strip()), "")
    if len(first) > width:
        first = first[: width - 1] + "…"
    by = f"  [by {item['provenance']}]" if item.get("provenance") else ""
    return f"{item['id']}  {item['ts']}  {item['category']}  {item['status']}  {first}{by}"
