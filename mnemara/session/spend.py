"""A session's spending: its gate at the recorder, the caps it reads, the question past a cap, the totals.

:class:`SessionSpend` joins the session to the recorder's :class:`~mnemara.claude.spend_gate.SpendGate`:

* the caps are read from the live config on every request (``/budget`` applies at once);
* a halt decided by the runtime sentinel is the gate's too, so the request carrying the refused
  call's result never leaves;
* when a cap is reached mid-turn, :attr:`SessionSpend.prompt` (the seam a UI sets: the panel and
  the REPL ask "continue this turn past the cap? (y once / n)") is asked on the session's loop while
  the request waits at the recorder; without a prompt (a headless run, ``mnemara serve``) the
  request is refused at once;
* the 80% warnings become notices of the turn in flight;
* a turn's :class:`~mnemara.core.events.TurnDone` carries what its calls cost, from the ledger (a
  stopped or failed turn included), not the CLI's own result.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from mnemara.claude.spend_gate import SpendGate, usage_of
from mnemara.core import events as ev
from mnemara.core.config import Config
from mnemara.core.live_config import LiveConfig
from mnemara.core.pricing import PRICES_AS_OF
from mnemara.guard.budget import FIELDS, SCOPES, CapState, Scope, passed_line, usd
from mnemara.store.spend_ledger import SpendLedger, SpendTotals, today

if TYPE_CHECKING:
    from mnemara.session.state import RunningTurn, TurnFlight

#: What a UI answers when a cap is reached mid-turn: True lets one more request go.
BudgetPrompt = Callable[[CapState], "Awaitable[bool] | bool"]


@dataclass(frozen=True)
class SpendView:
    """What the status line and ``/cost`` show."""

    last_turn_usd: float | None
    session_usd: float
    day_usd: float
    states: tuple[CapState, ...]

    def status_forms(self) -> tuple[str, ...]:
        """The status line's cost, longest form first (the price table's date in the longest)."""
        turn = "-" if self.last_turn_usd is None else usd(self.last_turn_usd)
        cap = max(self.states, key=lambda state: state.share, default=None)
        capped = f" · {cap.scope} cap {cap.share:.0%}" if cap is not None else ""
        core = f"cost: turn {turn} · session {usd(self.session_usd)}{capped}"
        return (f"{core} (prices of {PRICES_AS_OF})", core, f"{usd(self.session_usd)}{capped}")


class SessionSpend:
    def __init__(self, root: Path, live: LiveConfig, running: Callable[[], "RunningTurn | None"],
                 flight: Callable[[], "TurnFlight | None"]) -> None:
        self.live = live
        self.ledger = SpendLedger(root)
        self.gate = SpendGate(self.ledger, self.limits)
        self.gate.halted = self._sentinel_halt
        self.gate.notify = self._notice
        self.gate.ask = self._ask
        self._running = running
        self._flight = flight
        #: The UI's question past a cap; None refuses without asking (headless).
        self.prompt: BudgetPrompt | None = None
        self.last_turn: SpendTotals | None = None
        self._closing: list[str] = []  # what the ended turn still has to say (a cap its last response passed)
        self._told: set[str] = set()  # session and day caps already said to be passed
        self._context = contextvars.copy_context()  # the turn's: where the question past a cap runs

    def limits(self) -> dict[Scope, float | None]:
        cfg = self.live.current
        return {scope: getattr(cfg, FIELDS[scope]) for scope in SCOPES}

    @staticmethod
    def needs_relay(cfg: Config) -> bool:
        """Whether a cap is set (the recorder must relay even when ``request_log_calls`` is 0)."""
        return any(getattr(cfg, name) is not None for name in FIELDS.values())

    # -- a turn ---------------------------------------------------------------------------------
    def begin(self, turn: RunningTurn) -> None:
        """The turn's calls are counted together from now (a resend after an overflow stays the same turn)."""
        if self.gate.turn is None:
            self.gate.begin_turn()
        self._context = contextvars.copy_context()
        turn.spend = self.gate.turn

    def halt(self, reason: str) -> None:
        self.gate.halt(reason)

    def finish(self, done: ev.TurnDone) -> ev.TurnDone:
        """The turn is over: its TurnDone with what its calls cost, from the ledger."""
        gate_turn = self.gate.end_turn()
        if gate_turn is None:
            return done
        totals = self.ledger.totals(turn=gate_turn.key)
        self.last_turn = totals
        if gate_turn.halt is None and totals.calls:  # a refused request said so already, in the turn's own line
            self._closing = self._passed(totals)
        if not totals.calls:
            return done
        return replace(done, usage=usage_of(totals), cost_usd=totals.cost_usd)

    def closing_notices(self, turn: RunningTurn) -> list[ev.Event]:
        """What the end of ``turn`` still has to say about spending, just before its TurnDone: warnings
        the gate added after the turn's last stream message, and the caps its last response passed."""
        out = [*turn.take_spend_notices(), *(ev.Notice(line) for line in self._closing)]
        self._closing = []
        return out

    def _between_turns(self, last: SpendTotals) -> list[CapState]:
        """The caps once no turn is in flight, the turn cap measured against ``last``, the turn just ended."""
        return [replace(s, spent=last.cost_usd) if s.scope == "turn" else s for s in self.gate.states()]

    def _passed(self, totals: SpendTotals) -> list[str]:
        lines = []
        for state in self._between_turns(totals):
            mark = {"turn": "", "session": "session", "day": f"day:{today()}"}[state.scope]
            if state.reached and mark not in self._told:
                if mark:
                    self._told.add(mark)
                lines.append(passed_line(state))
        return lines

    def forget_turn(self) -> None:
        """A turn ended without reaching :meth:`finish` (an exception): nothing more is counted to it."""
        if self.gate.turn is not None:
            self.gate.end_turn()

    def view(self) -> SpendView:
        if self.gate.turn is None and self.last_turn is not None:
            states = self._between_turns(self.last_turn)
        else:
            states = self.gate.states()
        return SpendView(self.last_turn.cost_usd if self.last_turn is not None else None,
                         self.ledger.spent(session=self.gate.session), self.ledger.spent(day=today()),
                         tuple(states))

    # -- called by the gate, in a recorder thread ----------------------------------------------
    def _sentinel_halt(self, body: bytes) -> str | None:
        turn = self._running()
        watch = turn.watch if turn is not None else None
        halt = watch.judge_request(body) if watch is not None else None
        return None if halt is None else f"SENTINEL HALT (trigger: {halt.trigger}): the turn was halted; not sent"

    def _notice(self, line: str) -> None:
        turn = self._running()
        if turn is not None:
            turn.spend_notices.append(line)

    def _ask(self, cap: CapState) -> bool:
        prompt, flight, turn = self.prompt, self._flight(), self._running()
        if prompt is None or flight is None or flight.loop.is_closed():
            return False
        stall = turn.stall if turn is not None else None
        if stall is not None:
            stall.idle()  # the user is thinking: the API owes nothing meanwhile
        answered: concurrent.futures.Future[bool] = concurrent.futures.Future()

        def start() -> None:  # on the turn's loop, in the turn's context (a panel's question needs its app)
            task = asyncio.ensure_future(_answer(prompt, cap))
            task.add_done_callback(lambda done: answered.set_result(
                not done.cancelled() and done.exception() is None and done.result()))

        try:
            flight.loop.call_soon_threadsafe(start, context=self._context)
            return answered.result()
        finally:
            if stall is not None:
                stall.awaiting_api()


async def _answer(prompt: BudgetPrompt, cap: CapState) -> bool:
    out = prompt(cap)
    if inspect.isawaitable(out):
        out = await out
    return bool(out)
