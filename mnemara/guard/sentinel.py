"""The runtime sentinel: a protocol-level floor under the role doc's self-monitoring.

It watches a session's tool calls (from the ``PreToolUse`` hook) and their results (from the
stream, so calls the CLI rejects before any hook, like an Edit whose ``old_string`` is gone,
still count) and halts the turn on one of five triggers:

* ``polling``: the same call (compared in :func:`~mnemara.guard.call_shape.call_key`'s shape:
  counters, timestamps, sleep lengths, flags, offsets, whitespace, ``description``/``timeout``
  do not make a call new) made ``repeats`` times among the turn's last ``window`` calls with
  the same output each time. A call whose output changed is progress, so test -> fix -> test,
  a batch job that migrates the next batch, or a re-read after an edit is never a repeat; nor
  is anything across a successful file edit;
* ``same_error``: ``error_repeats`` results in the window failing with the same error (the
  call's own words taken out), however the call was varied;
* ``cycle``: a sequence of 2 to ``cycle_max_period`` calls made ``cycle_repeats - 1`` times
  in a row with the same outputs and starting again;
* ``call_ceiling``: more than ``max_calls_per_turn`` tool calls in one turn;
* ``no_progress``: ``no_progress_turns`` turns in a row with no file changed and the same tool
  outputs (judged once the newest turn repeats the last one's first three calls, or all of them).

The session refuses the call (or ends the turn after the result that completed the pattern),
records the :meth:`SentinelHalt.notice` in the assistant turn and ends the turn. Pure logic:
no I/O, no SDK.
"""
from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from mnemara.core.blocks import result_text
from mnemara.guard.call_shape import WRITE_TOOLS, call_key, error_shape, exact_input, observation, writes_files

#: Input fields shown whole in a halt notice, however long: they name what the call acts on.
TARGET_FIELDS = frozenset({"command", "file_path", "path", "notebook_path", "url", "pattern"})
_SHOWN_VALUE = 200  # longer values of other fields are cut in the notice, with how much was left out
_SHOWN_OUTPUT = 100


@dataclass(frozen=True)
class SentinelSettings:
    """The sentinel's thresholds (config fields ``sentinel_*``; 0 turns a trigger off where noted)."""

    window: int = 12  # calls of the turn the polling and same-error rules look back over
    repeats: int = 3  # polling: the same call with the same output this many times
    cycle_max_period: int = 8  # longest cycle looked for (0: no cycle check)
    cycle_repeats: int = 3  # a cycle halts on the call that starts this round
    error_repeats: int = 3  # same_error (0: off)
    max_calls_per_turn: int = 200  # call_ceiling (0: off)
    no_progress_turns: int = 3  # no_progress (0: off)

    def __post_init__(self) -> None:
        if self.window < 2 or not 2 <= self.repeats <= self.window:
            raise ValueError("need window >= 2 and 2 <= repeats <= window")
        if self.cycle_max_period < 0 or self.cycle_max_period == 1 or self.cycle_repeats < 2:
            raise ValueError("need cycle_max_period 0 (no cycle check) or >= 2, and cycle_repeats >= 2")
        for name in ("error_repeats", "no_progress_turns"):
            if getattr(self, name) == 1 or getattr(self, name) < 0:
                raise ValueError(f"need {name} 0 (off) or >= 2")
        if self.max_calls_per_turn < 0:
            raise ValueError("need max_calls_per_turn 0 (off) or >= 1")

    @classmethod
    def from_config(cls, cfg: Any) -> "SentinelSettings":
        """The settings from a :class:`~mnemara.core.config.Config` (already validated there)."""
        return cls(window=cfg.sentinel_window, repeats=cfg.sentinel_repeats,
                   cycle_max_period=cfg.sentinel_cycle_max_period, cycle_repeats=cfg.sentinel_cycle_repeats,
                   error_repeats=cfg.sentinel_error_repeats, max_calls_per_turn=cfg.sentinel_max_calls_per_turn,
                   no_progress_turns=cfg.sentinel_no_progress_turns)


@dataclass
class _Seen:
    """One call of the running turn as the sentinel knows it."""

    number: int  # 1-based within the turn
    tool_name: str
    tool_input: Any
    key: str
    exact: str  # the input as given (cosmetic fields aside)
    tool_use_id: str | None
    rejected: bool = False  # the CLI refused it before any hook (seen only in the stream)
    refused: bool = False  # the sentinel refused it
    output: str | None = None  # the result text, once known
    shape: str | None = None  # its observation (None: not known yet, matches anything)
    error: str | None = None  # its error shape when it failed
    from_stream: bool = False
    changed_file: bool = False  # it succeeded and writes files
    new: bool = False  # no earlier call of the turn had the same key and output

    def same_as(self, other: "_Seen") -> bool:
        """The same observation; while either output is unknown (parallel calls, a lagging
        stream) only an exact repeat of the input counts as the same."""
        if self.shape is not None and other.shape is not None:
            return self.shape == other.shape
        return self.exact == other.exact

    def may_repeat(self, earlier: "_Seen") -> bool:
        """Whether this call, not run yet, repeats ``earlier``: it will give the same output
        ``earlier`` gave (the rule's prediction), or, while that output is unknown too, it is an exact copy."""
        if self.shape is None and earlier.shape is not None:
            return True
        return self.same_as(earlier)


@dataclass(frozen=True)
class HaltCall:
    """A call named in a halt notice."""

    number: int
    tool_name: str
    tool_input: Any
    output: str | None = None
    note: str = ""  # "refused by the sentinel", "rejected by the CLI"

    def line(self) -> str:
        out = f"#{self.number} {self.tool_name} {_shown_input(self.tool_input)}"
        if self.output is not None:
            first = self.output.strip().splitlines()[0] if self.output.strip() else "(no output)"
            cut = first if len(first) <= _SHOWN_OUTPUT else first[:_SHOWN_OUTPUT] + "…"
            out += f" -> {json.dumps(cut, ensure_ascii=False)}"
        return out + (f" ({self.note})" if self.note else "")


def _shown_input(tool_input: Any) -> str:
    if isinstance(tool_input, dict):
        shown: dict[str, Any] = {}
        for key, value in tool_input.items():
            if isinstance(value, str) and key not in TARGET_FIELDS and len(value) > _SHOWN_VALUE:
                value = f"{value[:_SHOWN_VALUE]}… ({len(value) - _SHOWN_VALUE} more characters)"
            shown[key] = value
        tool_input = shown
    return json.dumps(tool_input, sort_keys=True, ensure_ascii=False, default=str)


@dataclass(frozen=True)
class SentinelHalt:
    """Why the sentinel stopped a turn: the trigger, the calls involved, and what to do next."""

    trigger: str
    tool_name: str  # the call that completed the pattern
    tool_input: Any
    count: int  # how many times the pattern came
    context: str
    next_step: str
    calls: tuple[HaltCall, ...] = ()
    period: int = 1

    @property
    def call(self) -> str:
        """The call that completed the pattern, in one line."""
        return f"{self.tool_name} {_shown_input(self.tool_input)}"

    def notice(self, turn_number: int) -> str:
        """The spec's ``SENTINEL HALT`` text, stored in the assistant turn and shown to the user."""
        lines = ["SENTINEL HALT", f"trigger: {self.trigger}", f"turn: {turn_number}",
                 f"context: {self.context}", "calls:"]
        lines += [f"  {c.line()}" for c in self.calls]
        lines.append(f"proposed next step: {self.next_step}")
        return "\n".join(lines)


@dataclass(frozen=True)
class _TurnPrint:
    calls: tuple[tuple[str, str | None], ...]
    changed_file: bool


def _hook_output_text(response: object) -> str:
    """A ``PostToolUse`` hook's ``tool_response`` as text."""
    if isinstance(response, str):
        return response
    if isinstance(response, dict) and ("stdout" in response or "stderr" in response):
        return "\n".join(str(response.get(k) or "") for k in ("stdout", "stderr")).strip()
    return json.dumps(response, sort_keys=True, ensure_ascii=False, default=str)


class RuntimeSentinel:
    """Per-session watcher: the running turn's calls, and the last turns' outputs."""

    def __init__(self, settings: SentinelSettings | None = None) -> None:
        self.settings = settings or SentinelSettings()
        self._turn: list[_Seen] = []
        self._by_id: dict[str, _Seen] = {}
        self._pairs: set[tuple[str, str | None]] = set()  # (key, output) of the turn's calls so far
        self._past: deque[_TurnPrint] = deque(maxlen=max(1, self.settings.no_progress_turns))
        self._halted = False
        # how far back any rule looks: the window, or the rounds of the longest cycle
        self._reach = max(self.settings.window, self.settings.cycle_max_period * (self.settings.cycle_repeats - 1))

    # -- turns ---------------------------------------------------------------------------------
    def begin_turn(self) -> None:
        """Close the running turn (its outputs count towards ``no_progress``) and start a new one."""
        if self._turn and not self._halted:
            self._past.append(_TurnPrint(self._signature(), any(c.changed_file for c in self._turn)))
        elif self._halted:
            self._past.clear()
        self._turn, self._by_id, self._halted = [], {}, False
        self._pairs = set()

    def reset(self) -> None:
        self._turn, self._by_id, self._halted = [], {}, False
        self._pairs = set()
        self._past.clear()

    def __len__(self) -> int:
        return len(self._turn)

    # -- feeds ---------------------------------------------------------------------------------
    def observe(self, tool_name: str, tool_input: object, tool_use_id: str | None = None) -> SentinelHalt | None:
        """A call about to run (the ``PreToolUse`` hook): a halt means refuse it."""
        seen = self._add(tool_name, tool_input, tool_use_id)
        halt = self._before_run(seen)
        if halt is not None:
            seen.refused = True
            self._halted = True
        return halt

    def observe_result(self, tool_use_id: str, output: str, is_error: bool, *, tool_name: str | None = None,
                       tool_input: object = None, from_stream: bool = True) -> SentinelHalt | None:
        """A call's result. A call the hook never saw (the CLI rejected it first) is added from
        ``tool_name``/``tool_input`` (the stream's tool_use) and judged like any other. A halt
        means end the turn after this result."""
        seen = self._by_id.get(tool_use_id)
        rejected = seen is None
        if seen is None:
            if tool_name is None:
                return None
            seen = self._add(tool_name, tool_input, tool_use_id, rejected=True)
        if seen.refused or seen.from_stream:  # refused, or judged already (the stream or the request had it)
            return None
        seen.output, seen.from_stream = output, from_stream
        seen.shape = observation(output, seen.tool_input)
        seen.error = error_shape(output, seen.tool_name, seen.tool_input) if is_error else None
        seen.changed_file = not is_error and writes_files(seen.tool_name, seen.tool_input)
        pair = (seen.key, seen.shape)
        # a file tool's success always changed the file (an edit of one number to the next looks like
        # the last one once numbers are placeholders); a shell write counts the first time only
        seen.new = pair not in self._pairs or seen.tool_name in WRITE_TOOLS
        self._pairs.add(pair)
        if not from_stream:
            return None
        halt = self._same_error(seen) or (self._before_run(seen) if rejected else None) or self._no_progress(seen)
        if halt is not None:
            self._halted = True
        return halt

    def observe_hook_result(self, tool_use_id: str, response: object) -> None:
        """A ``PostToolUse`` result: known before the next call's hook even when the stream lags
        (and the only result a subagent's calls get). The stream's result replaces it."""
        self.observe_result(tool_use_id, _hook_output_text(response), False, from_stream=False)

    # -- rules ---------------------------------------------------------------------------------
    def _add(self, tool_name: str, tool_input: object, tool_use_id: str | None, rejected: bool = False) -> _Seen:
        seen = _Seen(len(self._turn) + 1, tool_name, tool_input, call_key(tool_name, tool_input),
                     exact_input(tool_name, tool_input), tool_use_id, rejected=rejected)
        self._turn.append(seen)
        if tool_use_id is not None:
            self._by_id[tool_use_id] = seen
        return seen

    def _before_run(self, seen: _Seen) -> SentinelHalt | None:
        return self._ceiling(seen) or self._polling(seen) or self._cycle(seen)

    def _earlier(self, seen: _Seen, limit: int | None = None) -> list[_Seen]:
        """The turn's calls before ``seen`` (not refused), newest last, back to the last progress: a
        file tool's successful write, or a shell command that writes files the first time it gave its
        output (one repeated with the same output is part of a loop) other than a call like ``seen``
        itself (a poll that appends to a log)."""
        at = seen.number - 1  # its place in the turn
        calls = [c for c in self._turn[max(0, at - self._reach):at] if not c.refused]
        if limit is not None:
            calls = calls[-limit:]
        for i in range(len(calls) - 1, -1, -1):
            c = calls[i]
            if c.changed_file and c.new and (c.tool_name in WRITE_TOOLS or c.key != seen.key):
                return calls[i + 1:]
        return calls

    def _ceiling(self, seen: _Seen) -> SentinelHalt | None:
        ceiling = self.settings.max_calls_per_turn
        if not ceiling or seen.number <= ceiling:
            return None
        return self._halt("call_ceiling", seen, seen.number, [seen],
                          f"this turn made {seen.number} tool calls, more than the ceiling of {ceiling}",
                          "check that the task is on track; split it into smaller asks, or raise "
                          "sentinel_max_calls_per_turn if this many calls are expected")

    def _polling(self, seen: _Seen) -> SentinelHalt | None:
        run: list[_Seen] = []
        for earlier in reversed(self._earlier(seen, self.settings.window - 1)):
            if earlier.key != seen.key:
                continue
            if run and not earlier.same_as(run[0]):
                break
            run.append(earlier)
        if not run or not seen.may_repeat(run[0]) or len(run) + 1 < self.settings.repeats:
            return None
        involved = [*reversed(run), seen]
        varied = len({c.exact for c in involved}) > 1
        what = "the same call, varied only in what does not change its meaning," if varied else "the same call"
        failed = all(c.error is not None or c.output is None for c in involved) and run[0].error is not None
        gave = "failed the same way each time" if failed else "gave the same output each time"
        return self._halt("polling", seen, len(involved), involved,
                          f"{what} was made {len(involved)} times in the last {self.settings.window} tool calls "
                          f"and {gave}",
                          self._next_step_for(seen, "wait on the thing itself (a blocking wait, the process's "
                                                    "exit, one longer sleep) or change the approach; asking again "
                                                    "gives the same answer"))

    def _cycle(self, seen: _Seen) -> SentinelHalt | None:
        rounds = self.settings.cycle_repeats - 1
        earlier = self._earlier(seen)
        for period in range(2, self.settings.cycle_max_period + 1):
            span = period * rounds
            if len(earlier) < span:
                break
            tail = earlier[-span:]
            if len({c.key for c in tail[:period]}) < 2:
                continue
            if all(tail[i].key == tail[i + period].key and tail[i + period].same_as(tail[i])
                   for i in range(span - period)) and tail[-period].key == seen.key \
                    and seen.may_repeat(tail[-period]):
                return self._halt("cycle", seen, rounds, [*tail[-period:], seen],
                                  f"a sequence of {period} calls was made {rounds} times in a row with the same "
                                  "outputs and was starting again",
                                  "none of these answers is changing: wait for one of them to change, or change "
                                  "the approach", period=period)
        return None

    def _same_error(self, seen: _Seen) -> SentinelHalt | None:
        limit = self.settings.error_repeats
        if not limit or seen.error is None:
            return None
        same = [c for c in self._earlier(seen, self.settings.window - 1) if c.error == seen.error]
        if len(same) + 1 < limit:
            return None
        involved = [*same[-(limit - 1):], seen]
        return self._halt("same_error", seen, len(same) + 1, involved,
                          f"{len(same) + 1} calls in the last {self.settings.window} failed with the same error, "
                          "however they were varied",
                          self._next_step_for(seen, "fix what the error names (or ask the user about it); "
                                                    "another variation of the call will fail the same way"))

    def _no_progress(self, seen: _Seen) -> SentinelHalt | None:
        turns = self.settings.no_progress_turns
        if not turns or len(self._past) < turns - 1:
            return None
        last = list(self._past)[-(turns - 1):]
        sig = last[0].calls
        if not sig or len(self._turn) > len(sig) or any(c.changed_file for c in self._turn) \
                or any(p.changed_file or p.calls != sig for p in last):
            return None
        now = self._signature()
        need = min(len(sig), 3)
        if len(now) < need or now != sig[:len(now)] or seen.shape is None:
            return None
        return self._halt("no_progress", seen, turns, [c for c in self._turn if not c.refused],
                          f"{turns} turns in a row changed no file and their tool calls gave the same outputs",
                          "the work is not moving: give the model the missing fact, change the approach, or stop")

    # -- shared --------------------------------------------------------------------------------
    def _signature(self) -> tuple[tuple[str, str | None], ...]:
        return tuple((c.key, c.shape) for c in self._turn if not c.refused)

    @staticmethod
    def _next_step_for(seen: _Seen, default: str) -> str:
        if seen.tool_name in {"Edit", "MultiEdit"} and isinstance(seen.tool_input, dict) and seen.error:
            path = seen.tool_input.get("file_path", "the file")
            return f"the text to replace is not in the file any more: Read {path} again and edit what is there now"
        return default

    def _halt(self, trigger: str, seen: _Seen, count: int, involved: Iterable[_Seen], context: str,
              next_step: str, period: int = 1) -> SentinelHalt:
        calls = tuple(HaltCall(c.number, c.tool_name, c.tool_input, c.output,
                               "refused by the sentinel" if c is seen and c.output is None
                               else "rejected by the CLI" if c.rejected else "")
                      for c in involved)
        return SentinelHalt(trigger, seen.tool_name, seen.tool_input, count, context, next_step, calls, period)


@dataclass
class _StreamUse:
    name: str
    tool_input: Any


class SentinelWatch:
    """The sentinel as a turn loop uses it: halt once, refuse every call after, know when to stop.

    ``begin_turn`` starts a turn (the previous one's halt is cleared). ``check`` is called from
    the ``PreToolUse`` hook before the permission gate; a returned string is the reason to deny
    that call. ``saw_tool_use``/``saw_result`` are fed from the stream (a halt can come from a
    result: the CLI rejected a call no hook saw, or an error repeated); ``saw_hook_result`` from
    the ``PostToolUse`` hook. ``stop_after_tool_result`` tells the loop that the halting call's
    result has arrived, so it can stop consuming the stream.
    """

    def __init__(self, settings: SentinelSettings | None = None) -> None:
        self.sentinel = RuntimeSentinel(settings)
        self.halt: SentinelHalt | None = None
        self.halted_tool_use_id: str | None = None
        self._uses: dict[str, _StreamUse] = {}
        # the session's loop feeds it; the recorder's threads ask it (judge_request) before each request
        self._lock = threading.RLock()

    @property
    def settings(self) -> SentinelSettings:
        return self.sentinel.settings

    def begin_turn(self) -> None:
        with self._lock:
            self.halt = None
            self.halted_tool_use_id = None
            self._uses.clear()
            self.sentinel.begin_turn()

    def check(self, tool_name: str, tool_input: object, tool_use_id: str | None = None) -> str | None:
        with self._lock:
            if self.halt is not None:
                return "SENTINEL HALT: the runtime sentinel ended this turn; no further tool calls run in it"
            halt = self.sentinel.observe(tool_name, tool_input, tool_use_id)
            if halt is None:
                return None
            self.halt, self.halted_tool_use_id = halt, tool_use_id
        return f"SENTINEL HALT (trigger: {halt.trigger}): {halt.call}: {halt.context}; this call was refused " \
               "and the turn ends here"

    def saw_tool_use(self, tool_use_id: str, tool_name: str, tool_input: object) -> None:
        with self._lock:
            self._uses.setdefault(tool_use_id, _StreamUse(tool_name, tool_input))

    def saw_result(self, tool_use_id: str, output: str, is_error: bool) -> None:
        with self._lock:
            if self.halt is not None:
                return
            use = self._uses.get(tool_use_id)
            halt = self.sentinel.observe_result(tool_use_id, output, is_error, tool_name=use.name if use else None,
                                                tool_input=use.tool_input if use else None)
            if halt is not None:
                self.halt, self.halted_tool_use_id = halt, tool_use_id

    def saw_hook_result(self, tool_use_id: str | None, response: object) -> None:
        with self._lock:
            if tool_use_id is not None and self.halt is None:
                self.sentinel.observe_hook_result(tool_use_id, response)

    def judge_request(self, body: bytes) -> SentinelHalt | None:
        """The halt, judging first the tool results this API request carries (called by the
        recorder before it forwards a request). The CLI sends a result to the API as soon as it
        has it, perhaps before this process has read the same result from the stream: judged
        here, a halt that result completes (a third identical error, a rejected Edit) stops
        that very request instead of the next one."""
        if self.halt is not None:
            return self.halt
        results = _last_results(body)  # parsed outside the lock: the hooks need not wait for it
        with self._lock:
            for use_id, name, tool_input, output, is_error in results:
                self.saw_tool_use(use_id, name, tool_input)
                self.saw_result(use_id, output, is_error)
            return self.halt

    def stop_after_tool_result(self, tool_use_id: str) -> bool:
        return self.halt is not None and (self.halted_tool_use_id is None or tool_use_id == self.halted_tool_use_id)


def _last_two_messages(body: bytes) -> tuple[Any, Any] | None:
    """The last assistant and user messages of a Messages request, found from the end of the body
    and parsed alone (a long session's request is mostly history nobody needs to parse again);
    None when that does not find them, so the caller parses the whole body."""
    decoder = json.JSONDecoder()
    for user_mark, assistant_mark in ((b'{"role":"user"', b'{"role":"assistant"'),
                                      (b'{"role": "user"', b'{"role": "assistant"')):
        at = body.rfind(user_mark)
        before = body.rfind(assistant_mark, 0, at) if at > 0 else -1
        if before < 0:
            continue
        try:
            asked, end = decoder.raw_decode(body[before:at].decode("utf-8", "replace").rstrip().rstrip(","))
            answered, _ = decoder.raw_decode(body[at:].decode("utf-8", "replace"))
        except ValueError:
            return None
        if end and isinstance(answered, dict) and answered.get("role") == "user":
            return asked, answered
    return None


def _last_results(body: bytes) -> list[tuple[str, str, Any, str, bool]]:
    """The tool results of a Messages request's last user message, with the call each answers
    (from the assistant message before it): (id, tool, input, text, is_error). Nothing when the
    body is not such a request."""
    if b'"tool_result"' not in body:
        return []
    pair = _last_two_messages(body)
    if pair is None:
        try:
            messages = json.loads(body).get("messages")
        except (ValueError, AttributeError):
            return []
        if not isinstance(messages, list) or len(messages) < 2:
            return []
        pair = messages[-2], messages[-1]
    asked, answered = pair
    if not (isinstance(asked, dict) and isinstance(answered, dict) and answered.get("role") == "user"
            and isinstance(asked.get("content"), list) and isinstance(answered.get("content"), list)):
        return []
    uses = {b.get("id"): b for b in asked["content"] if isinstance(b, dict) and b.get("type") == "tool_use"}
    out = []
    for block in answered["content"]:
        if not isinstance(block, dict) or block.get("type") != "tool_result":
            continue
        use = uses.get(block.get("tool_use_id"))
        if use is None or not isinstance(use.get("id"), str):
            continue
        out.append((use["id"], str(use.get("name", "")), use.get("input"), result_text(block.get("content")),
                    bool(block.get("is_error"))))
    return out
