"""Tool results as a person reads them (shared by the panel and the REPL).

A result can arrive as a string, a list of content blocks, or a string that is
itself JSON (often a list of blocks whose text is JSON again). Each layer is
unwrapped and JSON is pretty-printed, so ``[{"text": "{\\"ok\\": true}"}]``
reads as ``{"ok": true}`` laid out over lines.
"""
from __future__ import annotations

import json

from mnemara.core.blocks import result_text

MAX_DEPTH = 3


def readable_result(content: object, _depth: int = 0) -> str:
    """The result's text (:func:`mnemara.core.blocks.result_text`), JSON inside it unwrapped and pretty-printed."""
    if content is None:
        return ""
    if isinstance(content, list) and content and all(isinstance(b, dict) and "text" in b for b in content):
        return "\n".join(readable_result(b.get("text"), _depth + 1) for b in content)
    if isinstance(content, list) and _depth == 0 and content and all(isinstance(b, dict) for b in content):
        content = result_text(content)
    if isinstance(content, str):
        stripped = content.strip()
        if _depth < MAX_DEPTH and stripped[:1] in "[{" and stripped[-1:] in "]}":
            try:
                return readable_result(json.loads(stripped), _depth + 1)
            except ValueError:
                return content
        return content
    if isinstance(content, (dict, list)):
        return json.dumps(content, ensure_ascii=False, indent=2, default=str)
    return str(content)


def preview_lines(text: str, lines: int = 3, width: int = 160) -> str:
    """The first ``lines`` lines (each cut at ``width``) and how many more there are."""
    all_lines = text.split("\n")
    shown = [line if len(line) <= width else line[: width - 1] + "…" for line in all_lines[:lines]]
    if len(all_lines) > lines:
        shown.append(f"… {len(all_lines) - lines} more line(s)")
    return "\n".join(shown)
