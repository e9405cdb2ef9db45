"""The recorder's gate: what a request costs goes in the ledger, and no request leaves past a cap or a halt.

The loopback recorder (:mod:`mnemara.claude.recorder`) asks :meth:`SpendGate.before` about
every ``POST /v1/messages`` before it is forwarded, and hands every call to
:meth:`SpendGate.after` once its answer has passed. So:

* every call is priced from the API's own usage and kept in ``spend.sqlite``
  (:mod:`mnemara.store.spend_ledger`), with the session and the turn that made it:
  stopped and failed turns count what they spent;
* a request that would start past a spend cap is not sent (:mod:`mnemara.guard.budget`),
  unless :attr:`SpendGate.ask` answers yes (the panel and the REPL ask
  "continue this turn past the cap? (y once / n)"; without it, as in a headless run,
  the answer is no);
* once a turn is halted (the runtime sentinel, a cap, ``/stop``), no further request of
  it is sent: each is answered with an error the CLI does not retry.

A refused request gets HTTP 400 ``invalid_request_error`` whose message is the reason,
so the CLI ends its turn at once instead of retrying.
"""
from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mnemara.core.debuglog import DEBUG_LOG, log_event
from mnemara.guard.budget import (
    SCOPES,
    CapState,
    Scope,
    cap_states,
    first_reached,
    refusal_line,
    warning_line,
    WARN_SHARE,
)
from mnemara.store.request_log import RecordedCall
from mnemara.store.spend_ledger import CallSpend, SpendLedger, SpendTotals, today

#: How long the end of a turn waits for its calls still in flight to be counted.
SETTLE_SECONDS = 2.0
Limits = Mapping[Scope, "float | None"]


@dataclass
class TurnGate:
    """What the gate knows of the turn in flight."""

    key: str
    halt: str | None = None  # why nothing more of this turn is sent
    cap: CapState | None = None  # the cap that ended it, when one did
    passes: int = 0  # requests the user let go past a cap ("y once")
    refused: int = 0  # requests not sent since the halt
    warned: set[str] = field(default_factory=set)


class SpendGate:
    """One session's gate at its instance's recorder. Thread-safe: the recorder calls it from its
    handler threads, the session from its loop."""

    def __init__(self, ledger: SpendLedger, limits: Callable[[], Limits], session: str | None = None) -> None:
        self.ledger = ledger
        self.limits = limits
        self.session = session or uuid.uuid4().hex[:16]
        #: The seam for a question when a cap is reached: called in a recorder thread, True lets this one
        #: request go. None (a headless run) refuses without asking.
        self.ask: Callable[[CapState], bool] | None = None
        #: Lines for the user (the 80% warnings), called in a recorder thread.
        self.notify: Callable[[str], None] | None = None
        #: A halt decided elsewhere (the runtime sentinel): its reason, asked before every request
        #: with the request's body (the tool results it carries may complete a halt).
        self.halted: Callable[[bytes], str | None] | None = None
        self.turn: TurnGate | None = None
        #: The halt of the last turn, once it ended halted: a request its CLI had sent before it was
        #: killed may reach the recorder only after the turn is over, and must not leave either.
        #: Cleared when the next turn begins (nothing else asks the API between turns).
        self.after_halt: str | None = None
        self._lock = threading.Lock()
        self._settled = threading.Condition(self._lock)
        self._in_flight = 0
        self._session_warned: set[str] = set()

    # -- the session's side ---------------------------------------------------------------------
    def begin_turn(self) -> TurnGate:
        with self._lock:
            self.turn = TurnGate(uuid.uuid4().hex[:16])
            self.after_halt = None
            return self.turn

    def halt(self, reason: str) -> None:
        """Refuse every further request of the turn in flight (the sentinel, a cap, ``/stop``)."""
        with self._lock:
            if self.turn is not None and self.turn.halt is None:
                self.turn.halt = reason

    def end_turn(self) -> TurnGate | None:
        """The turn is over: wait (bounded) for its calls in flight to be counted, then forget it."""
        with self._settled:
            self._settled.wait_for(lambda: self._in_flight == 0, SETTLE_SECONDS)
            self._in_flight = 0  # one never counted (its record failed) must not slow every later turn's end
            turn, self.turn = self.turn, None
            self.after_halt = turn.halt if turn is not None else None
            return turn

    def turn_totals(self, turn: TurnGate) -> SpendTotals:
        return self.ledger.totals(turn=turn.key)

    def session_totals(self) -> SpendTotals:
        return self.ledger.totals(session=self.session)

    def states(self) -> list[CapState]:
        """Every cap that is on, with what was spent against it now."""
        limits = self.limits()
        if all(limits.get(scope) is None for scope in SCOPES):
            return []
        turn = self.turn
        spent: dict[Scope, float] = {
            "turn": self.ledger.spent(turn=turn.key) if turn is not None else 0.0,
            "session": self.ledger.spent(session=self.session) if limits.get("session") is not None else 0.0,
            "day": self.ledger.spent(day=today()) if limits.get("day") is not None else 0.0,
        }
        return cap_states(limits, spent)

    # -- the recorder's side --------------------------------------------------------------------
    def before(self, body: bytes) -> bytes | None:
        """None to forward this request; else the error body to answer the CLI with (not sent on)."""
        turn = self.turn
        reason = self._halt_reason(turn, body)
        if reason is None:
            cap = first_reached(self.states())
            if cap is not None and not self._let_go(turn, cap):
                reason = refusal_line(cap)
                with self._lock:
                    if turn is not None and turn.halt is None:
                        turn.halt, turn.cap = reason, cap
            elif cap is not None and turn is not None and turn.halt is not None:
                reason = turn.halt  # stopped or halted while the question was open: a yes comes too late
        if reason is not None:
            with self._lock:
                if turn is not None:
                    turn.refused += 1
            return refusal_body(reason)
        with self._lock:
            self._in_flight += 1
        return None

    def _halt_reason(self, turn: TurnGate | None, body: bytes) -> str | None:
        if turn is None:
            return self.after_halt
        if turn.halt is None and self.halted is not None:
            outside = self.halted(body)
            if outside:
                self.halt(outside)
        return turn.halt

    def _let_go(self, turn: TurnGate | None, cap: CapState) -> bool:
        """Whether a request may go past ``cap``: a pass the user gave, or a yes to the question."""
        with self._lock:
            if turn is not None and turn.passes > 0:
                turn.passes -= 1
                return True
        ask = self.ask
        if ask is None or turn is None:
            return False
        try:
            yes = bool(ask(cap))
        except Exception:  # a broken question never lets money through
            return False
        return yes

    def after(self, call: RecordedCall, forwarded: bool = True) -> None:
        """A call's answer has passed: price it from the API's usage and keep it; warn at 80% of a cap."""
        turn = self.turn
        try:
            if forwarded:
                spend = CallSpend.from_usage(str(call.body.get("model") or ""), call.usage)
                self.ledger.add(spend, session=self.session, turn=turn.key if turn is not None else "",
                                seq=call.seq or None, status=call.status)  # 0: not kept in requests/
                self._warn(turn)
        except Exception as exc:  # the ledger never fails a call; the debug log says why it was not counted
            log_event(self.ledger.path.parent / DEBUG_LOG, "spend_not_counted", level="warning",
                      error=f"{type(exc).__name__}: {exc}")
        finally:
            if forwarded:
                with self._settled:
                    self._in_flight = max(0, self._in_flight - 1)
                    self._settled.notify_all()

    def _warn(self, turn: TurnGate | None) -> None:
        notify = self.notify
        if notify is None:
            return
        for state in self.states():
            if state.share < WARN_SHARE or state.reached:
                continue
            seen = turn.warned if state.scope == "turn" and turn is not None else self._session_warned
            mark = state.scope if state.scope != "day" else f"day:{today()}"
            with self._lock:
                if mark in seen:
                    continue
                seen.add(mark)
            notify(warning_line(state))


def refusal_body(reason: str) -> bytes:
    """An Anthropic-shaped 400 error: the CLI shows its message and does not retry it."""
    return json.dumps({"type": "error", "error": {"type": "invalid_request_error", "message": reason}}).encode()


def usage_of(totals: SpendTotals) -> dict[str, Any]:
    """A turn's totals in the shape of an API ``usage`` (what a TurnDone carries)."""
    return {"input_tokens": totals.input_tokens, "output_tokens": totals.output_tokens,
            "cache_read_input_tokens": totals.cache_read_tokens,
            "cache_creation_input_tokens": totals.cache_write_tokens, "api_calls": totals.calls}
