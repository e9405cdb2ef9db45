"""The one-line header: instance, model, role doc."""
from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from mnemara.core.display import terminal_safe


def header_text(instance: str, model: str, role_doc_path: str) -> str:
    """The header as Textual markup: every value escaped for the terminal and for markup (an imported
    ``model`` holding ``[/]`` raised MarkupError; ``[@click=...]`` would have run an action)."""
    role = Path(role_doc_path).name if role_doc_path else "(none)"
    instance, model, role = (terminal_safe(value, markup=True) for value in (instance, model, role))
    return f"mnemara: {instance}   model={model}   role={role}"


class PanelHeader(Static):
    """Rendered from the current config; refreshed when the model or role doc changes."""

    def show(self, instance: str, model: str, role_doc_path: str) -> None:
        self.update(header_text(instance, model, role_doc_path))
