"""A yes/no question in a modal, with up to three labelled choices (e.g. compress: what goes, then ask).

Dismisses with the id of the chosen button, or None on Esc / Cancel. ``y`` picks
the first choice, ``n`` cancels. The question scrolls when it is long; the
buttons stay visible.
"""
from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from mnemara.core.display import terminal_safe


class ConfirmScreen(ModalScreen[str | None]):
    CSS_PATH = "../styles/dialogs.tcss"
    BINDINGS = [
        Binding("escape", "cancel", "cancel"),
        Binding("n", "cancel", "no", show=False),
        Binding("y", "first", "yes", show=False),
    ]

    def __init__(self, title: str, question: str, choices: list[tuple[str, str]]) -> None:
        super().__init__()
        self.title_text = title
        self.question = question
        self.choices = choices  # (id, label); the first is the default yes

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-box"):
            yield Static(terminal_safe(self.title_text), id="confirm-title", markup=False)
            with VerticalScroll(id="confirm-body"):  # the question may quote an import, a path or a name
                yield Static(terminal_safe(self.question), id="confirm-question", markup=False)
            with Horizontal(id="confirm-buttons"):
                for n, (ident, label) in enumerate(self.choices):
                    yield Button(label, id=f"confirm-{ident}", variant="primary" if n == 0 else "default", compact=True)
                yield Button("Cancel (n)", id="confirm-cancel", compact=True)

    def on_mount(self) -> None:
        self.query_one(f"#confirm-{self.choices[0][0]}", Button).focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        ident = (event.button.id or "").removeprefix("confirm-")
        self.dismiss(None if ident == "cancel" else ident)

    def action_first(self) -> None:
        self.dismiss(self.choices[0][0])

    def action_cancel(self) -> None:
        self.dismiss(None)
