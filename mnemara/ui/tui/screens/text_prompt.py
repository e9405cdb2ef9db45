"""A one-line question in a modal (slot label, new position...). Dismisses with the text or None."""
from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from mnemara.core.display import terminal_safe


class TextPrompt(ModalScreen[str | None]):
    CSS_PATH = "../styles/dialogs.tcss"
    BINDINGS = [Binding("escape", "cancel", "cancel")]

    def __init__(self, question: str, value: str = "", placeholder: str = "") -> None:
        super().__init__()
        self.question = question
        self.value = value
        self.placeholder = placeholder

    def compose(self) -> ComposeResult:
        with Vertical(id="prompt-box"):
            yield Static(terminal_safe(self.question), id="prompt-question", markup=False)
            yield Input(self.value, placeholder=self.placeholder, id="prompt-input")
            with Horizontal(id="prompt-buttons"):
                yield Button("OK", id="prompt-ok", variant="primary", compact=True)
                yield Button("Cancel", id="prompt-cancel", compact=True)

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    @on(Input.Submitted)
    @on(Button.Pressed, "#prompt-ok")
    def _ok(self) -> None:
        self.dismiss(self.query_one(Input).value.strip())

    @on(Button.Pressed, "#prompt-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
