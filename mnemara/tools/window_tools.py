"""The agent's own window tools (the names Mnemara 0.18 users know).

``inspect_context`` (the context viewer's breakdown as data), ``list_window``,
``list_pinned``, ``pin_row``, ``unpin_row``, ``evict_ids``, ``evict_last``,
``evict_since``, ``evict_older_than``, ``mark_segment``, ``tune_window`` and
``log_choice``. Each reports what it changed (row ids, tokens freed); pinned rows
are never evicted. Policy names are 0.18's (``InspectContext``, ``EvictIds`` ...).
Thin adapters over :mod:`mnemara.context.row_ops`, declared with
:func:`mnemara.tools.declare.declare`: bad arguments answer ``{"ok": false, "error": ...}``
and change nothing.
"""
from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from mnemara.context import row_ops
from mnemara.context.eviction import EvictionResult, eviction_stats
from mnemara.core.debuglog import log_event
from mnemara.core.errors import UsageError
from mnemara.store.rows import AGENT, Turn
from mnemara.tools import ToolContext, ToolSpec
from mnemara.tools.declare import ToolArgs, declare

SUMMARY_CHARS = 160
SKIP_PINNED = "Accepted for 0.18 callers; pinned rows are never touched."


class Selectors(ToolArgs):
    """Which live, unpinned rows an eviction acts on (every given filter applies)."""

    row_ids: list[int] | None = Field(None, description="Only these row ids.")
    keep_recent: int | None = Field(None, ge=0, description="Leave the newest N live rows alone.")
    older_than: str | int | float | None = Field(None, description="Only rows older than this: 90s, 30m, 2h, 1d.")
    segment: str | None = Field(None, description="Only rows of this segment (see mark_segment).")
    skip_pinned: bool | None = Field(None, description=SKIP_PINNED)

    def selector(self) -> row_ops.Selector:
        return row_ops.Selector.from_args(self.model_dump(exclude_none=True))


class EvictIdsArgs(Selectors):
    @model_validator(mode="after")
    def _names_rows(self) -> "EvictIdsArgs":
        if self.row_ids is None and self.segment is None:
            raise ValueError("give row_ids (or a segment)")
        return self


class NoArgs(ToolArgs):
    pass


class ListWindowArgs(ToolArgs):
    limit: int = Field(50, ge=1, le=500, description="How many live rows (default 50).")


class PinRowArgs(ToolArgs):
    row_id: int | None = Field(None, description="The row to pin.")
    label: str | None = Field(None, description="Slot label (default row-<id>).")
    segment: str | None = Field(None, description="Pin every live row of this segment instead of one row.")

    @model_validator(mode="after")
    def _names_rows(self) -> "PinRowArgs":
        if self.row_id is None and self.segment is None:
            raise ValueError("give row_id (or a segment)")
        return self


class UnpinRowArgs(ToolArgs):
    row_id: int


class EvictLastArgs(ToolArgs):
    n: int = Field(ge=1, description="How many of the newest live rows.")
    skip_pinned: bool | None = Field(None, description=SKIP_PINNED)


class EvictSinceArgs(ToolArgs):
    segment: str = Field(description="The segment (see mark_segment).")
    skip_pinned: bool | None = Field(None, description=SKIP_PINNED)

    @model_validator(mode="after")
    def _names_segment(self) -> "EvictSinceArgs":
        if not self.segment:
            raise ValueError("give the segment name")
        return self


class EvictOlderThanArgs(Selectors):
    older_than: str | int | float = Field(description="Only rows older than this: 90s, 30m, 2h, 1d.")


class MarkSegmentArgs(ToolArgs):
    name: str = Field(description="The segment's name.")
    from_row: int | None = Field(None, description="First row id (default: the oldest live row).")
    to_row: int | None = Field(None, description="Last row id (default: the newest live row).")


class TuneWindowArgs(ToolArgs):
    max_window_turns: int | None = Field(None, ge=2)
    max_window_tokens: int | None = Field(None, ge=1000)

    @model_validator(mode="after")
    def _changes_something(self) -> "TuneWindowArgs":
        if self.max_window_turns is None and self.max_window_tokens is None:
            raise ValueError("give max_window_turns and/or max_window_tokens")
        return self


class LogChoiceArgs(ToolArgs):
    decision: str
    rationale: str
    decision_type: str = ""
    context_summary: str = ""


def _summary(turn: Turn) -> str:
    text = " ".join(turn.text.split()) or ", ".join(str(b.get("type")) for b in turn.blocks)
    return text if len(text) <= SUMMARY_CHARS else text[: SUMMARY_CHARS - 1] + "…"


def _row(turn: Turn, in_window: bool | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"id": turn.id, "role": turn.role, "tokens": turn.tokens, "created_at": turn.created_at,
                           "summary": _summary(turn)}
    if turn.pinned:
        out.update(pinned=True, label=turn.pin_label, slot=turn.slot_pos)
    if turn.meta.get("segment"):
        out["segment"] = turn.meta["segment"]
    if turn.evicted:
        out["evicted"] = True
    if in_window is not None:
        out["in_window"] = in_window
    return out


def _window(ctx: ToolContext) -> Any:
    return ctx.store.window_for(ctx.config)


def _done(ctx: ToolContext, result: EvictionResult) -> dict[str, Any]:
    log_event(ctx.instance.debug_log_path, "eviction", strategy=result.strategy, rows=result.rows,
              tokens_freed=result.tokens_freed, row_ids=result.row_ids[:1000], by="agent")
    return {"ok": True, **result.to_dict()}


# -- reading --------------------------------------------------------------------
def inspect_context(ctx: ToolContext, args: NoArgs) -> dict[str, Any]:
    from mnemara.context.breakdown import compute
    from mnemara.core.roledoc import read_role_doc
    from mnemara.tools import enabled_specs

    win = _window(ctx)
    parts = compute(ctx.config, win, read_role_doc(ctx.config.role_doc_path).text, tools=enabled_specs(ctx.config),
                    carried=ctx.state.carried_tokens)
    stats = eviction_stats(ctx.store)
    segments: dict[str, int] = {}
    for turn in ctx.store.live_rows():
        if turn.meta.get("segment"):
            segments[turn.meta["segment"]] = segments.get(turn.meta["segment"], 0) + 1
    return {
        "ok": True,
        "parts": [{"name": p.name, "tokens": p.tokens, "note": p.note} for p in parts.parts],
        "total_tokens": parts.total, "max_window_tokens": parts.cap, "free_tokens": max(0, parts.cap - parts.total),
        "max_window_turns": ctx.config.max_window_turns,
        "rows": {"in_window": len(win.rows), "pinned": len(win.pinned), "live": stats["live_rows"],
                 "evicted_on_disk": stats["evicted_rows"]},
        "tokens_by_block": stats["tokens_by_block"], "rows_by_role": stats["rows_by_role"], "segments": segments,
    }


def list_window(ctx: ToolContext, args: ListWindowArgs) -> dict[str, Any]:
    limit = args.limit
    win = _window(ctx)
    in_window = {t.id for t in win.rows}
    live = ctx.store.live_rows(limit=limit)
    rows = [_row(t) for t in win.pinned] + [_row(t, t.id in in_window) for t in live]
    return {"ok": True, "rows": rows, "pinned": len(win.pinned), "shown": len(live),
            "note": "pinned slots first, then the newest live rows oldest first; in_window false = past the caps"}


def list_pinned(ctx: ToolContext, args: NoArgs) -> dict[str, Any]:
    pinned = ctx.store.pinned()
    return {"ok": True, "rows": [_row(t) for t in pinned], "tokens": sum(t.tokens for t in pinned)}


# -- pins -------------------------------------------------------------------------
def pin_row(ctx: ToolContext, args: PinRowArgs) -> dict[str, Any]:
    segment, label = args.segment, args.label
    if segment is not None:
        rows, _ = row_ops.Selector(segment=segment).pick(ctx.store.live_rows())
        if not rows:
            raise UsageError(f"no live row is in segment {segment!r}")
        labels = [ctx.store.pin(t.id, f"{label or segment}-{t.id}".replace(" ", "-"), by=AGENT) for t in rows]
        log_event(ctx.instance.debug_log_path, "pin", row_ids=[t.id for t in rows], by="agent")
        return {"ok": True, "pinned": [t.id for t in rows], "labels": labels,
                "tokens_pinned": sum(t.tokens for t in rows)}
    row_id = args.row_id
    assert row_id is not None  # PinRowArgs asks for one of the two
    turn = ctx.store.get(row_id)
    label = ctx.store.pin(row_id, label, by=AGENT)
    log_event(ctx.instance.debug_log_path, "pin", row_ids=[row_id], label=label, by="agent")
    return {"ok": True, "pinned": [row_id], "labels": [label], "tokens_pinned": turn.tokens,
            "already_pinned": turn.pinned}


def unpin_row(ctx: ToolContext, args: UnpinRowArgs) -> dict[str, Any]:
    row_id = args.row_id
    turn = ctx.store.get(row_id)
    if not turn.pinned:
        return {"ok": True, "unpinned": [], "note": f"row {row_id} was not pinned"}
    ctx.store.unpin(row_id)
    log_event(ctx.instance.debug_log_path, "unpin", row_ids=[row_id], by="agent")
    return {"ok": True, "unpinned": [row_id], "label": turn.pin_label,
            "note": "the row is back in the rolling window and can be evicted by the caps"}


# -- eviction ---------------------------------------------------------------------
def evict_ids(ctx: ToolContext, args: EvictIdsArgs) -> dict[str, Any]:
    selector = args.selector()
    return _done(ctx, row_ops.evict_rows(ctx.store, "evict_ids", selector))


def evict_last(ctx: ToolContext, args: EvictLastArgs) -> dict[str, Any]:
    row_ops.Selector.from_args({"skip_pinned": args.skip_pinned})
    return _done(ctx, row_ops.evict_last(ctx.store, args.n))


def evict_since(ctx: ToolContext, args: EvictSinceArgs) -> dict[str, Any]:
    row_ops.Selector.from_args({"skip_pinned": args.skip_pinned})
    return _done(ctx, row_ops.evict_since(ctx.store, args.segment))


def evict_older_than(ctx: ToolContext, args: EvictOlderThanArgs) -> dict[str, Any]:
    selector = args.selector()
    return _done(ctx, row_ops.evict_rows(ctx.store, "evict_older_than", selector))


def mark_segment(ctx: ToolContext, args: MarkSegmentArgs) -> dict[str, Any]:
    ids = row_ops.mark_segment(ctx.store, args.name, args.from_row, args.to_row)
    log_event(ctx.instance.debug_log_path, "mark_segment", name=args.name, row_ids=ids, by="agent")
    return {"ok": True, "segment": args.name, "row_ids": ids,
            "note": "evict it with evict_since / evict_ids(segment=...), pin it with pin_row(segment=...)"}


# -- caps and choices ----------------------------------------------------------------
def tune_window(ctx: ToolContext, args: TuneWindowArgs) -> dict[str, Any]:
    """Change the caps within what config.json allows: never above what config.json holds (a session-only
    raise, ``/tokens 900k --temp``, stays the user's and is never saved) or above ``agent_max_*``."""
    from mnemara.core.config import Config

    saved = Config.load(ctx.instance.config_path)
    changes: dict[str, int] = {}
    for key, limit, floor in (("max_window_turns", saved.agent_max_window_turns, 2),
                              ("max_window_tokens", saved.agent_max_window_tokens, 1000)):
        value = getattr(args, key)
        if value is None:
            continue
        ceiling = limit if limit is not None else getattr(saved, key)
        if not floor <= value <= ceiling:
            who = (f"agent_{key} in config.json" if limit is not None else
                   f"the {key} config.json holds; config.json sets no agent_{key}")
            if getattr(ctx.config, key) > ceiling:
                who += f"; this session's {getattr(ctx.config, key)} is a session-only setting of the user's"
            raise UsageError(f"{key} must be between {floor} and {ceiling} ({who})")
        changes[key] = value
    before = {k: getattr(ctx.config, k) for k in changes}
    ctx.update_config(**changes)
    log_event(ctx.instance.debug_log_path, "tune_window", before=before, after=changes, by="agent")
    return {"ok": True, "before": before, "after": changes, "note": "saved to config.json; the next turn uses it"}


def log_choice(ctx: ToolContext, args: LogChoiceArgs) -> dict[str, Any]:
    live = ctx.store.live_rows(limit=1)
    record = row_ops.log_choice(ctx.instance.root / "choices.jsonl", args.decision, args.rationale, args.decision_type,
                                args.context_summary, tokens_at_choice=_window(ctx).tokens,
                                last_row=live[-1].id if live else None)
    return {"ok": True, "logged": record, "file": "choices.jsonl"}


def specs() -> list[ToolSpec]:
    never = " Pinned rows are never evicted. Returns the row ids taken out of the window and the tokens freed."
    tools: list[tuple[str, str, type[ToolArgs], Any]] = [
        ("inspect_context", "Where the tokens of your next turn go (tool schemas, role doc, pinned rows, working "
         "window) against the cap, with row counts, tokens per block kind and segments.", NoArgs, inspect_context),
        ("list_window", "List the rows of your context: pinned slots, then the newest live rows with id, role, "
         "tokens, segment and a one-line summary.", ListWindowArgs, list_window),
        ("list_pinned", "List the pinned rows (slots) in slot order with their labels and tokens.", NoArgs,
         list_pinned),
        ("pin_row", "Pin a row (or every row of a segment) so it is sent every turn and never evicted.", PinRowArgs,
         pin_row),
        ("unpin_row", "Unpin a row: it goes back to the rolling window (a row the user pinned: the user is asked "
         "first).", UnpinRowArgs, unpin_row),
        ("evict_ids", "Take rows out of your context by id (or a whole segment); they stay on disk." + never,
         EvictIdsArgs, evict_ids),
        ("evict_last", "Take the newest N live rows out of your context (undo a bad turn)." + never, EvictLastArgs,
         evict_last),
        ("evict_since", "Take a segment's rows and every live row after its start out of your context." + never,
         EvictSinceArgs, evict_since),
        ("evict_older_than", "Take rows older than a duration out of your context." + never, EvictOlderThanArgs,
         evict_older_than),
        ("mark_segment", "Label a span of live rows (from_row..to_row, default: all live rows) as a named segment, "
         "so it can be evicted or pinned together.", MarkSegmentArgs, mark_segment),
        ("tune_window", "Change your window caps (rows and/or tokens) within the limits the user set "
         "(agent_max_window_turns / agent_max_window_tokens; without them you may only lower the caps).",
         TuneWindowArgs, tune_window),
        ("log_choice", "Record a decision you made and why (appended to choices.jsonl for the user).",
         LogChoiceArgs, log_choice),
    ]
    return [declare(name, text, model, fn) for name, text, model, fn in tools]
