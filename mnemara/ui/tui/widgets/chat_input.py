"""The multi-line input: Enter inserts a newline; Ctrl+S submits.

Ctrl+S is bound here, on the input, not as a priority key of the app: a
priority binding runs as soon as the app reads the key, while the characters
typed just before it may still wait in this widget's queue (a fast typist, a
paste, tmux ``send-keys``), so only a prefix would be sent. A binding on the
focused widget is checked after the widget has handled every earlier key.
"""
from __future__ import annotations

from textual.binding import Binding
from textual.message import Message
from textual.widgets import TextArea

PLACEHOLDER = "Message or /command — Enter: newline · Ctrl+S: send · Esc: clear · /help"


class ChatInput(TextArea):
    """A plain TextArea with the panel's defaults (soft wrap, no line numbers, Tab moves focus)."""

    BINDINGS = [Binding("ctrl+s", "submit", "Send", show=False)]

    class Submitted(Message):
        """The user sent ``text`` (already taken out of the input)."""

        def __init__(self, chat_input: "ChatInput", text: str) -> None:
            super().__init__()
            self.chat_input = chat_input
            self.text = text

        @property
        def control(self) -> "ChatInput":
            return self.chat_input

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id, soft_wrap=True, tab_behavior="focus", placeholder=PLACEHOLDER,
                         highlight_cursor_line=False)

    def take(self) -> str:
        """Return the text and empty the input."""
        text = self.text
        self.clear()
        return text

    def action_submit(self) -> None:
        """Take the text and post :class:`Submitted` (nothing happens when the input is blank)."""
        if self.text.strip():
            self.post_message(self.Submitted(self, self.take()))

    def submit_in_order(self) -> None:
        """Submit after the keys still queued for this input (for Ctrl+S elsewhere and the Send button)."""
        self.call_later(self.action_submit)

    def action_paste(self) -> None:
        """Ctrl+V: paste the system clipboard (pyperclip); without one, Textual's own clipboard.

        Terminals often swallow their paste key or send nothing for Ctrl+V, so the
        system clipboard is read directly; when there is none the user is told why.
        """
        from mnemara.ui.tui.clipboard import ClipboardUnavailable, paste_text

        try:
            pasted = paste_text()
        except ClipboardUnavailable as exc:
            pasted = self.app.clipboard
            if not pasted:
                self.app.notify(str(exc), severity="warning")
                return
        if pasted:
            result = self._replace_via_keyboard(pasted, *self.selection)
            if result is not None:
                self.move_cursor(result.end_location)

    def put_back(self, text: str) -> None:
        """Return refused text to the front of the input, before anything typed since."""
        self.insert(text, (0, 0))
