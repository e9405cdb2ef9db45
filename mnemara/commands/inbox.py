"""``/inbox``: toggle peer-message delivery live and show the inbox state.

The command finds the runner as ``ctx.peer_inbox`` (a :class:`mnemara.peer.PeerInbox`,
or None when peer polling is off for this panel). The toggle is live and saved
(``peer_inbox_on``), so the next panel starts with delivery as it was left;
``peer_poll_enabled`` in config.json decides whether a panel polls at all.
"""
from __future__ import annotations

from mnemara.commands import CommandContext, CommandResult, command
from mnemara.commands.payloads import InboxState

USAGE = "/inbox [on|off|status]"


@command("inbox", usage=USAGE, help="toggle delivery of peer messages (ON/OFF) and show the inbox state")
def inbox_command(ctx: CommandContext, args: str) -> CommandResult:
    inbox = ctx.peer_inbox
    word = args.strip().lower()
    if word not in ("", "on", "off", "status", "toggle"):
        raise ValueError(f"unknown argument {args.strip()!r}: expected on, off or status")
    if inbox is None:
        return CommandResult(
            "peer polling is off for this panel: set peer_poll_enabled to true and peer_db_path "
            "in config.json, then start `mnemara run` again",
            ok=False,
        )
    if word in ("", "toggle"):
        inbox.toggle()
    elif word in ("on", "off"):
        inbox.set_enabled(word == "on")
    if word != "status" and ctx.config.peer_inbox_on != inbox.enabled:
        ctx.update_config(peer_inbox_on=inbox.enabled)
    return CommandResult(inbox.describe(), action="inbox_state",
                         payload=InboxState(inbox.enabled, inbox.state_text))
