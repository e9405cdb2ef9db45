"""The multi-line input: Ctrl+S sends (the spec's default), or Enter with ``send_key: "enter"``.

Ctrl+S is bound here, on the input, not as a priority key of the app: a
priority binding runs as soon as the app reads the key, while the characters
typed just before it may still wait in this widget's queue (a fast typist, a
paste, tmux ``send-keys``), so only a prefix would be sent. A binding on the
focused widget is checked after the widget has handled every earlier key; Enter
(when it sends) is handled in this widget's key handler, in the same order.

With ``send_key`` ``enter``, a newline is Alt+Enter, Ctrl+J or a backslash at the
end of the line before Enter; a paste arrives as one Paste event and keeps its
newlines. Up on the first line and Down on the last recall earlier messages
(:class:`~mnemara.ui.prompt_history.PromptHistory`, the REPL's ``.prompt_history``);
Tab completes through ``completer`` (:func:`mnemara.commands.complete.complete`).
"""
from __future__ import annotations

from typing import Callable

from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.widgets import Static, TextArea

from mnemara.commands.complete import Completion
from mnemara.ui.prompt_history import PromptHistory
from mnemara.core.display import terminal_safe

PLACEHOLDERS = {  # one line of an 80-column input
    "ctrl+s": "Message or /command · Ctrl+S: send · Enter: newline · ↑ earlier · Tab",
    "enter": "Message or /command · Enter: send · Alt+Enter: newline · ↑ earlier · Tab",
}
OFFER_ENTER = "Ctrl+S sends it (Enter makes a newline; /keys enter makes Enter send, as in Claude Code)"
HINT_SHOWN = 12  # candidates listed under the input
HINT_CHARS = 24  # of each candidate's hint in the list


class CompletionHint(Static):
    """The candidates of an ambiguous Tab, shown between the status line and the input: each with a
    short hint (a row's role and first words), and the whole hint of the one in the input (a command's help)."""

    def show(self, completion: Completion | None, current: int | None = None) -> None:
        if completion is None or len(completion.candidates) < 2:
            self.update("")
            self.display = False
            return
        line = Text("Tab: ", style="dim")
        for n, candidate in enumerate(completion.candidates[:HINT_SHOWN]):
            short = "" if candidate.value.startswith("/") else _short(candidate.hint)
            label = terminal_safe(candidate.value + (f" ({short})" if short else ""))  # row text: the model's
            line.append(f"[{label}]" if n == current else label, style="reverse" if n == current else "")
            line.append("  ")
        more = len(completion.candidates) - HINT_SHOWN
        if more > 0:
            line.append(f"… {more} more", style="dim")
        if current is not None and completion.candidates[current].hint:
            line.append(f"— {terminal_safe(completion.candidates[current].hint)}", style="dim")
        self.update(line)
        self.display = True


def _short(hint: str) -> str:
    return hint if len(hint) <= HINT_CHARS else hint[: HINT_CHARS - 1] + "…"


class ChatInput(TextArea):
    """A plain TextArea with the panel's defaults (soft wrap, no line numbers, Tab completes)."""

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

    class Completed(Message):
        """Tab found several candidates (or none): the panel shows them; None hides the list."""

        def __init__(self, completion: Completion | None, current: int | None = None) -> None:
            super().__init__()
            self.completion = completion
            self.current = current

    class Notice(Message):
        """One line the panel shows for a key of the input: it could not do its job (``error``: Ctrl+V
        with no clipboard) or did something else than the user may think (Enter on an offered message)."""

        def __init__(self, text: str, error: bool = False) -> None:
            super().__init__()
            self.text = text
            self.error = error

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id, soft_wrap=True, tab_behavior="focus", placeholder=PLACEHOLDERS["ctrl+s"],
                         highlight_cursor_line=False)
        self.send_key = "ctrl+s"
        self.prompt_history: PromptHistory | None = None
        self.completer: Callable[[str], Completion | None] | None = None
        self._recall: int | None = None  # index into history.entries while recalling, else None
        self._draft = ""  # what was in the input when recall started
        self._cycle: tuple[Completion, int, str] | None = None  # candidates, shown one, text after it
        self._offered = ""  # the text offer() put in the input (selected)

    def set_send_key(self, send_key: str) -> None:
        """Which key sends: ``ctrl+s`` (Enter is a newline) or ``enter``."""
        self.send_key = "enter" if send_key == "enter" else "ctrl+s"
        self.placeholder = PLACEHOLDERS[self.send_key]

    def take(self) -> str:
        """Return the text and empty the input."""
        text = self.text
        self.clear()
        self._recall = None
        return text

    def action_submit(self) -> None:
        """Take the text and post :class:`Submitted` (nothing happens when the input is blank)."""
        if self.text.strip():
            self.post_message(self.Submitted(self, self.take()))

    def submit_in_order(self) -> None:
        """Submit after the keys still queued for this input (for Ctrl+S elsewhere and the Send button)."""
        self.call_later(self.action_submit)

    # -- keys --------------------------------------------------------------------------------
    async def _on_key(self, event: events.Key) -> None:
        key = event.key
        if key != "tab" and self._cycle is not None:
            self._end_completion()
        if key == "enter" and self.send_key != "enter" and self._offered_whole():
            # Enter on an offered message (the tour's step, a refused command) would replace it with a
            # newline: keep it, put the cursor after it and say which key sends
            event.stop()
            event.prevent_default()
            self.move_cursor(self.document.end)
            self.post_message(self.Notice(OFFER_ENTER))
        elif key in ("ctrl+j", "alt+enter") or (key == "enter" and self.send_key == "enter"):
            event.stop()
            event.prevent_default()
            if key != "enter":
                self._type("\n")
            elif self._ends_in_backslash():
                row, column = self.cursor_location
                self.replace("\n", (row, column - 1), (row, column))
            else:
                self.action_submit()
        elif key == "tab":  # completes, or does nothing (the focus stays here: Shift+Tab reaches the log)
            event.stop()
            event.prevent_default()
            self._complete()

    def _type(self, text: str) -> None:
        result = self._replace_via_keyboard(text, *self.selection)
        if result is not None:
            self.move_cursor(result.end_location)

    def _ends_in_backslash(self) -> bool:
        """The cursor is at the end of a line that ends with ``\\`` (and nothing is selected)."""
        row, column = self.cursor_location
        line = self.document.get_line(row)
        return self.selection.is_empty and column == len(line) and line.endswith("\\")

    # -- history -------------------------------------------------------------------------------
    def action_cursor_up(self, select: bool = False) -> None:
        if not select and self.navigator.is_first_wrapped_line(self.cursor_location) and self._recall_step(-1):
            return
        super().action_cursor_up(select)

    def action_cursor_down(self, select: bool = False) -> None:
        if not select and self.navigator.is_last_wrapped_line(self.cursor_location) and self._recall_step(1):
            return
        super().action_cursor_down(select)

    def _recall_step(self, step: int) -> bool:
        """Show the previous (-1) or next (+1) earlier message; past the newest, the draft again."""
        entries = self.prompt_history.entries if self.prompt_history is not None else []
        if self._recall is None:
            if step > 0 or not entries:
                return False
            self._draft = self.text
            index = len(entries)
        else:
            index = self._recall
        index += step
        while 0 <= index < len(entries) and entries[index] == self.text:  # skip repeats of what is shown
            index += step
        if index < 0:
            return True  # the oldest one stays
        if index >= len(entries):
            self._recall = None
            self._show(self._draft)
            return True
        self._recall = index
        self._show(entries[index])
        return True

    def _show(self, text: str) -> None:
        recall = self._recall
        self.text = text
        self._recall = recall  # (setting text does not end a recall)
        self.move_cursor(self.document.end)

    def recall_text(self, text: str) -> None:
        """Put ``text`` (chosen from the history search) in the input, replacing what was there."""
        self._recall = None
        self.text = text
        self.move_cursor(self.document.end)

    # -- completion -----------------------------------------------------------------------------
    def _complete(self) -> bool:
        """Tab: complete the word before the cursor; False when there is nothing to complete here."""
        if self.completer is None or not self.selection.is_empty:
            return False
        if self._cycle is not None and self._cycle[2] == self.text:
            cycling, shown, _ = self._cycle
            self._cycle_to(cycling, (shown + 1) % len(cycling.candidates))
            return True
        before = self.get_text_range((0, 0), self.cursor_location)
        completion = self.completer(before)
        if completion is None:
            return False
        if not completion.candidates:
            self.app.bell()
            self.post_message(self.Completed(None))
            return True
        if len(completion.candidates) == 1:
            value = completion.values[0]
            self._replace_word(completion.word, value + ("" if value.endswith("/") else " "))
            self.post_message(self.Completed(None))
            return True
        prefix = completion.common_prefix()
        if len(prefix) > len(completion.word):
            self._replace_word(completion.word, prefix)
            self.post_message(self.Completed(completion))
            return True
        self._cycle_to(completion, 0)
        return True

    def _cycle_to(self, completion: Completion, index: int) -> None:
        shown = self._cycle[0].values[self._cycle[1]] if self._cycle is not None else completion.word
        self._replace_word(shown, completion.values[index])
        self._cycle = (completion, index, self.text)
        self.post_message(self.Completed(completion, index))

    def _replace_word(self, word: str, value: str) -> None:
        row, column = self.cursor_location
        result = self.replace(value, (row, column - len(word)), (row, column))
        self.move_cursor(result.end_location)

    def _end_completion(self) -> None:
        self._cycle = None
        self.post_message(self.Completed(None))

    # -- paste and give-back ---------------------------------------------------------------------
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
            if not pasted:  # one line in the log (a toast wraps and sits over the input)
                self.post_message(self.Notice(f"Ctrl+V: {exc.message}; paste with your terminal's key instead", True))
                return
        if pasted:
            self._type(pasted)

    def put_back(self, text: str) -> None:
        """Return refused text to the front of the input, before anything typed since."""
        self.insert(text, (0, 0))

    def offer(self, text: str) -> None:
        """Put ``text`` in an empty input, selected: Ctrl+S/Enter sends it, typing replaces it (Enter
        with ``send_key`` ctrl+s keeps it and says Ctrl+S sends)."""
        self._recall = None
        self.text = text
        self.select_all()
        self._offered = text

    def _offered_whole(self) -> bool:
        """The input holds what :meth:`offer` put there, still selected whole."""
        return bool(self._offered) and self.text == self._offered and self.selected_text == self.text
