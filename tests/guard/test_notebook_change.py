"""NotebookEdit questions show the change as a diff of the one cell it touches, named by id or
``cell-N`` as the bundled CLI names it; the other keys stay visible; anything the tool would refuse,
or a file that is no notebook, says why instead of showing a diff."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from mnemara.guard.change_preview import preview_change
from mnemara.guard.notebook_change import cell_change
from tests.guard.test_change_preview import _gate_request

NOTEBOOK = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
    {"id": "intro", "cell_type": "markdown", "metadata": {}, "source": ["# Title\n", "words"]},
    {"id": "load", "cell_type": "code", "metadata": {}, "outputs": [], "execution_count": 1,
     "source": "import json\ndata = json.load(open('a.json'))\n"},
]}


def _notebook(tmp_path: Path) -> Path:
    path = tmp_path / "work.ipynb"
    path.write_text(json.dumps(NOTEBOOK), encoding="utf-8")
    return path


def _texts(preview) -> list[str]:
    return [line.text for line in preview.lines]


def test_replace_by_id_diffs_that_cells_source(tmp_path: Path) -> None:
    path = _notebook(tmp_path)
    preview = preview_change("NotebookEdit", {"notebook_path": str(path), "cell_id": "load",
                                              "new_source": "import json\ndata = json.load(open('b.json'))\n"}, str(path))
    assert not preview.problem
    lines = _texts(preview)
    assert lines[0] == f"--- {path} cell 'load' (index 1) (now)" and lines[1] == f"+++ {path} cell 'load' (index 1) (after)"
    assert "-data = json.load(open('a.json'))" in lines and "+data = json.load(open('b.json'))" in lines
    assert " import json" in lines and preview.summary == "1 line removed, 1 added"
    assert preview.shown_keys == ("new_source",)  # cell_id and edit_mode are still shown as input
    assert json.loads(path.read_text(encoding="utf-8")) == NOTEBOOK  # nothing written


def test_cell_n_names_an_index_and_a_list_source_is_joined() -> None:
    change = cell_change(json.dumps(NOTEBOOK), {"cell_id": "cell-0", "new_source": "# Title\nmore words"})
    assert (change.before, change.after, change.label) == ("# Title\nwords", "# Title\nmore words", "cell 0")


def test_insert_and_delete() -> None:
    text = json.dumps(NOTEBOOK)
    first = cell_change(text, {"edit_mode": "insert", "cell_type": "code", "new_source": "x = 1"})
    assert (first.before, first.after, first.label) == ("", "x = 1", "new cell 0 (first)")
    after = cell_change(text, {"edit_mode": "insert", "cell_id": "intro", "new_source": "y = 2"})
    assert after.label == "new cell 1 (after cell 'intro' (index 0))" and after.after == "y = 2"
    gone = cell_change(text, {"edit_mode": "delete", "cell_id": "load", "new_source": ""})
    assert gone.after == "" and gone.before.startswith("import json") and gone.label.endswith("(deleted)")


@pytest.mark.parametrize(("text", "tool_input", "why"), [
    (None, {"cell_id": "load", "new_source": "x"}, "the notebook does not exist"),
    ("not json", {"cell_id": "load", "new_source": "x"}, "not a notebook"),
    (json.dumps({"cells": "nope"}), {"cell_id": "load", "new_source": "x"}, "not a notebook"),
    (json.dumps(NOTEBOOK), {"cell_id": "missing", "new_source": "x"}, "no cell 'missing'"),
    (json.dumps(NOTEBOOK), {"cell_id": "cell-9", "new_source": "x"}, "no cell 'cell-9'"),
    (json.dumps(NOTEBOOK), {"new_source": "x"}, "no cell_id"),
    (json.dumps(NOTEBOOK), {"cell_id": "load", "new_source": "x", "edit_mode": "append"}, "edit_mode 'append'"),
    (json.dumps(NOTEBOOK), {"cell_id": "load", "new_source": ["x"]}, "new_source is not text"),
    (json.dumps(NOTEBOOK), {"cell_id": 3, "new_source": "x"}, "cell_id is not text"),
])
def test_what_the_tool_would_refuse_says_why(text, tool_input, why) -> None:
    change = cell_change(text, tool_input)
    assert why in change.problem and not change.after


def test_the_gate_asks_with_the_cell_diff_and_keeps_the_other_keys(mnemara_home: Path, isolated_home: Path) -> None:
    path = _notebook(isolated_home)
    request = _gate_request(mnemara_home, "NotebookEdit", {"notebook_path": str(path), "cell_id": "load",
                                                           "new_source": "print('hi')\x1b[2J"})
    question = request.question()
    assert "change (2 lines removed, 1 added; shown escaped" in question and "    +print('hi')\\x1b[2J" in question
    assert "\x1b" not in question  # the model's escape is shown, never obeyed
    assert "  cell_id: load\n" in question and "new_source" not in question.split("change (")[0]
