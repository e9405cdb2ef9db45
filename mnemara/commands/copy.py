"""``/copy``: a code block of the last answer (or all of it) to the clipboard.

The command finds the text; the UI (panel or REPL) puts it on the clipboard
(``action="copy"``) and says so, or says why there is no clipboard. A UI that numbers
code blocks across the session (the terminal REPL, whose captions scroll up with their
answers) sets ``shown_code_blocks`` on the session; then N is the number in its captions.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from mnemara.commands import CommandResult, command
from mnemara.commands.payloads import CopyText
from mnemara.core.markdown_blocks import code_blocks

if TYPE_CHECKING:
    from mnemara.commands import CommandContext
    from mnemara.store.turns import TurnStore

LOOK_BACK = 50  # rows searched for the last answer with text


def last_answer(store: TurnStore) -> str:
    """The text of the newest assistant row that has any."""
    for turn in reversed(store.history(limit=LOOK_BACK)):
        if turn.role == "assistant" and turn.text.strip():
            return str(turn.text)
    return ""


@command("copy", usage="/copy [N|all]",
         help="copy code block N of the last answer to the clipboard (default: its last block; all: the whole answer)")
def copy_cmd(ctx: CommandContext, args: str) -> CommandResult:
    word = args.strip().lower()
    if word and word != "all" and not (word.isdigit() and int(word) > 0):
        raise ValueError(f"give a code block number (1, 2, ...) or 'all', not {args.strip()!r}")
    shown = getattr(ctx, "shown_code_blocks", None)
    if shown and word != "all":
        n = int(word) if word else len(shown)
        if n > len(shown):
            return CommandResult(f"no code block {n}: this session has shown {len(shown)} (numbered in their captions)",
                                 ok=False)
        return _copied(n, shown[n - 1])
    text = last_answer(ctx.store)
    if not text:
        return CommandResult("nothing to copy: no answer yet", ok=False)
    if word == "all":
        return CommandResult(f"copied the last answer ({len(text)} characters)", action="copy", payload=CopyText(text))
    blocks = code_blocks(text)
    if not blocks:
        return CommandResult("the last answer has no code block (/copy all copies the whole answer)", ok=False)
    n = int(word) if word else len(blocks)
    if n > len(blocks):
        return CommandResult(f"the last answer has {len(blocks)} code block(s), not {n}", ok=False)
    return _copied(n, blocks[n - 1].text)


def _copied(n: int, code: str) -> CommandResult:
    lines = code.count("\n") + 1
    return CommandResult(f"copied code block {n} ({lines} line{'s' if lines != 1 else ''})", action="copy",
                         payload=CopyText(code))
