"""The role doc editor: the real file, edited in place. Ctrl+S saves; the next turn reads the new text.

The role doc is re-read from disk on every API call, so saving is all it takes
for the change to apply. 📋 Paste and ⎘ Copy go through pyperclip because a
terminal's own paste keys may never reach the modal.
"""
from __future__ import annotations

from pathlib import Path

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Button, Static, TextArea

from mnemara.core.fsutil import atomic_write_text
from mnemara.ui.tui.clipboard import ClipboardUnavailable, copy_text, paste_text


def display_path(path: Path) -> str:
    """``~/...`` for paths under the home folder, else the path as given."""
    try:
        return "~/" + str(path.expanduser().resolve().relative_to(Path.home().resolve()))
    except ValueError:
        return str(path)


def load_text(path: Path) -> tuple[str, str | None]:
    """The file's text, or empty text and a note saying why (missing = a new file)."""
    try:
        return path.read_text(encoding="utf-8"), None
    except FileNotFoundError:
        return "", "new file: it will be created when you save"
    except (OSError, UnicodeDecodeError) as exc:
        return "", f"cannot read it ({exc}); saving will replace it"


class RoleEditor(ModalScreen[bool]):
    """Dismisses with True when something was saved."""

    CSS_PATH = "../styles/role_editor.tcss"
    BINDINGS = [
        Binding("ctrl+s", "save", "save"),  # not priority: it must come after the keys typed before it
        Binding("escape", "close", "close"),
        Binding("ctrl+home", "document_edge(False)", "start of the file", show=False),
        Binding("ctrl+end", "document_edge(True)", "end of the file", show=False),
    ]

    class Saved(Message):
        def __init__(self, path: Path) -> None:
            super().__init__()
            self.path = path

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = Path(path)
        self.saved = False
        self._saved_text = ""
        self._warned = False

    def compose(self) -> ComposeResult:
        text, note = load_text(self.path)
        self._saved_text = text
        with Vertical(id="role-box"):
            yield Static(f"📄 {display_path(self.path)}", id="role-title", markup=False)
            yield TextArea(text, id="role-text", language="markdown", soft_wrap=True, show_line_numbers=True)
            yield Static(note or "Ctrl+S saves · Esc closes · changes apply on the next turn", id="role-status",
                         markup=False)
            with Horizontal(id="role-buttons"):
                yield Button("💾 Save ⌃S", id="role-save", variant="primary", compact=True)
                yield Button("📋 Paste", id="role-paste", compact=True)
                yield Button("⎘ Copy", id="role-copy", compact=True)
                yield Button("Close", id="role-close", compact=True)

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()

    def action_document_edge(self, end: bool) -> None:
        """Ctrl+Home / Ctrl+End: the cursor to the start or the end of the role doc."""
        self.editor.move_cursor(self.editor.document.end if end else (0, 0))

    @property
    def editor(self) -> TextArea:
        return self.query_one("#role-text", TextArea)

    def _say(self, text: str, error: bool = False) -> None:
        status = self.query_one("#role-status", Static)
        status.set_class(error, "-error")
        status.update(text)

    @on(Button.Pressed, "#role-save")
    def action_save(self) -> None:
        text = self.editor.text
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(self.path, text)
        except OSError as exc:
            self._say(f"not saved: {exc}", error=True)
            return
        self._saved_text = text
        self._warned = False
        self.saved = True
        self._say(f"saved {len(text)} characters to {self.path.name}; the next turn uses it")
        self.post_message(self.Saved(self.path))

    @on(Button.Pressed, "#role-paste")
    def _paste(self) -> None:
        try:
            pasted = paste_text()
        except ClipboardUnavailable as exc:
            self._say(str(exc), error=True)
            return
        self.editor.replace(pasted, *self.editor.selection)
        self._say(f"pasted {len(pasted)} characters (not saved yet)")

    @on(Button.Pressed, "#role-copy")
    def _copy(self) -> None:
        text = self.editor.selected_text or self.editor.text
        try:
            copy_text(text)
        except ClipboardUnavailable as exc:
            self._say(str(exc), error=True)
            return
        self._say(f"copied {len(text)} characters")

    @property
    def dirty(self) -> bool:
        return self.editor.text != self._saved_text

    def _first_warning(self, again: str) -> bool:
        """True the first time unsaved text is about to be dropped (and say so)."""
        if self.dirty and not self._warned:
            self._warned = True
            self._say(f"unsaved changes: Ctrl+S to save, {again} again to discard", error=True)
            return True
        return False

    def confirm_quit(self) -> bool:
        """May the app quit now? Not on the first Ctrl+C over unsaved text."""
        return not self._first_warning("Ctrl+C")

    @on(Button.Pressed, "#role-close")
    def action_close(self) -> None:
        if not self._first_warning("Esc"):
            self.dismiss(self.saved)
