"""Rows leaving the window are announced: one line naming them and the cap that pushed them out.

A row leaves the window when the live rows pass a cap (``max_window_turns``,
``max_window_tokens``): the window trim marks the rows the window no longer holds
evicted (:meth:`~mnemara.store.turns.TurnStore.trim_ids`), in one step down to
``window_trim_to`` of the cap. They stay on disk; the line names every one of them,
the cap that was passed (as the selection found it, never guessed from the sizes) and
how to get one back, instead of the rows going without a word.
"""
from __future__ import annotations

from collections.abc import Sequence

from mnemara.store.rows import Window, WindowCaps

MAX_SPANS = 6  # more spans than this are summed up ("and 40 more")


def row_spans(ids: Sequence[int]) -> str:
    """``[1, 2, 3, 7]`` -> ``rows 1–3, 7``; ``[4]`` -> ``row 4``."""
    ordered = sorted(set(ids))
    spans: list[str] = []
    start = prev = ordered[0]
    for row in [*ordered[1:], None]:
        if row is not None and row == prev + 1:
            prev = row
            continue
        spans.append(f"{start}–{prev}" if prev != start else str(start))
        if row is not None:
            start = prev = row
    shown = ", ".join(spans[:MAX_SPANS])
    if len(spans) > MAX_SPANS:
        shown += f" and {len(ordered) - _count(spans[:MAX_SPANS])} more"
    return ("rows " if len(ordered) > 1 else "row ") + shown


def _count(spans: list[str]) -> int:
    total = 0
    for span in spans:
        first, _, last = span.partition("–")
        total += int(last or first) - int(first) + 1
    return total


def left_line(ids: Sequence[int], now: Window, caps: WindowCaps) -> str:
    """The one line the panel log and the REPL show: ``now`` is the window that trimmed them."""
    values = {"max_window_turns": caps.max_window_turns, "max_window_tokens": caps.max_window_tokens}
    cap = " and ".join(f"{name} {values[name]}" for name in now.passed) or "no cap passed"
    if now.trimmed_to:
        cap += f" passed: cut to {now.trimmed_to} (window_trim_to {caps.window_trim_to:g})"
    first = min(ids)
    return (f"{row_spans(ids)} left the window ({cap}; kept on disk: `mnemara show --all` shows them, "
            f"/unevict {first} brings one back, /pin keeps a row in)")
