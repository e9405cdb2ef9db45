"""``/stats``: this session's turns, tokens, prompt-cache hits, cost and tools, and the totals in ``stats/``."""
from __future__ import annotations

from mnemara.commands import CommandContext, CommandResult, command
from mnemara.commands.payloads import UsageCounts


@command("stats", usage="/stats", help="tokens, cost, cache hits and turns of this session and of all sessions (stats/)")
def stats_cmd(ctx: CommandContext, args: str) -> CommandResult:
    if args.strip():
        raise ValueError("/stats takes no arguments")
    stats = ctx.usage_stats
    total, count, bad = stats.totals()
    lines = stats.current.lines("this session")
    lines += total.lines(f"all {count} session(s) in stats/")
    if bad:
        lines.append(f"  unreadable, not counted: {', '.join(bad)}")
    return CommandResult("\n".join(lines), payload=UsageCounts(stats.current.turns, count))
