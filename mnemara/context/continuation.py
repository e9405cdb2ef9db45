"""When a CLI may continue its own conversation instead of being sent the whole window again.

A turn normally starts a fresh CLI conversation: one user message holding the window's rows
(:mod:`mnemara.context.transcript`), the per-turn parts and the new message. The CLI then adds
the turn's tool calls and results as messages of its own, and marks the last one for the
prompt cache. When the next turn rebuilds, those calls come back re-rendered as history rows:
new bytes, written to the cache a second time.

So a CLI that ended a turn cleanly keeps its conversation (:class:`Conversation`) while the
window *only grew*: the rows the conversation carries are, in order and byte for byte as
rendered, exactly the window the next turn would send. Then the next turn sends only its own
part (the pinned slots, the per-turn blocks, the message) as a new user message, after the
cached conversation. Anything else (a trim, an edit, eviction, a pin, an undo, a compressed or
damaged row, another layout) is a rebuild: the conversation is rewound to empty and the whole
window is sent as usual. A changed role doc, model, tool list or TTL never gets here: they
change the process's key, and a new process has no conversation.

What the model sees in continuation is the earlier turns as the CLI's real messages (tool
calls and results as blocks, each turn's message with the slots and per-turn blocks it was
sent with), not as ``<turn>`` rows. :func:`continues` is the one rule, a pure function.
"""
from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, replace

from mnemara.context.transcript import render_turn
from mnemara.store.rows import Turn, Window

#: A conversation whose last prompt the API counted above this is rebuilt, not continued: the CLI
#: compacts a conversation of its own near a full context (about 167 K of a 200 K window), summarising
#: behind the user's window, and a fresh conversation has no count for it to act on. (Its switch,
#: DISABLE_AUTO_COMPACT, also takes the token counts out of its "prompt is too long" error, which the
#: overflow recovery needs.)
COMPACT_GUARD_TOKENS = 120_000

#: (row id, digest of the row as the request renders it)
RowPrint = tuple[int, str]


def row_prints(rows: Sequence[Turn]) -> tuple[RowPrint, ...]:
    """Each row's id and a digest of its rendered text: equal prints, equal bytes sent."""
    return tuple((t.id, hashlib.sha256(render_turn(t).encode("utf-8", "surrogatepass")).hexdigest()) for t in rows)


@dataclass(frozen=True)
class Conversation:
    """What a kept CLI's conversation holds, in the window's terms."""

    start_id: str  # the uuid of its first user message: rewinding to it empties the conversation
    rows: tuple[RowPrint, ...]  # the window rows it carries, oldest first: the rebuild's, then each turn's
    layout: str  # the request_layout its first message was built with
    carried_tokens: int = 0  # tokens of earlier turns' slots and per-turn blocks the model still sees
    turns: int = 1  # turns served in this conversation
    prompt_tokens: int = 0  # what the API counted for the prompt of its last call (0: not known)

    def grown(self, turn_rows: Sequence[Turn], part_tokens: int, *, continued: bool,
              prompt_tokens: int = 0) -> Conversation:
        """The conversation after a clean turn stored ``turn_rows`` (its message and answer);
        ``part_tokens``: the slots and per-turn blocks its message carried, now part of the history;
        ``prompt_tokens``: the API's count of the turn's last prompt."""
        return replace(self, rows=self.rows + row_prints(turn_rows), carried_tokens=self.carried_tokens + part_tokens,
                       turns=self.turns + 1 if continued else self.turns, prompt_tokens=prompt_tokens)


def continues(conversation: Conversation | None, window: Window, exclude_ids: Sequence[int], *,
              layout: str, max_tokens: int) -> str | None:
    """Why the next turn must rebuild, or None when it may continue ``conversation``.

    It continues only when the window it would send (``window``'s rows without ``exclude_ids``,
    the new message) is exactly the rows the conversation carries, no row left out as damaged,
    the layout is the same, the conversation (the window, plus the slots and per-turn blocks
    earlier turns' messages carried) stays within the window's token cap, and its last prompt, as the
    API counted it, is under :data:`COMPACT_GUARD_TOKENS`.
    """
    if conversation is None:
        return "no conversation to continue"
    if layout != conversation.layout:
        return "request_layout changed"
    if window.damaged:
        return "a damaged row is left out"
    skip = set(exclude_ids)
    rows = [t for t in window.rows if t.id not in skip]
    if row_prints(rows) != conversation.rows:
        return "the window changed (a row left, was edited or was added)"
    if window.tokens + conversation.carried_tokens > max_tokens:
        return "the conversation would pass max_window_tokens"
    if conversation.prompt_tokens > COMPACT_GUARD_TOKENS:
        return f"the conversation's last prompt ({conversation.prompt_tokens} tokens) nears the CLI's own compaction"
    return None
