"""The runtime sentinel: a protocol-level floor under the role doc's self-monitoring.

It watches the tool calls of a session (fed from the ``PreToolUse`` hook) and returns a
:class:`SentinelHalt` when the same tool with the same arguments shows up ``threshold``
times among the last ``window`` calls (trigger ``polling``), or when the last calls are one
short sequence of 2 to ``max_period`` different calls repeated ``cycle_repeats`` times in a
row, e.g. A, B, C, A, B, C, A, B, C (trigger ``cycle``: polling several things in turn). The session then refuses that
call, records the halt notice in the assistant turn and ends the turn. Pure logic:
no I/O, no SDK.
"""
from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass
from typing import Any


#: Input fields that only describe a call to the user and never change what it does.
COSMETIC_FIELDS = {"Bash": frozenset({"description"})}


def call_key(tool_name: str, tool_input: object) -> tuple[str, str]:
    """A comparable identity for a call: the name and its arguments as sorted-key JSON.

    Cosmetic fields (Bash's ``description``) are left out, so a loop cannot dodge the
    sentinel by rewording the description of the same command.
    """
    cosmetic = COSMETIC_FIELDS.get(tool_name)
    if cosmetic and isinstance(tool_input, dict):
        tool_input = {k: v for k, v in tool_input.items() if k not in cosmetic}
    return tool_name, json.dumps(tool_input, sort_keys=True, ensure_ascii=False, default=str)


@dataclass(frozen=True)
class SentinelHalt:
    """Why the sentinel stopped a turn: the trigger, the repeated call and how often it came."""

    trigger: str
    tool_name: str
    tool_input: Any
    count: int
    window: int
    period: int = 1  # calls in the repeated sequence (1: the same call again)

    @property
    def call(self) -> str:
        """The repeated call in one line, e.g. ``Bash {"command": "npm run build"}``."""
        return f"{self.tool_name} {call_key(self.tool_name, self.tool_input)[1]}"

    @property
    def context(self) -> str:
        """What repeated, in words."""
        if self.period > 1:
            return (f"a sequence of {self.period} different calls ending with this one was made {self.count} times "
                    f"in a row (the last {self.window} tool calls)")
        return f"the same call was made {self.count} times in the last {self.window} tool calls"

    def notice(self, turn_number: int) -> str:
        """The ``SENTINEL HALT`` text stored in the assistant turn and shown to the user."""
        return (
            "SENTINEL HALT\n"
            f"trigger: {self.trigger}\n"
            f"turn: {turn_number}\n"
            f"repeated call: {self.call}\n"
            f"context: {self.context}; "
            "the runtime sentinel refused it and ended the turn before it could run again.\n"
            "next step: the user decides how to continue (wait differently, change the approach, or stop)."
        )


class RuntimeSentinel:
    """Per-session watcher of the last ``window`` tool calls."""

    def __init__(self, window: int = 5, threshold: int = 3, max_period: int = 4, cycle_repeats: int = 3) -> None:
        if window < 1 or threshold < 2 or threshold > window:
            raise ValueError("need window >= 1 and 2 <= threshold <= window")
        if max_period < 0 or max_period == 1 or (max_period and cycle_repeats < 2):
            raise ValueError("need max_period 0 (no cycle check) or >= 2, and cycle_repeats >= 2")
        self.window = window
        self.threshold = threshold
        self.max_period = max_period
        self.cycle_repeats = cycle_repeats
        self._recent: deque[tuple[str, str]] = deque(maxlen=max(window, max_period * cycle_repeats))

    def observe(self, tool_name: str, tool_input: object) -> SentinelHalt | None:
        """Record one call; return a halt when it repeats ``threshold`` times in the window,
        or when it completes a short cycle repeated ``cycle_repeats`` times.

        After a halt the memory is cleared, so the user's next instruction starts fresh.
        """
        key = call_key(tool_name, tool_input)
        self._recent.append(key)
        count = sum(1 for seen in list(self._recent)[-self.window:] if seen == key)
        if count >= self.threshold:
            self._recent.clear()
            return SentinelHalt("polling", tool_name, tool_input, count, self.window)
        period = self._cycle_period()
        if period:
            self._recent.clear()
            return SentinelHalt("cycle", tool_name, tool_input, self.cycle_repeats, period * self.cycle_repeats,
                                period)
        return None

    def _cycle_period(self) -> int:
        """The shortest period (2..max_period) whose block of different calls fills the last
        ``period * cycle_repeats`` calls, or 0."""
        recent = list(self._recent)
        for period in range(2, self.max_period + 1):
            span = period * self.cycle_repeats
            if len(recent) < span:
                break
            tail = recent[-span:]
            block = tail[:period]
            if len(set(block)) == period and all(tail[i] == block[i % period] for i in range(span)):
                return period
        return 0

    def reset(self) -> None:
        self._recent.clear()

    def __len__(self) -> int:
        return len(self._recent)


class SentinelWatch:
    """The sentinel as a turn loop uses it: halt once, refuse every call after, know when to stop.

    ``begin_turn`` clears the previous turn's halt (the window of recent calls is
    per session). ``check`` is called from the ``PreToolUse`` hook before the
    permission gate; a returned string is the reason to deny that call.
    ``stop_after_tool_result`` tells the loop that the halted call's (error)
    result has arrived, so it can stop consuming the stream.
    """

    def __init__(self, window: int = 5, threshold: int = 3, max_period: int = 4, cycle_repeats: int = 3) -> None:
        self.sentinel = RuntimeSentinel(window, threshold, max_period, cycle_repeats)
        self.halt: SentinelHalt | None = None
        self.halted_tool_use_id: str | None = None

    def begin_turn(self) -> None:
        self.halt = None
        self.halted_tool_use_id = None

    def check(self, tool_name: str, tool_input: object, tool_use_id: str | None = None) -> str | None:
        if self.halt is not None:
            return "SENTINEL HALT: the runtime sentinel ended this turn; no further tool calls run in it"
        halt = self.sentinel.observe(tool_name, tool_input)
        if halt is None:
            return None
        self.halt, self.halted_tool_use_id = halt, tool_use_id
        return (f"SENTINEL HALT (trigger: {halt.trigger}): {halt.call}: {halt.context}; "
                "this call was refused and the turn ends here")

    def stop_after_tool_result(self, tool_use_id: str) -> bool:
        return self.halt is not None and (self.halted_tool_use_id is None or tool_use_id == self.halted_tool_use_id)
