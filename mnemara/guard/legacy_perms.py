"""Mnemara 0.18's ``permissions.json`` -> ours.

0.18: ``{"Bash": {"allowed_patterns": ["^ls"]}}``; ours: ``{"allowed_patterns": {"Bash": ["^ls"]}}``.
Both match a pattern anywhere in the target (``re.search``), so patterns carry over unchanged.
"""
from __future__ import annotations

from typing import Any


def fold_legacy(raw: dict[str, Any]) -> dict[str, Any]:
    """``raw`` with every 0.18 ``{tool: {"allowed_patterns": [...]}}`` entry moved into our table.

    Other keys are kept; patterns already in our table are not repeated.
    """
    legacy = {k: v for k, v in raw.items() if k != "allowed_patterns" and isinstance(v, dict) and "allowed_patterns" in v}
    if not legacy or not isinstance(raw.get("allowed_patterns", {}), dict):
        return raw
    out = {k: v for k, v in raw.items() if k not in legacy}
    table = {tool: list(p) if isinstance(p, list) else p for tool, p in (raw.get("allowed_patterns") or {}).items()}
    for tool, bucket in legacy.items():
        patterns = bucket.get("allowed_patterns")
        merged = table.get(tool, [])
        merged = list(merged) if isinstance(merged, list) else [merged]
        for pattern in patterns if isinstance(patterns, list) else [patterns]:
            if pattern not in merged:
                merged.append(pattern)
        table[tool] = merged
    out["allowed_patterns"] = table
    return out
