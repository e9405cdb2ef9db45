"""The permission prompt: which tool, on what target, and the four answers y / n / a / s."""
from __future__ import annotations

import json
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

CHOICES = (
    ("y", "y: allow once", "success"),
    ("n", "n: deny", "error"),
    ("a", "a: always (this target)", "primary"),
    ("s", "s: this session", "default"),
)
PREVIEW_CHARS = 600


def describe_input(tool_input: Any) -> str:
    text = json.dumps(tool_input, ensure_ascii=False, indent=1, sort_keys=True, default=str)
    return text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1] + "…"


class PermissionScreen(ModalScreen[str]):
    """Dismisses with "y", "n", "a" or "s". Escape answers "n"."""

    CSS_PATH = "../styles/permission.tcss"
    BINDINGS = [
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
        policy = getattr(req, "policy_name", "") or getattr(req, "tool_name", "?")
        with Vertical(id="permission-box"):
            yield Static(f"Allow {getattr(req, 'tool_name', '?')}?", id="permission-title")
            yield Static(f"policy: {policy}", classes="permission-field")
            yield Static(f"target: {getattr(req, 'target', '') or '(none)'}", id="permission-target",
                         classes="permission-field", markup=False)
            yield Static(describe_input(getattr(req, "tool_input", {})), id="permission-input", markup=False)
            with Horizontal(id="permission-choices"):
                for key, label, variant in CHOICES:
                    yield Button(label, id=f"choice-{key}", variant=variant, compact=True)

    def action_answer(self, choice: str) -> None:
        self.dismiss(choice)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        if event.button.id and event.button.id.startswith("choice-"):
            self.dismiss(event.button.id.removeprefix("choice-"))
