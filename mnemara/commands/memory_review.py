"""``/memory review``: the possible copies and corrections waiting for the user, and the verdict on one.

The same proposals ``mnemara lint --fix`` offers (:func:`mnemara.memory.lint.supersession_candidates`),
each with both texts and the words that differ marked. Only the user's verdict changes anything:
``accept N`` marks the older note superseded by the newer one, ``distinct N`` keeps both for good.
"""
from __future__ import annotations

from mnemara.commands import CommandContext, CommandResult, command
from mnemara.commands.payloads import ProposedPair, ReviewAnswered, ReviewProposals
from mnemara.core.errors import UsageError

USAGE = "/memory review [accept N | distinct N]"


@command("memory", usage=USAGE, help="review possible copies and corrections of memory notes; accept or mark one distinct")
def memory_command(ctx: CommandContext, args: str) -> CommandResult:
    from mnemara.memory.lint import resolve_candidate, supersession_candidates

    words = args.split()
    if not words or words[0] != "review":
        raise UsageError(f"usage: {USAGE}")
    rest = words[1:]
    if rest and (len(rest) != 2 or rest[0] not in ("accept", "distinct") or not rest[1].isdigit()):
        raise UsageError(f"expected nothing, 'accept N' or 'distinct N' after /memory review; usage: {USAGE}")
    memory_dir = ctx.instance.memory_dir
    candidates = supersession_candidates(memory_dir)
    if rest:
        number = int(rest[1])
        if not 1 <= number <= len(candidates):
            raise UsageError(f"no proposal number {number} (there are {len(candidates)}; list them with /memory review)")
        chosen = candidates[number - 1]
        done = resolve_candidate(memory_dir, chosen, rest[0], "/memory review")
        return CommandResult(done, payload=ReviewAnswered(chosen.older, chosen.newer, rest[0]))
    if not candidates:
        return CommandResult("no possible copies or corrections to review", payload=ReviewProposals(()))
    lines = [f"{len(candidates)} proposal(s); nothing changes until you answer:"]
    for n, cand in enumerate(candidates, 1):
        first, *more = cand.lines()
        lines.append(f"{n}. {first.removeprefix('CHECK ')}")
        lines.extend(more)
    lines.append("accept one with /memory review accept N (the older note is marked superseded, nothing is "
                 "deleted), or keep both with /memory review distinct N")
    return CommandResult("\n".join(lines), payload=ReviewProposals(tuple(ProposedPair(c.older, c.newer, c.kind)
                                                                            for c in candidates)))
