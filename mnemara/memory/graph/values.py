"""Kuzu values as JSON-able data (shared by the graph store and the ``graph_query`` child process).

No imports beyond the standard library: the child process of :mod:`mnemara.memory.graph.bounded_query`
loads this module and nothing else of Mnemara.
"""
from __future__ import annotations

import json
from typing import Any


def json_value(text: object) -> Any:
    """A JSON property decoded (anything that is not JSON text is returned as it is)."""
    try:
        return json.loads(text) if isinstance(text, str) else text
    except json.JSONDecodeError:
        return text


def plain_value(value: object) -> Any:
    """A Kuzu value as JSON-able data (internal ids dropped, JSON properties decoded)."""
    if isinstance(value, dict):
        out = {k: plain_value(v) for k, v in value.items() if k not in ("_id", "_src", "_dst")}
        if isinstance(out.get("properties"), str):
            out["properties"] = json_value(out["properties"])
        return out
    if isinstance(value, (list, tuple)):
        return [plain_value(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)
