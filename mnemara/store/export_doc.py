"""What an export file holds once read: config, role doc and rows (ours or a Mnemara 0.18 export)."""
from __future__ import annotations

from dataclasses import dataclass, field

from mnemara.core.config import Config
from mnemara.store.rows import Turn


@dataclass
class ExportDoc:
    config: Config | None  # None: the file had no config (a Mnemara 0.18 export may not); the current one stays
    role_path: str
    role_present: bool
    role_text: str
    rows: list[Turn] = field(default_factory=list)

