"""``supersede_memory`` and ``deprecate_memory``: mark an atom as replaced or no longer true.

Nothing is deleted and the day files are not rewritten: the status goes to
``memory/status.json`` (see :mod:`mnemara.memory.status`). Recall skips
superseded and deprecated atoms unless asked for them.
"""
from __future__ import annotations

from typing import Any

from mnemara.debuglog import log_event
from mnemara.errors import MnemaraError
from mnemara.tools import ToolContext, ToolSpec


def _str(args: dict[str, Any], name: str, required: bool = True) -> str:
    value = args.get(name)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise MnemaraError(f"argument {name!r} must be a non-empty string")
    return value


def supersede_memory(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    from mnemara.memory.status import find_atom, set_status

    try:
        mem = ctx.instance.memory_dir
        old = find_atom(mem, _str(args, "old"))
        new = find_atom(mem, _str(args, "new"))
        reason = _str(args, "reason", required=False)
        entry = set_status(mem, old, "superseded", new=new, reason=reason)
    except MnemaraError as exc:
        return {"ok": False, "error": exc.message}
    log_event(ctx.instance.debug_log_path, "atom_superseded", old=old.id, new=new.id, reason=reason, via="tool")
    return {"ok": True, "atom": old.id, "status": "superseded", "superseded_by": new.id, "at": entry["at"]}


def deprecate_memory(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    from mnemara.memory.status import find_atom, set_status

    try:
        atom = find_atom(ctx.instance.memory_dir, _str(args, "atom"))
        reason = _str(args, "reason", required=False)
        entry = set_status(ctx.instance.memory_dir, atom, "deprecated", reason=reason)
    except MnemaraError as exc:
        return {"ok": False, "error": exc.message}
    log_event(ctx.instance.debug_log_path, "atom_deprecated", atom=atom.id, reason=reason, via="tool")
    return {"ok": True, "atom": atom.id, "status": "deprecated", "at": entry["at"]}


_REF = {"type": "string", "description": "A note id, e.g. 20260427-183201-3fa9c1 (rag_query hits show it as "
                                         "note:20260427-183201-3fa9c1; either form works)."}


def specs() -> list[ToolSpec]:
    return [
        ToolSpec(
            name="supersede_memory",
            description=("Mark memory note `old` as superseded by note `new` (e.g. a later decision replaced it). "
                         "Nothing is deleted; recall stops returning the old note unless asked."),
            input_schema={"type": "object", "properties": {
                "old": _REF, "new": _REF, "reason": {"type": "string", "description": "Why, in one line."}},
                "required": ["old", "new"]},
            handler=supersede_memory,
        ),
        ToolSpec(
            name="deprecate_memory",
            description="Mark a memory note as no longer true. Nothing is deleted; recall skips it unless asked.",
            input_schema={"type": "object", "properties": {
                "atom": _REF, "reason": {"type": "string", "description": "Why, in one line."}},
                "required": ["atom"]},
            handler=deprecate_memory,
        ),
    ]
