"""A deterministic, tool-heavy coding session for tests and benchmarks.

Rows look like the ones the turn engine persists: a user text row, then an
assistant row whose blocks interleave thinking, text, ``tool_use`` and the
matching ``tool_result``. Files are read, edited, re-read and written, so every
eviction and compression strategy has something to act on.
"""
from __future__ import annotations

import random
from typing import Any

from mnemara.store.turns import TurnStore


def _source(rng: random.Random, name: str, lines: int) -> str:
    out = [f'"""Module {name}."""', "import os", ""]
    for i in range(lines // 4):
        out += [f"def f{i}_{rng.randint(0, 999)}(x):", f"    return x * {rng.randint(1, 99)}", ""]
    return "\n".join(out)


def _numbered(text: str) -> str:
    return "\n".join(f"{i:6d}\t{line}" for i, line in enumerate(text.splitlines(), 1))


def session_rows(turns: int = 60, seed: int = 7, files: int = 6) -> list[tuple[str, list[dict[str, Any]]]]:
    """``turns`` user/assistant pairs as (role, blocks); same arguments, same rows."""
    rng = random.Random(seed)
    paths = [f"/home/dev/project/mod{i}.py" for i in range(files)]
    bodies = {p: _source(rng, p, rng.randint(40, 160)) for p in paths}
    rows: list[tuple[str, list[dict[str, Any]]]] = []
    for n in range(turns):
        path = paths[rng.randrange(files)]
        rows.append(("user", [{"type": "text", "text": f"step {n}: look at {path} and improve it"}]))
        blocks: list[dict[str, Any]] = [
            {"type": "thinking", "thinking": " ".join(f"consider option {rng.randint(0, 99)}" for _ in range(rng.randint(20, 80)))},
            {"type": "text", "text": f"Reading {path}."},
        ]
        uid = f"toolu_{n:04d}"
        blocks.append({"type": "tool_use", "id": uid + "r", "name": "Read", "input": {"file_path": path}})
        blocks.append({"type": "tool_result", "tool_use_id": uid + "r", "content": _numbered(bodies[path])})
        kind = n % 3
        if kind == 0:
            old = bodies[path].splitlines()[3]
            new = old.replace("x", "value")
            blocks.append({"type": "tool_use", "id": uid + "e", "name": "Edit",
                           "input": {"file_path": path, "old_string": old, "new_string": new}})
            bodies[path] = bodies[path].replace(old, new, 1)
            blocks.append({"type": "tool_result", "tool_use_id": uid + "e",
                           "content": f"The file {path} has been updated.\n" + _numbered(bodies[path])[:600]})
        elif kind == 1:
            cmd = f"cd /home/dev/project && python -m pytest -q tests/test_mod{rng.randrange(files)}.py"
            blocks.append({"type": "tool_use", "id": uid + "b", "name": "Bash", "input": {"command": cmd}})
            blocks.append({"type": "tool_result", "tool_use_id": uid + "b",
                           "content": "\n".join(f"tests/test_x.py::test_{i} PASSED" for i in range(rng.randint(5, 40)))})
        else:
            bodies[path] = _source(rng, path, rng.randint(40, 160))
            blocks.append({"type": "tool_use", "id": uid + "w", "name": "Write",
                           "input": {"file_path": path, "content": bodies[path]}})
            blocks.append({"type": "tool_result", "tool_use_id": uid + "w", "content": f"File written: {path}"})
        blocks.append({"type": "text", "text": f"Done with step {n}."})
        rows.append(("assistant", blocks))
    return rows


def fill_store(store: TurnStore, turns: int = 60, seed: int = 7) -> int:
    """Append :func:`session_rows` to ``store``; returns the number of rows."""
    return store.append_many(session_rows(turns, seed))
