"""The permission prompt: which tool, on what target, and the four answers y / n / a / s.

An Edit, MultiEdit or Write shows the change as a diff (removed lines red, added green), built and
escaped by :mod:`mnemara.guard.change_preview`; its lines are drawn as plain text, never as markup."""
from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.timer import Timer
from textual.widgets import Button, Static
from textual.widgets.button import ButtonVariant

from mnemara.guard.target_text import show_target
from mnemara.ui.tui.widgets.diff_view import DiffView

if TYPE_CHECKING:
    from mnemara.guard.request import PermissionRequest

CHOICES: tuple[tuple[str, str, ButtonVariant], ...] = (
    ("y", "y: once", "success"),
    ("n", "n: deny", "error"),
    ("a", "a: always this target", "primary"),
    ("s", "s: session", "default"),
)


#: Answer keys count once the question has been on screen this long with no key typed.
ARM_SECONDS = 0.6
ANSWER_KEYS = frozenset("ynas")
HINT_WAIT = "answer keys work in a moment (keys typed as this question appeared are ignored)"
HINT_IGNORED = "a key typed as this question appeared was ignored: read it, then answer"
HINT_READY = "answer: y once · n deny · a always this target · s session · Esc deny"


class PermissionScreen(ModalScreen[str]):
    """Dismisses with "y", "n", "a" or "s". Escape answers "n".

    The target is shown whole (escaped, with its line and character count) in a scrollable
    view; the answer buttons sit below it and never scroll out of the box.

    The question can appear while the user is typing a message (typing during a turn is
    normal: the message is queued), and the next letters would answer it, ``a`` saving an
    always-allow, before it was even seen. So the answer keys are armed only once the question
    has been on screen :data:`ARM_SECONDS` with no key typed (:attr:`armed`; the hint line says
    when); a key typed before that is ignored and restarts the wait. Escape (deny) and the
    buttons work at once. The characters typed before the keys were armed belong to the message
    being typed: they are kept in :attr:`held_keys`, and the panel puts them back in its input.
    """

    CSS_PATH = "../styles/permission.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer('y')", "allow once"),
        Binding("n,escape", "answer('n')", "deny"),
        Binding("a", "answer('a')", "always"),
        Binding("s", "answer('s')", "session"),
    ]

    def __init__(self, request: PermissionRequest, arm_seconds: float = ARM_SECONDS) -> None:
        super().__init__()
        self.request = request
        self.arm_seconds = arm_seconds
        self.armed = arm_seconds <= 0
        self._arm_timer: Timer | None = None
        self.held_keys: list[str] = []  # typed as the question appeared: the rest of a message, not answers

    def compose(self) -> ComposeResult:
        req = self.request
        tool = getattr(req, "tool_name", "?")
        policy = getattr(req, "policy_name", "") or tool
        shown = show_target(getattr(req, "target", "") or "")
        change = getattr(req, "change", None)
        about = f" · change: {change.summary}" if change is not None and change.summary else ""
        with Vertical(id="permission-box"):
            yield Static(f"Allow {tool}?", id="permission-title", markup=False)
            yield Static(f"policy: {policy} · {req.target_heading}{about}", id="permission-summary",
                         classes="permission-field", markup=False)
            with VerticalScroll(id="permission-scroll"):
                yield Static(shown.text or "(none)", id="permission-target", markup=False)
                resolved = getattr(req, "shown_resolved", "")
                if resolved:  # a symlink or .. makes the path reach another file: say which
                    yield Static(f"resolves to: {resolved}", id="permission-resolved", markup=False)
                if change is not None and change.lines:
                    yield DiffView(change, id="permission-diff")
                elif change is not None and change.problem:
                    yield Static(f"no diff: {show_target(change.problem).text}", id="permission-no-diff", markup=False)
                rest = getattr(req, "details", "")  # the rest of a Bash/file tool's input, escaped
                if rest:
                    yield Static(rest, id="permission-input", markup=False)
            yield Static(HINT_READY if self.armed else HINT_WAIT, id="permission-hint", markup=False)
            with Horizontal(id="permission-choices"):
                for key, label, variant in CHOICES:
                    yield Button(label, id=f"choice-{key}", variant=variant, compact=True)

    def on_mount(self) -> None:
        if not self.armed:
            self._arm_timer = self.set_timer(self.arm_seconds, self._arm)

    def _arm(self) -> None:
        self.armed = True
        self.query_one("#permission-hint", Static).update(HINT_READY)

    def on_key(self, event: events.Key) -> None:
        """Before the keys are armed, typing restarts the wait and an answer key is ignored (runs before
        the bindings). Escape, arrows and scrolling keys are never typing."""
        if self.armed or event.character is None or not event.character.isprintable():
            return
        if self._arm_timer is not None:
            self._arm_timer.reset()
        self.held_keys.append(event.character)
        event.prevent_default()
        event.stop()
        if event.key in ANSWER_KEYS:
            self.query_one("#permission-hint", Static).update(HINT_IGNORED)

    def action_answer(self, choice: str) -> None:
        self.dismiss(choice)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        if event.button.id and event.button.id.startswith("choice-"):
            self.dismiss(event.button.id.removeprefix("choice-"))
