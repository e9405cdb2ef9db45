"""Spend caps: which cap a request would start past, the 80% warning, and the lines that say so.

Three caps, each off (``None``) by default and set per instance in config.json:
``budget_usd_per_turn``, ``budget_usd_per_session`` and ``budget_usd_per_day`` (the local
calendar day). What was spent comes from the spend ledger (:mod:`mnemara.store.spend_ledger`),
priced from the API's own usage. A request is refused when what was already spent against a
cap has reached it; a request that starts under every cap goes out, so at most one response
passes a cap. This module decides and words; the loopback recorder's gate
(:mod:`mnemara.claude.spend_gate`) enforces.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from mnemara.core.pricing import PRICES_AS_OF

Scope = Literal["turn", "session", "day"]
SCOPES: tuple[Scope, ...] = ("turn", "session", "day")
#: config.json field of each cap.
FIELDS: dict[Scope, str] = {scope: f"budget_usd_per_{scope}" for scope in SCOPES}
#: Share of a cap at which one warning line is shown.
WARN_SHARE = 0.8
_WHERE = {"turn": "this turn", "session": "this session", "day": "today"}


@dataclass(frozen=True)
class CapState:
    """One cap and what was spent against it."""

    scope: Scope
    limit: float
    spent: float

    @property
    def field(self) -> str:
        return FIELDS[self.scope]

    @property
    def reached(self) -> bool:
        return self.spent >= self.limit

    @property
    def share(self) -> float:
        return self.spent / self.limit if self.limit > 0 else 1.0


def cap_states(limits: Mapping[Scope, float | None], spent: Mapping[Scope, float]) -> list[CapState]:
    """Every cap that is on, with what was spent against it."""
    return [CapState(scope, float(limit), float(spent.get(scope, 0.0)))
            for scope in SCOPES if (limit := limits.get(scope)) is not None]


def first_reached(states: list[CapState]) -> CapState | None:
    """The cap a new request would start past (the narrowest scope first), or None."""
    return next((state for state in states if state.reached), None)


def usd(value: float) -> str:
    return f"${value:.4f}" if value < 1 else f"${value:.2f}"


def refusal_line(cap: CapState) -> str:
    """The one line a turn ends with when a cap stops it: spent, which cap, how to raise it."""
    return (f"SPEND CAP: {usd(cap.spent)} spent {_WHERE[cap.scope]} reached {cap.field} {usd(cap.limit)}; "
            f"the next API request was not sent. Raise it with /budget {cap.scope} <usd> "
            f"(--temp: this session only) or turn it off with /budget {cap.scope} off "
            f"(list prices of {PRICES_AS_OF})")


def warning_line(cap: CapState) -> str:
    """The line shown once when spending passes :data:`WARN_SHARE` of a cap."""
    return (f"spend: {usd(cap.spent)} spent {_WHERE[cap.scope]}, {cap.share:.0%} of {cap.field} {usd(cap.limit)} "
            f"(list prices of {PRICES_AS_OF})")


def passed_line(cap: CapState) -> str:
    """The line a turn ends with when its last response took spending past a cap: no request was left
    for the gate to refuse, so without it nobody would hear of the cap until the next one is refused."""
    if cap.scope == "turn":
        then = "a further request of a turn that has spent this much is not sent"
    else:
        then = f"the next API request {_WHERE[cap.scope]} is not sent (raise it with /budget {cap.scope} <usd>)"
    return (f"spend: {usd(cap.spent)} spent {_WHERE[cap.scope]}, past {cap.field} {usd(cap.limit)}: a request that "
            f"starts under a cap may finish past it; {then} (list prices of {PRICES_AS_OF})")


def question(cap: CapState) -> str:
    """What the panel and the REPL ask when a cap is reached mid-turn."""
    return (f"{usd(cap.spent)} spent {_WHERE[cap.scope]} reached {cap.field} {usd(cap.limit)}. "
            "Continue this turn past the cap? (y once / n)")


def parse_limit(scope: str, text: str) -> float | None:
    """A cap as typed (``2``, ``$0.50``, ``off``): dollars, or None for off; a clear ValueError otherwise."""
    name = f"budget_usd_per_{scope}"
    value = text.strip().lower().removeprefix("$")
    if value in ("off", "none", "0"):
        return None
    try:
        number = float(value)
    except ValueError:
        raise ValueError(f"{name} takes dollars (e.g. 2 or 0.50) or 'off', not {text!r}") from None
    if not number > 0 or number != number or number == float("inf"):
        raise ValueError(f"{name} must be more than 0 dollars (or 'off'), not {text!r}")
    return number
