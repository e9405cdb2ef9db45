"""``/help``: every command, then Claude Code's names (what they run here, or what to use instead).

Its own module: it reads the Claude Code table (:mod:`mnemara.commands.claude_code`), which runs
commands of :mod:`mnemara.commands.core`.
"""
from __future__ import annotations

from mnemara.commands import _REGISTRY, CommandContext, CommandResult, command, did_you_mean, names_of, specs
from mnemara.commands.claude_code import help_rows
from mnemara.commands.core import columns_text
from mnemara.commands.payloads import HelpColumns


@command("help", usage="/help [command]", help="list slash commands, or show one command's usage", aliases=("?",))
def help_cmd(ctx: CommandContext, args: str) -> CommandResult:
    everything = specs()
    wanted = args.strip().lstrip("/").lower()
    if wanted:
        spec = _REGISTRY.get(wanted)
        if spec is None:
            raise ValueError(f"no command /{wanted}{did_you_mean(wanted)}")
        others = names_of(spec)
        also = f"\n  also: {', '.join('/' + name for name in others)}" if others else ""
        return CommandResult(f"{spec.usage}\n  {spec.help}{also}")
    rows = [(s.usage, f"{s.help}{' (TUI only)' if s.tui_only else ''}") for s in everything]
    rows += [("", ""), ("Claude Code's names:", "")] + help_rows()
    return CommandResult(columns_text(rows), payload=HelpColumns(tuple(rows)))
