"""``/keys``: which key sends a message in the panel (``send_key`` in config.json).

``ctrl+s`` is the spec's default (Enter is a newline); ``enter`` is the Claude Code
habit (Enter sends; Alt+Enter, Ctrl+J or a trailing backslash make a newline).
The panel reads the live config after every command, so the change applies at once.
"""
from __future__ import annotations

from mnemara.commands import CommandContext, CommandResult, command
from mnemara.commands.payloads import SendKeyChosen

SEND_KEYS = ("ctrl+s", "enter")
_SPELLINGS = {"ctrl+s": "ctrl+s", "ctrl-s": "ctrl+s", "c-s": "ctrl+s", "^s": "ctrl+s", "enter": "enter",
              "return": "enter"}


def describe(send_key: str) -> str:
    """One line saying what sends and what makes a newline with ``send_key``."""
    if send_key == "enter":
        return "Enter sends; Alt+Enter, Ctrl+J or a line ending in \\ make a newline (/keys ctrl+s: the default)"
    return "Ctrl+S sends; Enter makes a newline (/keys enter: Enter sends, as in Claude Code)"


@command("keys", usage="/keys [ctrl+s|enter]",
         help="show or set the panel's send key: ctrl+s (default; Enter is a newline) or enter (Enter sends)")
def keys_cmd(ctx: CommandContext, args: str) -> CommandResult:
    word = args.strip().lower()
    current = str(getattr(ctx.config, "send_key", "ctrl+s"))
    if not word:
        return CommandResult(f"the panel's send key: {current}. {describe(current)}")
    wanted = _SPELLINGS.get(word)
    if wanted is None:
        raise ValueError(f"unknown send key {args.strip()!r}: use ctrl+s or enter")
    if wanted != current:
        ctx.update_config(send_key=wanted)
    return CommandResult(f"the panel's send key: {wanted} (saved in config.json). {describe(wanted)}",
                         payload=SendKeyChosen(wanted))
