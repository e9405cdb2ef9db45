"""The one price table: what a call's usage costs, with the date the prices were read.

Every estimate Mnemara shows (the request view, ``/stats`` and ``/cost``, the status line,
spend caps) prices usage here, so a price change is one edit. Prices are Anthropic's list
prices in USD per million tokens; prompt-cache reads and writes are priced by their
documented multipliers of the input price (read 0.1x, 5-minute write 1.25x, 1-hour write 2x).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

#: The day the table below was checked against Anthropic's published prices; shown next to estimates.
PRICES_AS_OF = "2026-11-01"

#: Multipliers of the input price, as documented for prompt caching.
CACHE_READ_MULTIPLIER = 0.1
CACHE_WRITE_5M_MULTIPLIER = 1.25
CACHE_WRITE_1H_MULTIPLIER = 2.0


@dataclass(frozen=True)
class ModelPrice:
    """USD per million tokens for one family of models."""

    prefix: str
    input: float
    output: float

    @property
    def cache_read(self) -> float:
        return self.input * CACHE_READ_MULTIPLIER

    @property
    def cache_write_5m(self) -> float:
        return self.input * CACHE_WRITE_5M_MULTIPLIER

    @property
    def cache_write_1h(self) -> float:
        return self.input * CACHE_WRITE_1H_MULTIPLIER


#: Longest prefix first where two share a start (``claude-opus-4-1`` before ``claude-opus-4``).
PRICES: tuple[ModelPrice, ...] = (
    ModelPrice("claude-opus-4-0", 15.0, 75.0),
    ModelPrice("claude-opus-4-1", 15.0, 75.0),
    ModelPrice("claude-opus-4", 5.0, 25.0),
    ModelPrice("claude-sonnet-4", 3.0, 15.0),
    ModelPrice("claude-haiku-4", 1.0, 5.0),
)


def price_for(model: str) -> ModelPrice | None:
    """The price of ``model`` by name prefix, or None for a model the table does not know."""
    return next((p for p in PRICES if model.startswith(p.prefix)), None)


def _count(usage: Mapping[str, object], key: str) -> float:
    value = usage.get(key)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def prompt_tokens(usage: Mapping[str, object]) -> int:
    """The prompt one call's ``usage`` counts: plain input, read from the cache and written to it."""
    return int(sum(_count(usage, key) for key in
                   ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")))


def cache_write_split(usage: Mapping[str, object]) -> tuple[float, float]:
    """Cache-write tokens as (5-minute, 1-hour). Without the API's split, every write counts as 5-minute."""
    split = usage.get("cache_creation")
    total = _count(usage, "cache_creation_input_tokens")
    if isinstance(split, Mapping):
        one_hour = _count(split, "ephemeral_1h_input_tokens")
        five_min = _count(split, "ephemeral_5m_input_tokens")
        if one_hour or five_min:
            return five_min, one_hour
    return total, 0.0


def cost_usd(model: str, usage: Mapping[str, object]) -> float | None:
    """What one call's ``usage`` costs at list prices; None for an unknown model or no usage at all."""
    price = price_for(model)
    if price is None or not usage:
        return None
    five_min, one_hour = cache_write_split(usage)
    total = (_count(usage, "input_tokens") * price.input
             + _count(usage, "output_tokens") * price.output
             + five_min * price.cache_write_5m
             + one_hour * price.cache_write_1h
             + _count(usage, "cache_read_input_tokens") * price.cache_read)
    return round(total / 1_000_000, 6)
