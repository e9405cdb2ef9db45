"""``supersede_memory`` and ``deprecate_memory``: mark an atom as replaced or no longer true.

Nothing is deleted and the day files are not rewritten: the status goes to
``memory/status.json`` (see :mod:`mnemara.memory.status`). Recall skips
superseded and deprecated atoms unless asked for them.
"""
from __future__ import annotations

from typing import Any

from pydantic import Field

from mnemara.core.debuglog import log_event
from mnemara.tools import ToolContext, ToolSpec
from mnemara.tools.declare import ToolArgs, declare

REF = ("A note id, e.g. 20260427-183201-3fa9c1 (rag_query hits show it as note:20260427-183201-3fa9c1; "
       "either form works).")


class SupersedeArgs(ToolArgs):
    old: str = Field(min_length=1, description=REF)
    new: str = Field(min_length=1, description=REF)
    reason: str = Field("", description="Why, in one line.")


class DeprecateArgs(ToolArgs):
    atom: str = Field(min_length=1, description=REF)
    reason: str = Field("", description="Why, in one line.")


def supersede_memory(ctx: ToolContext, args: SupersedeArgs) -> dict[str, Any]:
    from mnemara.memory.status import find_atom, set_status

    mem = ctx.instance.memory_dir
    old = find_atom(mem, args.old)
    new = find_atom(mem, args.new)
    entry = set_status(mem, old, "superseded", new=new, reason=args.reason)
    log_event(ctx.instance.debug_log_path, "atom_superseded", old=old.id, new=new.id, reason=args.reason, via="tool")
    return {"ok": True, "atom": old.id, "status": "superseded", "superseded_by": new.id, "at": entry["at"]}


def deprecate_memory(ctx: ToolContext, args: DeprecateArgs) -> dict[str, Any]:
    from mnemara.memory.status import find_atom, set_status

    atom = find_atom(ctx.instance.memory_dir, args.atom)
    entry = set_status(ctx.instance.memory_dir, atom, "deprecated", reason=args.reason)
    log_event(ctx.instance.debug_log_path, "atom_deprecated", atom=atom.id, reason=args.reason, via="tool")
    return {"ok": True, "atom": atom.id, "status": "deprecated", "at": entry["at"]}


def specs() -> list[ToolSpec]:
    return [
        declare("supersede_memory", "Mark memory note `old` as superseded by note `new` (e.g. a later decision "
                "replaced it). Nothing is deleted; recall stops returning the old note unless asked.",
                SupersedeArgs, supersede_memory),
        declare("deprecate_memory", "Mark a memory note as no longer true. Nothing is deleted; recall skips it "
                "unless asked.", DeprecateArgs, deprecate_memory),
    ]
