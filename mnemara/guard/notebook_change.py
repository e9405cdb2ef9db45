"""What a NotebookEdit call would do to one cell of a Jupyter notebook, for its permission question.

The bundled CLI's NotebookEdit names a cell by its ``id`` or, when no cell has that id, by
``cell-N`` (its index from 0). ``replace`` (the default) sets the cell's source, ``delete``
removes the cell, and ``insert`` adds a cell after the one named, or first when none is named.
:func:`cell_change` finds that cell in the notebook's text and returns its source before and
after the call, so the question can show the change as a diff of that cell, or why it cannot:
a notebook that does not parse, a cell that is not there, an input the tool would refuse.
Nothing here writes a file; the caller reads it (:func:`mnemara.guard.change_preview.read_text_file`).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass

EDIT_MODES = ("replace", "insert", "delete")
_INDEX_NAME = re.compile(r"cell-(\d+)")


@dataclass(frozen=True)
class CellChange:
    """One cell's source before and after a NotebookEdit call; ``problem`` when it cannot be known."""

    before: str = ""
    after: str = ""
    label: str = ""  # names the cell in the diff's header: `cell "abc"`, `cell 3`, `new cell 4`
    problem: str = ""


def cell_change(notebook_text: str | None, tool_input: dict[str, object]) -> CellChange:
    """The change ``tool_input`` (a NotebookEdit call) makes to a cell of ``notebook_text``
    (None: the notebook does not exist)."""
    mode = tool_input.get("edit_mode") or "replace"
    if mode not in EDIT_MODES:
        return CellChange(problem=f"edit_mode {mode!r} is not one of {', '.join(EDIT_MODES)}")
    new_source = tool_input.get("new_source", "")
    if not isinstance(new_source, str):
        return CellChange(problem="new_source is not text")
    if notebook_text is None:
        return CellChange(problem="the notebook does not exist, so this edit would fail")
    cells = _cells(notebook_text)
    if cells is None:
        return CellChange(problem="the file is not a notebook with a list of cells: no diff")
    cell_id = tool_input.get("cell_id")
    if cell_id is not None and not isinstance(cell_id, str):
        return CellChange(problem="cell_id is not text")
    if not cell_id:
        if mode != "insert":
            return CellChange(problem="no cell_id: only an insert may leave it out, so this edit would fail")
        return CellChange("", new_source, "new cell 0 (first)")
    index, named = _find(cells, cell_id)
    if index is None:
        return CellChange(problem=f"no cell {cell_id!r} in the notebook, so this edit would fail")
    if mode == "insert":
        return CellChange("", new_source, f"new cell {index + 1} (after {named})")
    source = _source(cells[index])
    if source is None:
        return CellChange(problem=f"{named} has no text source: no diff")
    return CellChange(source, "" if mode == "delete" else new_source,
                      f"{named} (deleted)" if mode == "delete" else named)


def _cells(text: str) -> list[dict[str, object]] | None:
    try:
        notebook = json.loads(text)
    except ValueError:
        return None
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(cells, list) or not all(isinstance(cell, dict) for cell in cells):
        return None
    return cells


def _find(cells: list[dict[str, object]], cell_id: str) -> tuple[int | None, str]:
    """The index of the cell ``cell_id`` names (by id first, then as ``cell-N``) and how to call it."""
    for index, cell in enumerate(cells):
        if cell.get("id") == cell_id:
            return index, f"cell {cell_id!r} (index {index})"
    match = _INDEX_NAME.fullmatch(cell_id)
    if match and int(match.group(1)) < len(cells):
        index = int(match.group(1))
        return index, f"cell {index}"
    return None, ""


def _source(cell: dict[str, object]) -> str | None:
    source = cell.get("source", "")
    if isinstance(source, str):
        return source
    if isinstance(source, list) and all(isinstance(part, str) for part in source):
        return "".join(part for part in source if isinstance(part, str))
    return None
