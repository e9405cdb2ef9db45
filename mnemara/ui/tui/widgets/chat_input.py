"""The multi-line input: Enter inserts a newline; sending is the app's Ctrl+S binding."""
from __future__ import annotations

from textual.widgets import TextArea

PLACEHOLDER = "Message or /command — Enter: newline · Ctrl+S: send · Esc: clear · /help"


class ChatInput(TextArea):
    """A plain TextArea with the panel's defaults (soft wrap, no line numbers, Tab moves focus)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id, soft_wrap=True, tab_behavior="focus", placeholder=PLACEHOLDER,
                         highlight_cursor_line=False)

    def take(self) -> str:
        """Return the text and empty the input."""
        text = self.text
        self.clear()
        return text
