"""Ctrl+R: search the messages sent before (the instance's ``.prompt_history``, shared with the REPL).

Typing narrows the list (any case, anywhere in the message), newest first; Ctrl+R or
Up/Down move through the matches; Enter puts the chosen one in the input; Esc
leaves the input as it was. Dismisses with the chosen text or None.
"""
from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from mnemara.ui.prompt_history import PromptHistory
from mnemara.core.display import terminal_safe

SHOWN = 50  # matches listed
PREVIEW = 200  # characters of a match shown on its line


def one_line(text: str) -> str:
    """A match on one line, its control characters shown, not obeyed (the file may have been edited)."""
    flat = terminal_safe(text.replace("\n", " ⏎ "))
    return flat if len(flat) <= PREVIEW else flat[: PREVIEW - 1] + "…"


class HistorySearch(ModalScreen[str | None]):
    CSS_PATH = "../styles/dialogs.tcss"
    BINDINGS = [
        Binding("escape", "cancel", "cancel"),
        Binding("ctrl+r,down", "move(1)", "older", priority=True),
        Binding("up", "move(-1)", "newer", priority=True),
    ]

    def __init__(self, history: PromptHistory, query: str = "") -> None:
        super().__init__()
        self.history = history
        self.query_text = query
        self.matches: list[str] = []

    def compose(self) -> ComposeResult:
        with Vertical(id="history-box"):
            yield Static("Search earlier messages · Enter: put in the input · Ctrl+R: older match · Esc: cancel",
                         id="history-title", markup=False)
            yield Input(self.query_text, placeholder="words of an earlier message", id="history-query")
            yield OptionList(id="history-matches")

    def on_mount(self) -> None:
        self.query_one(Input).focus()
        self._refresh_matches(self.query_text)

    @property
    def options(self) -> OptionList:
        return self.query_one("#history-matches", OptionList)

    @on(Input.Changed, "#history-query")
    def _changed(self, event: Input.Changed) -> None:
        self._refresh_matches(event.value)

    def _refresh_matches(self, needle: str) -> None:
        self.matches = self.history.search(needle)[:SHOWN]
        options = self.options
        options.clear_options()
        if self.matches:
            options.add_options([Option(one_line(m)) for m in self.matches])
            options.highlighted = 0
        else:
            options.add_option(Option("(no earlier message has these words)", disabled=True))

    def action_move(self, step: int) -> None:
        if not self.matches:
            return
        current = self.options.highlighted or 0
        self.options.highlighted = max(0, min(len(self.matches) - 1, current + step))

    @property
    def chosen(self) -> str | None:
        index = self.options.highlighted
        return self.matches[index] if self.matches and index is not None else None

    @on(Input.Submitted)
    def _pick(self) -> None:
        self.dismiss(self.chosen)

    @on(OptionList.OptionSelected)
    def _clicked(self, event: OptionList.OptionSelected) -> None:
        self.options.highlighted = event.option_index
        self.dismiss(self.chosen)

    def action_cancel(self) -> None:
        self.dismiss(None)
