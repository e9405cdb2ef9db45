"""The status line under the chat log: ``turns: n/max from row N | window tokens: used/max | model | inbox``.

"window tokens" counts the pinned rows and the rolling window against
``max_window_tokens``; the context viewer's title shows the same number and,
apart from it, the whole next request (tool schemas, role doc, manifest too).
"""
from __future__ import annotations

from dataclasses import dataclass

from textual.widgets import Static


def human_tokens(n: int) -> str:
    """``950`` -> ``950``, ``14_200`` -> ``14K``, ``1_250_000`` -> ``1.2M``."""
    if n < 1000:
        return str(n)
    if n < 1_000_000:
        return f"{n // 1000}K"
    millions = n / 1_000_000
    return f"{millions:.1f}M".replace(".0M", "M")


@dataclass(frozen=True)
class Status:
    turns: int
    max_turns: int
    tokens: int
    max_tokens: int
    model: str
    inbox: str  # the inbox's state text, or "inbox: n/a" when peer poll is not configured
    busy: bool = False
    oldest: int | None = None  # the oldest row id in the window (rows before it have left)

    def line(self) -> str:
        busy = " | working… (Esc or /stop cancels)" if self.busy else ""
        since = f" from row {self.oldest}" if self.oldest is not None else ""
        return (
            f"turns: {self.turns}/{self.max_turns}{since} | window tokens: {human_tokens(self.tokens)}/{human_tokens(self.max_tokens)}"
            f" | model: {self.model} | {self.inbox}{busy}"
        )


class StatusLine(Static):
    """Shows a :class:`Status`; the app pushes a new one after every turn or command."""

    def show_status(self, status: Status) -> None:
        self.status = status
        self.update(status.line())
