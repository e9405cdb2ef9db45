"""The row of buttons under the input. Presses bubble up as ``Button.Pressed`` (the app routes by id)."""
from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Button
from textual.widgets.button import ButtonVariant

BUTTONS: tuple[tuple[str, str, ButtonVariant], ...] = (
    ("send", "Send ⌃S", "primary"),
    ("inbox", "⚡ Inbox: OFF", "default"),
    ("role", "📄 Role", "default"),
    ("context", "💬 Context", "default"),
    ("compress", "🗜 Compress", "default"),
    ("quit", "Quit ⌃C", "error"),
)


class ButtonBar(Horizontal):
    """Send, Inbox, Role, Context, Compress, Quit."""

    def compose(self) -> ComposeResult:
        for ident, label, variant in BUTTONS:
            yield Button(label, id=ident, variant=variant, compact=True)

    def set_inbox(self, state: bool | None) -> None:
        """``None`` = peer poll not configured (button disabled)."""
        button = self.query_one("#inbox", Button)
        button.disabled = state is None
        button.label = "⚡ Inbox: ON" if state else "⚡ Inbox: OFF"
