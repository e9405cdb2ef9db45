"""``write_memory(text, category, payload, applies_to)``: the agent appends a note to today's memory file.

Same on-disk format as ``mnemara note`` and ``/note`` (see :mod:`mnemara.memory.notes`).
Policy name ``WriteMemory``; model-facing name ``mcp__mnemara__write_memory``.
The note is the primary write; it then reaches the other surfaces
(:func:`mnemara.memory.surfaces.write_memory`): a ``wiki/<rest>`` category also
writes ``wiki/<rest>.md``, the note is indexed for ``rag_query`` and
``applies_to`` links it to entity nodes in the graph. A failing backend is
reported in the answer and never undoes the note.
"""
from __future__ import annotations

from typing import Any

from mnemara.errors import MnemaraError
from mnemara.memory.notes import DEFAULT_CATEGORY
from mnemara.tools import ToolContext, ToolSpec

WRITE_MEMORY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "text": {"type": "string", "description": "The note to remember, in plain prose."},
        "category": {
            "type": "string",
            "description": "A short tag for the note, e.g. insight, decision, todo, self_observation. "
                           "wiki/<page> also appends the note to that wiki page.",
        },
        "applies_to": {
            "type": ["array", "string"], "items": {"type": "string"},
            "description": "Entities the note is about (names); linked in the graph with applies_to edges.",
        },
        "payload": {
            "type": "object",
            "description": "Structured fields kept with the note, e.g. observation, evidence, prediction, "
                           "confidence, applies_to (entity names, linked in the graph like applies_to above).",
            "additionalProperties": {"type": ["string", "number", "boolean", "array"]},
        },
    },
    "required": [],
    "additionalProperties": False,
}
#: Order in which well-known payload fields are written; others follow in the order given.
PAYLOAD_ORDER = ("observation", "evidence", "prediction", "confidence")


def note_with_payload(text: str, payload: dict[str, Any]) -> tuple[str, list[str]]:
    """The note body (``text``, then one ``- field: value`` line per payload field) and its applies_to names.

    Without ``text`` the observation is the first line. Raises ``ValueError`` on a field that is not plain data.
    """
    applies: list[str] = []
    raw = payload.get("applies_to")
    if raw is not None:
        items = raw if isinstance(raw, list) else str(raw).split(",")
        if not all(isinstance(x, str) for x in items):
            raise ValueError("payload applies_to must name entities: a string or a list of strings")
        applies = [x.strip() for x in items if x.strip()]
    lines = []
    head = text.strip() or str(payload.get("observation", "")).strip()
    fields = [k for k in PAYLOAD_ORDER if k in payload] + [k for k in payload if k not in PAYLOAD_ORDER]
    for key in fields:
        value = payload[key]
        if isinstance(value, dict) or (isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value)):
            raise ValueError(f"payload field {key!r} must be text, a number or a list of names")
        if key == "observation" and not text.strip():
            continue
        shown = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
        lines.append(f"- {key}: {shown}")
    body = head + ("\n\n" + "\n".join(lines) if lines else "")
    return body, applies


def write_memory(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    """Append one note; refuse empty text or a bad category with ``ok: false``."""
    text = args.get("text", "")
    if not isinstance(text, str):
        return {"ok": False, "error": "text must be a string"}
    category = args.get("category") or DEFAULT_CATEGORY
    if not isinstance(category, str):
        return {"ok": False, "error": "category must be a string"}
    applies_to = args.get("applies_to")
    payload = args.get("payload")
    if payload is not None:
        if not isinstance(payload, dict):
            return {"ok": False, "error": "payload must be an object of fields (observation, evidence, ...)"}
        try:
            text, named = note_with_payload(text, payload)
        except ValueError as exc:
            return {"ok": False, "error": str(exc)}
        from mnemara.memory.surfaces import normalize_applies_to

        try:
            applies_to = list(dict.fromkeys([*normalize_applies_to(applies_to), *named]))
        except MnemaraError as exc:
            return {"ok": False, "error": exc.message}
    if not text.strip():
        return {"ok": False, "error": "give the note's text (or a payload with an observation)"}
    from mnemara.memory.dedupe import check_write, conflict_report, inactive_copies, refusal
    from mnemara.memory.surfaces import write_memory as write_everywhere

    check = check_write(ctx.instance.memory_dir, text, ctx.config) if text.strip() else None
    duplicate = refusal(check) if check is not None else None
    if duplicate is not None:
        return duplicate
    inactive = inactive_copies(ctx.instance.memory_dir, text) if text.strip() else []
    try:
        result = write_everywhere(ctx.instance, ctx.config, text, category, applies_to, ctx.state)
    except MnemaraError as exc:
        return {"ok": False, "error": exc.message}
    if inactive:
        result["dedupe"] = f"the same text is in {', '.join(inactive)}; written again as a new active note"
    if check is not None and result.get("ok"):
        result.update(conflict_report(check))
    return result


def specs() -> list[ToolSpec]:
    return [
        ToolSpec(
            name="write_memory",
            description=(
                "Append a note to this agent's long-term memory (today's memory file). "
                "Use it for facts, decisions and observations worth keeping across sessions."
            ),
            input_schema=WRITE_MEMORY_SCHEMA,
            handler=write_memory,
            policy_name="WriteMemory",
        )
    ]
