"""The permission prompt: which tool, on what target, and the four answers y / n / a / s."""
from __future__ import annotations

from typing import Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static
from textual.widgets.button import ButtonVariant

from mnemara.target_text import show_target

CHOICES: tuple[tuple[str, str, ButtonVariant], ...] = (
    ("y", "y: once", "success"),
    ("n", "n: deny", "error"),
    ("a", "a: always this target", "primary"),
    ("s", "s: session", "default"),
)


class PermissionScreen(ModalScreen[str]):
    """Dismisses with "y", "n", "a" or "s". Escape answers "n".

    The target is shown whole (escaped, with its line and character count) in a scrollable
    view; the answer buttons sit below it and never scroll out of the box.
    """

    CSS_PATH = "../styles/permission.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer('y')", "allow once"),
        Binding("n,escape", "answer('n')", "deny"),
        Binding("a", "answer('a')", "always"),
        Binding("s", "answer('s')", "session"),
    ]

    def __init__(self, request: Any) -> None:
        super().__init__()
        self.request = request

    def compose(self) -> ComposeResult:
        req = self.request
        tool = getattr(req, "tool_name", "?")
        policy = getattr(req, "policy_name", "") or tool
        shown = show_target(getattr(req, "target", "") or "")
        with Vertical(id="permission-box"):
            yield Static(f"Allow {tool}?", id="permission-title", markup=False)
            yield Static(f"policy: {policy} · target: {shown.summary}", id="permission-summary",
                         classes="permission-field", markup=False)
            with VerticalScroll(id="permission-scroll"):
                yield Static(shown.text or "(none)", id="permission-target", markup=False)
                resolved = getattr(req, "shown_resolved", "")
                if resolved:  # a symlink or .. makes the path reach another file: say which
                    yield Static(f"resolves to: {resolved}", id="permission-resolved", markup=False)
                rest = getattr(req, "details", "")  # the rest of a Bash/file tool's input, escaped
                if rest:
                    yield Static(rest, id="permission-input", markup=False)
            with Horizontal(id="permission-choices"):
                for key, label, variant in CHOICES:
                    yield Button(label, id=f"choice-{key}", variant=variant, compact=True)

    def action_answer(self, choice: str) -> None:
        self.dismiss(choice)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        if event.button.id and event.button.id.startswith("choice-"):
            self.dismiss(event.button.id.removeprefix("choice-"))
