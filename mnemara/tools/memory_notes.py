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

from pydantic import Field

from mnemara.core.errors import UsageError
from mnemara.memory.notes import DEFAULT_CATEGORY
from mnemara.tools import ToolContext, ToolSpec
from mnemara.tools.declare import ToolArgs, declare

class WriteMemoryArgs(ToolArgs):
    text: str = Field("", description="The note to remember, in plain prose.")
    category: str | None = Field(None, description="A short tag for the note, e.g. insight, decision, todo, "
                                          "self_observation. wiki/<page> also appends the note to that wiki page.")
    applies_to: list[str] | str | None = Field(
        None, description="Entities the note is about (names); linked in the graph with applies_to edges.")
    payload: dict[str, Any] | None = Field(  # field values are checked by note_with_payload (one clear line)
        None, description="Structured fields kept with the note, e.g. observation, evidence, prediction, "
                          "confidence, applies_to (entity names, linked in the graph like applies_to above).",
        json_schema_extra={"additionalProperties": {"type": ["string", "number", "boolean", "array"]}})


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


def write_memory(ctx: ToolContext, args: WriteMemoryArgs) -> dict[str, Any]:
    """Append one note; empty text, a bad payload or a bad category is refused before anything is written."""
    text = args.text
    category = args.category or DEFAULT_CATEGORY
    applies_to: Any = args.applies_to
    payload = args.payload
    if payload is not None:
        try:
            text, named = note_with_payload(text, payload)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        from mnemara.memory.surfaces import normalize_applies_to

        applies_to = list(dict.fromkeys([*normalize_applies_to(applies_to), *named]))
    if not text.strip():
        raise UsageError("give the note's text (or a payload with an observation)")
    from mnemara.memory.dedupe import check_write, conflict_report, refusal
    from mnemara.memory.surfaces import write_memory as write_everywhere

    check = check_write(ctx.instance.memory_dir, text, ctx.config)
    duplicate = refusal(check) if check is not None else None
    if duplicate is not None:
        return duplicate
    inactive = check.inactive  # found through the note index with the check (no second read of every file)
    result = write_everywhere(ctx.instance, ctx.config, text, category, applies_to, ctx.state)
    if result.get("id"):
        from mnemara.memory import provenance

        provenance.record(ctx.instance.memory_dir, str(result["id"]), "agent", turn_row=ctx.state.turn_row,
                          tool_call=ctx.state.take_call("write_memory", args.text))
    if inactive:
        result["dedupe"] = f"the same text is in {', '.join(inactive)}; written again as a new active note"
    if check is not None and result.get("ok"):
        result.update(conflict_report(check))
        if check.conflicts or check.copies:
            from mnemara.memory.dedupe import propose_conflicts
            from mnemara.memory.notes import find_note

            propose_conflicts(ctx.instance.memory_dir, check, find_note(ctx.instance.memory_dir, str(result["id"])))
    return result


def specs() -> list[ToolSpec]:
    return [
        declare("write_memory", "Append a note to this agent's long-term memory (today's memory file). "
                "Use it for facts, decisions and observations worth keeping across sessions.",
                WriteMemoryArgs, write_memory)
    ]
