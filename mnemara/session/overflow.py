"""A turn the API refused as too long: evict the oldest unpinned rows so it can be sent once more.

The plan (which rows, how many tokens) is :mod:`mnemara.context.overflow`; this
module carries it out for a turn that failed before anything was shown: the
rows are evicted (kept on disk, like any eviction) and the user is told in one
line, or, when the pins and slots alone are too big, the turn's failure becomes
one that names them.
"""
from __future__ import annotations

from mnemara.core import events as ev
from mnemara.core.debuglog import LogTarget, log_event
from mnemara.store.turns import TurnStore
from mnemara.session.state import RunningTurn


def evict_to_fit(turn: RunningTurn, text: str, store: TurnStore, log: LogTarget) -> ev.Notice | None:
    """A notice when rows were evicted and the turn should be sent again, else None.

    Only for a turn that failed with "prompt is too long" and showed nothing; an
    overflow that eviction cannot fix replaces ``turn.failure``.
    """
    from mnemara.context import overflow
    from mnemara.context.breakdown import tool_schema_tokens
    from mnemara.core.tokens import estimate_text
    from mnemara.tools import enabled_specs

    collector = turn.collector
    if turn.failure is None or collector.blocks:
        return None
    detail = collector.api_error_text or (collector.result.result or "" if collector.result else "")
    if not overflow.is_overflow(turn.failure.message, detail):
        return None
    fixed = estimate_text(turn.system_prompt) + estimate_text(text) + tool_schema_tokens(enabled_specs(turn.cfg), turn.cfg.native_tools)[0]
    found = overflow.plan(store.window_for(turn.cfg, exclude_ids=(turn.user_id,)), fixed, turn.failure.message, detail)
    if not found.evict or not found.fits:
        log_event(log, "overflow_unrecoverable", level="warning", api_said=detail[:300],
                  pinned=[t.id for t in found.pinned], target=found.target, estimate=found.estimate)
        turn.failure = ev.ErrorEvent(found.too_big(), "overflow")
        return None
    store.evict(t.id for t in found.evict)
    log_event(log, "overflow_recovery", level="warning", rows=[t.id for t in found.evict],
              tokens_freed=found.tokens_freed, target=found.target, estimate=found.estimate, api_said=detail[:300])
    return ev.Notice(found.notice())
