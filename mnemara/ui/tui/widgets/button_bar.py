"""The row of buttons under the input. Presses bubble up as ``Button.Pressed`` (the app routes by id).

The buttons never take focus: a click runs the button and the keys typed next
still go to the chat input.
"""
from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Button
from textual.widgets.button import ButtonVariant

BUTTONS: tuple[tuple[str, str, ButtonVariant], ...] = (
    ("send", "Send ⌃S", "primary"),
    ("inbox", "⚡ Inbox: n/a", "default"),
    ("role", "📄 Role", "default"),
    ("context", "💬 Context", "default"),
    ("compress", "🗜 Compress", "default"),
    ("quit", "Quit ⌃C", "error"),
)


class ButtonBar(Horizontal):
    """Send, Inbox, Role, Context, Compress, Quit."""

    def compose(self) -> ComposeResult:
        for ident, label, variant in BUTTONS:
            button = Button(label, id=ident, variant=variant, compact=True)
            button.can_focus = False
            yield button

    def set_send_key(self, send_key: str) -> None:
        """The Send button names the key that sends (``/keys``)."""
        button = self.query_one("#send", Button)
        label = send_label(send_key)
        if str(button.label) != label:
            button.label = label

    def set_inbox(self, state: bool | None) -> None:
        """``None`` = peer poll not configured: the button says n/a, like the status line, and a click explains."""
        button = self.query_one("#inbox", Button)
        button.label = inbox_label(state)


def inbox_label(state: bool | None) -> str:
    """The Inbox button's words; the status line starts with the same words."""
    return "⚡ Inbox: n/a" if state is None else f"⚡ Inbox: {'ON' if state else 'OFF'}"


def send_label(send_key: str) -> str:
    """The Send button's words: the key that sends, as the input's placeholder names it."""
    return "Send ⏎" if send_key == "enter" else "Send ⌃S"
