"""One stored row of ``turns.sqlite``: :class:`Turn`, the :class:`Window` the next turn is built
from, and how a row is read (decoded without ever raising) and written (its JSON).

``turns.sqlite`` is a plain file: another program, a bad import or a disk error
can leave a row whose content is not JSON, not a list of typed blocks, or whose
meta has a field of the wrong type. Such a row must not take down ``run`` or
``show``: :func:`decode_row_parts` says what is wrong with it, the store marks
the :class:`Turn` as damaged (shown as such, never sent to the
model) and everything else goes on.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Protocol

from mnemara.core.errors import UsageError

# Block fields the rest of Mnemara reads, and the types it expects of them.
_BLOCK_FIELDS: dict[str, dict[str, tuple[type, ...]]] = {
    "text": {"text": (str,)},
    "thinking": {"thinking": (str,)},
    "tool_use": {"name": (str,), "input": (dict,)},
    "tool_result": {"tool_use_id": (str,), "content": (str, list, type(None))},
}
_NUMBER = (int, float)
# Meta fields Mnemara writes and reads back, and their types (others are kept as they are).
_META_FIELDS: dict[str, tuple[type, ...]] = {
    "interrupted": (bool,),
    "usage": (dict,),
    "cost_usd": (*_NUMBER, type(None)),
    "model": (str,),
    "user_row_id": (int,),
    "error": (str,),
    "error_kind": (str,),
    "segment": (str,),
    "halted": (str,),
    "duration_ms": (*_NUMBER, type(None)),
    "num_api_calls": (int, type(None)),
}


def decode_blocks(raw: object) -> tuple[list[dict[str, Any]], str | None]:
    """The row's blocks (``raw``: the ``content`` column as SQLite returns it), or ``([], why)`` when they
    cannot be used."""
    if not isinstance(raw, (str, bytes, bytearray)):
        return [], "content is not JSON"
    try:
        value = json.loads(raw)
    except (TypeError, ValueError):
        return [], "content is not JSON"
    if not isinstance(value, list):
        return [], "content is not a list of blocks"
    for index, block in enumerate(value):
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            return [], f"content block {index} has no type"
        for name, types in _BLOCK_FIELDS.get(block["type"], {}).items():
            if name in block and not isinstance(block[name], types):
                return [], f"content block {index} ({block['type']}) has a {name!r} of the wrong type"
            if name not in block and block["type"] in ("text", "thinking"):
                return [], f"content block {index} ({block['type']}) has no {name!r}"
    return value, None


def decode_meta(raw: object) -> tuple[dict[str, Any], str | None]:
    """The row's meta (``raw``: the ``meta`` column as SQLite returns it; empty is ``{}``), or ``({}, why)``
    when it is not an object or a known field has the wrong type."""
    raw = raw or "{}"
    if not isinstance(raw, (str, bytes, bytearray)):
        return {}, "meta is not JSON"
    try:
        value = json.loads(raw)
    except (TypeError, ValueError):
        return {}, "meta is not JSON"
    if not isinstance(value, dict):
        return {}, "meta is not a JSON object"
    for name, types in _META_FIELDS.items():
        if name in value and (not isinstance(value[name], types) or
                              (isinstance(value[name], bool) and bool not in types)):
            return {}, f"meta field {name!r} has the wrong type"
    return value, None


def decode_row_parts(content: object, meta: object) -> tuple[list[dict[str, Any]], dict[str, Any], str | None]:
    """Blocks, meta and why the row is damaged (None when it is sound)."""
    blocks, bad_content = decode_blocks(content)
    values, bad_meta = decode_meta(meta)
    return blocks, values, bad_content or bad_meta


#: Who did what to a row, kept in its meta: ``made_by``/``pinned_by`` are "agent" when the agent made the
#: slot or pinned the row (absent: the user did); ``changed_by_agent`` lists the agent's tools that rewrote it.
AGENT = "agent"
MADE_BY = "made_by"
PINNED_BY = "pinned_by"
CHANGED_BY_AGENT = "changed_by_agent"


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def normalize_blocks(content: str | list[dict[str, Any]]) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [text_block(content)]
    if not isinstance(content, list) or not all(isinstance(b, dict) and "type" in b for b in content):
        raise UsageError("content must be a string or a list of blocks with a 'type'")
    return content


@dataclass
class Turn:
    """One stored row."""

    id: int
    role: str
    blocks: list[dict[str, Any]]
    tokens: int
    created_at: str
    pin_label: str | None = None
    slot_pos: int | None = None
    evicted: bool = False
    protected: bool = False
    meta: dict[str, Any] = field(default_factory=dict)
    damaged: str | None = None  # why the stored row cannot be used (shown as damaged, never sent)

    @property
    def pinned(self) -> bool:
        return self.pin_label is not None

    @property
    def text(self) -> str:
        """The plain text blocks joined (what a human would call the message)."""
        return "\n".join(b.get("text", "") for b in self.blocks if b.get("type") == "text")

    @property
    def made_by_agent(self) -> bool:
        return self.meta.get(MADE_BY) == AGENT

    @property
    def pinned_by_agent(self) -> bool:
        return self.pinned and self.meta.get(PINNED_BY) == AGENT

    def agent_marks(self) -> list[str]:
        """What the agent did to this row, in words ("slot made by the agent", "changed by the agent: ...")."""
        marks = ["slot made by the agent"] if self.made_by_agent else []
        if self.pinned_by_agent:
            marks.append("pinned by the agent")
        changes = self.meta.get(CHANGED_BY_AGENT)
        if isinstance(changes, list) and changes:
            marks.append("changed by the agent: " + ", ".join(str(c) for c in changes))
        return marks


@dataclass
class Window:
    """What the next turn is built from: pinned rows in slot order, then live rows oldest first."""

    pinned: list[Turn]
    rows: list[Turn]
    damaged: list[Turn] = field(default_factory=list)  # rows met while selecting that cannot be used (left out)
    # the caps the live rows passed ("max_window_turns", "max_window_tokens"): why older rows are left out
    passed: tuple[str, ...] = ()
    trimmed_to: str = ""  # when a cap was passed and the window cut in a step: "10 rows", "100000 tokens"

    @property
    def all(self) -> list[Turn]:
        return [*self.pinned, *self.rows]

    @property
    def tokens(self) -> int:
        return sum(t.tokens for t in self.all)


COLUMNS = "id, role, content, tokens, created_at, pin_label, slot_pos, evicted, protected, meta"


def row_to_turn(row: tuple[Any, ...]) -> Turn:
    blocks, meta, damaged = decode_row_parts(row[2], row[9])  # never raises: a bad row is marked, not fatal
    return Turn(
        id=row[0],
        role=row[1],
        blocks=blocks,
        tokens=row[3],
        created_at=row[4],
        pin_label=row[5],
        slot_pos=row[6],
        evicted=bool(row[7]),
        protected=bool(row[8]),
        meta=meta,
        damaged=damaged,
    )


class WindowCaps(Protocol):
    """The config fields that select the rolling window (``Config`` has them)."""

    @property
    def max_window_turns(self) -> int: ...
    @property
    def max_window_tokens(self) -> int: ...
    @property
    def row_cap_slack_when_token_headroom(self) -> int: ...
    @property
    def preserve_compressed_reads(self) -> bool: ...
    @property
    def window_trim_to(self) -> float: ...



def validate_label(label: str) -> str:
    """Slot labels are slugs: 1-64 of letters, digits, '_', '-', '.'."""
    if not isinstance(label, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", label):
        raise UsageError(f"invalid slot label {label!r}: use a slug of letters, digits, '_', '-', '.' (1-64)")
    return label


def dumps(value: object) -> str:
    """``value`` as the JSON the store writes (compact, keys sorted, not ASCII-escaped)."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
