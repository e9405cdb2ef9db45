"""Token estimates without a tokenizer: about four characters a token for English and code."""
from __future__ import annotations

import json
from typing import Any

CHARS_PER_TOKEN = 4


def estimate_text(text: str) -> int:
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN if text else 0


def estimate_blocks(blocks: list[dict[str, Any]]) -> int:
    """Estimate the tokens of a list of content blocks as the model would see them."""
    total = 0
    for block in blocks:
        kind = block.get("type")
        if kind == "text":
            total += estimate_text(block.get("text", ""))
        elif kind == "thinking":
            total += estimate_text(block.get("thinking", ""))
        elif kind == "tool_use":
            total += estimate_text(block.get("name", "")) + estimate_text(
                json.dumps(block.get("input", {}), sort_keys=True, ensure_ascii=False)
            )
        elif kind == "tool_result":
            content = block.get("content", "")
            if not isinstance(content, str):
                content = json.dumps(content, sort_keys=True, ensure_ascii=False)
            total += estimate_text(content)
        else:
            total += estimate_text(json.dumps(block, sort_keys=True, ensure_ascii=False))
    return total


MAX_TOKEN_COUNT = 100_000_000  # far above any model's context; larger values are typos


def parse_token_count(text: str) -> int:
    """Parse ``20000``, ``500k``, ``1m`` (case-insensitive, ``_`` and ``,`` allowed). Raises ValueError."""
    s = text.strip().lower().replace("_", "").replace(",", "")
    mult = 1
    if s.endswith("k"):
        mult, s = 1_000, s[:-1]
    elif s.endswith("m"):
        mult, s = 1_000_000, s[:-1]
    try:
        value = float(s) if "." in s else int(s)
    except ValueError:
        raise ValueError(f"not a token count: {text!r} (use e.g. 20000, 500k, 1m)") from None
    n = int(value * mult)
    if n <= 0:
        raise ValueError(f"token count must be positive, got {text!r}")
    if n > MAX_TOKEN_COUNT:
        raise ValueError(f"token count {text!r} is too large (at most 100m)")
    return n
