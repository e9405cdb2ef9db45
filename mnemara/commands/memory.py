"""``/proposals``: list pending role-amendment proposals, or show one.

The command reads ``ctx.instance`` (an :class:`mnemara.store.instance.Instance`).
Accepting a proposal stays a human act: edit the role doc, then set the
proposal's ``status:`` to ``accepted`` or ``rejected``.
"""
from __future__ import annotations


from mnemara.commands import CommandContext, CommandResult, command
from mnemara.commands.payloads import FileShown, ProposalFiles
from mnemara.core.errors import UsageError

USAGE = "/proposals [all|N]"


@command("proposals", usage=USAGE, help="list pending role-amendment proposals (all: every status; N: show one)")
def proposals_command(ctx: CommandContext, args: str) -> CommandResult:
    from mnemara.memory.proposals import list_proposals

    instance = ctx.instance
    word = args.strip().lower()
    if word not in ("", "all") and not word.isdigit():
        raise ValueError(f"unknown argument {args.strip()!r}: expected nothing, 'all' or a number from the list")
    folder = instance.role_proposals_dir
    items = list_proposals(folder, status=None if word == "all" else "pending")
    if word.isdigit():
        number = int(word)
        if not 1 <= number <= len(items):
            raise UsageError(f"no pending proposal number {number} (there are {len(items)})")
        item = items[number - 1]
        text = item.path.read_text(encoding="utf-8", errors="replace")
        return CommandResult(f"{item.path}\n\n{text}", payload=FileShown(str(item.path)))
    if not items:
        what = "proposals" if word == "all" else "pending proposals"
        return CommandResult(f"no {what} in {folder}", payload=ProposalFiles(()))
    lines = [f"{len(items)} {'proposal(s)' if word == 'all' else 'pending proposal(s)'} in {folder}:"]
    for n, item in enumerate(items, 1):
        status = f" [{item.status}]" if word == "all" else ""
        lines.append(f"  {n}. {item.title}{status}  ({item.path.name})")
    lines.append("show one with /proposals N; accept by editing the role doc, then set status: accepted")
    return CommandResult("\n".join(lines), payload=ProposalFiles(tuple(str(i.path) for i in items)))
