"""Commands that only the chat panel can carry out: they open one of its modal screens.

The REPL prints their text (saying they are TUI-only); the panel reacts to the
``action`` and opens the role doc editor or the context viewer.
"""
from __future__ import annotations


from mnemara.commands import CommandContext, CommandResult, command

_ONLY = "is TUI-only: run `mnemara run` without --no-tui (or unset MNEMARA_NO_TUI) to use it"


@command("role_doc", usage="/role_doc", tui_only=True,
         help="open the role doc editor (edit live; Ctrl+S saves; the next turn uses it)")
def role_doc(ctx: CommandContext, args: str) -> CommandResult:
    if args:
        raise ValueError("/role_doc takes no arguments (to switch files use /role <path>)")
    return CommandResult(f"/role_doc {_ONLY}", action="open_role_editor")


@command("context", usage="/context", tui_only=True,
         help="open the context viewer (token breakdown, rows, pinned slots, edit in place)")
def context(ctx: CommandContext, args: str) -> CommandResult:
    if args:
        raise ValueError("/context takes no arguments")
    return CommandResult(f"/context {_ONLY}", action="open_context")
