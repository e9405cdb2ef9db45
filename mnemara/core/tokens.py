"""Token estimates without a tokenizer: about four characters a token for English and code.

Every estimate in Mnemara comes from here."""
from __future__ import annotations

from typing import Any

from mnemara.core.blocks import block_text, to_json

CHARS_PER_TOKEN = 4


def estimate_text(text: str) -> int:
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN if text else 0


def estimate_blocks(blocks: list[dict[str, Any]]) -> int:
    """Estimate the tokens of a list of content blocks as the model would see them
    (the text of each block as :func:`mnemara.core.blocks.block_text` gives it)."""
    total = 0
    for block in blocks:
        if block.get("type") == "tool_use":  # name and input are separate fields to the model
            total += estimate_text(str(block.get("name", ""))) + estimate_text(to_json(block.get("input", {})))
        else:
            total += estimate_text(block_text(block))
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
