"""``/cost`` and ``/budget``: what this session, this turn and today cost, and the spend caps.

Both read the instance's spend ledger (``spend.sqlite``, :mod:`mnemara.store.spend_ledger`): every
API call the recorder saw, priced from the API's own usage with cache reads and writes, stopped and
failed turns included. ``/stats`` keeps its per-session files; ``/cost`` is the bill.
"""
from __future__ import annotations

from mnemara.commands import CommandContext, CommandResult, command
from mnemara.commands.core import split_flags
from mnemara.core.pricing import PRICES_AS_OF
from mnemara.guard.budget import FIELDS, SCOPES, parse_limit, usd
from mnemara.store.spend_ledger import SpendTotals, today

_SCOPE_WORDS = {"turn": "the last turn", "session": "this session", "day": "today"}


def _tokens(t: SpendTotals) -> str:
    return (f"{t.calls} call(s); tokens: {t.input_tokens} plain in, {t.cache_read_tokens} cache read, "
            f"{t.cache_write_tokens} cache written, {t.output_tokens} out")


@command("cost", usage="/cost", help="what this session, the last turn and today cost (every API call, priced)")
def cost_cmd(ctx: CommandContext, args: str) -> CommandResult:
    if args.strip():
        raise ValueError("/cost takes no arguments (the caps: /budget)")
    spend = ctx.spend
    ledger = spend.ledger
    session, day, ever = ledger.totals(session=spend.gate.session), ledger.totals(day=today()), ledger.totals()
    last = spend.last_turn
    lines = [f"cost at list prices of {PRICES_AS_OF} (from the API's usage, cache reads and writes included):"]
    if last is not None:
        lines.append(f"  last turn: {usd(last.cost_usd)} · {_tokens(last)}")
    lines += [f"  this session: {usd(session.cost_usd)} · {_tokens(session)}",
              f"  today ({today()}): {usd(day.cost_usd)} · {_tokens(day)}",
              f"  this instance, all recorded: {usd(ever.cost_usd)} in {ever.calls} call(s)"]
    unpriced = ever.unpriced_calls
    if unpriced:
        lines.append(f"  {unpriced} call(s) of a model the price table does not know are not in these sums")
    caps = [f"{scope} {usd(limit)}" for scope, limit in spend.limits().items() if limit is not None]
    lines.append("  caps: " + (", ".join(caps) + " (/budget)" if caps else "none (set one with /budget turn|session|day <usd>)"))
    return CommandResult("\n".join(lines))


@command("budget", usage="/budget [turn|session|day <usd>|off] [--temp]",
         help="show the spend caps and what was spent against each, or set one (--temp: this session only)")
def budget_cmd(ctx: CommandContext, args: str) -> CommandResult:
    words, flags = split_flags(args, "--temp")
    if not words:
        if flags:
            raise ValueError("--temp goes with a cap to set: /budget turn|session|day <usd>|off --temp")
        return CommandResult(_show(ctx))
    scope = next((s for s in SCOPES if len(words) == 2 and words[0].lower() == s), None)
    if scope is None:
        raise ValueError("give a cap (turn, session or day) and dollars or 'off', e.g. /budget day 5")
    limit = parse_limit(scope, words[1])
    field = FIELDS[scope]
    if "--temp" in flags:
        ctx.override_config(**{field: limit})
        where = "this session only; config.json is untouched"
    else:
        ctx.update_config(**{field: limit})
        where = "saved to config.json"
    shown = "off" if limit is None else usd(limit)
    return CommandResult(f"{field}: {shown} ({where})\n" + _show(ctx))


def _show(ctx: CommandContext) -> str:
    spend = ctx.spend
    limits = spend.limits()
    spent = {"turn": spend.last_turn.cost_usd if spend.last_turn is not None else 0.0,
             "session": spend.ledger.spent(session=spend.gate.session), "day": spend.ledger.spent(day=today())}
    lines = [f"spend caps (US dollars at list prices of {PRICES_AS_OF}; checked before each API request):"]
    for scope in SCOPES:
        limit = limits[scope]
        cap = "off" if limit is None else usd(limit)
        share = f", {spent[scope] / limit:.0%}" if limit else ""
        lines.append(f"  {FIELDS[scope]}: {cap} · spent {usd(spent[scope])} {_SCOPE_WORDS[scope]}{share}")
    lines.append("set: /budget turn|session|day <usd>|off [--temp]")
    return "\n".join(lines)
