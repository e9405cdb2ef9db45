"""Tab in the REPL completes what the panel's Tab does (:func:`mnemara.commands.complete.complete`)."""
from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from mnemara.commands.complete import complete
from mnemara.core.display import terminal_safe

if TYPE_CHECKING:
    from mnemara.commands.session_api import SessionAPI


class SlashCompleter(Completer):
    """Commands, their arguments and paths, for the text before the cursor (only when Tab is pressed)."""

    def __init__(self, session: SessionAPI) -> None:
        self.session = session

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        found = complete(self.session, document.text_before_cursor)
        if found is None:
            return
        for candidate in found.candidates:
            yield Completion(candidate.value, start_position=-len(found.word),
                             display_meta=terminal_safe(candidate.hint))
