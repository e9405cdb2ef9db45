"""The one-line header: instance, model, role doc."""
from __future__ import annotations

from pathlib import Path

from textual.widgets import Static


def header_text(instance: str, model: str, role_doc_path: str) -> str:
    role = Path(role_doc_path).name if role_doc_path else "(none)"
    return f"mnemara: {instance}   model={model}   role={role}"


class PanelHeader(Static):
    """Rendered from the current config; refreshed when the model or role doc changes."""

    def show(self, instance: str, model: str, role_doc_path: str) -> None:
        self.update(header_text(instance, model, role_doc_path))
