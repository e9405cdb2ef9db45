"""Messages the user sent while a turn ran, not handed to a turn yet: ``<instance>/unsent.json``.

The panel and the REPL queue a message sent during a turn and send it when that
turn ends. Until then it exists nowhere else, so each change of the queue is
written here (a JSON list of the messages, oldest first, private to the user,
replaced atomically). A UI that ends before sending them (Ctrl+C, the window
closing, a crash) leaves the file behind; the next one opened on the instance
takes the messages back and puts them in its input, unsent, and says so.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from mnemara.core import json_limits
from mnemara.core.fsutil import atomic_write_text

UNSENT_NAME = "unsent.json"


class UnsentMessages:
    """The unsent-queue file of one instance."""

    def __init__(self, root: Path) -> None:
        self.path = Path(root) / UNSENT_NAME

    def keep(self, texts: list[str]) -> str | None:
        """Make the file hold ``texts`` (no file when empty); returns why it could not, or None."""
        try:
            if texts:
                atomic_write_text(self.path, json.dumps(texts, ensure_ascii=False, indent=1) + "\n")
            else:
                self.path.unlink(missing_ok=True)
        except OSError as exc:
            return f"cannot write {self.path}: {exc}"
        return None

    def read(self) -> tuple[list[str], str | None]:
        """The messages the file holds, and why it could not be read when it could not (then it is
        left where it is)."""
        try:
            data = json_limits.load_file(self.path)
        except FileNotFoundError:
            return [], None
        except (OSError, ValueError) as exc:
            return [], f"cannot read {self.path}: {exc}; it is left as it is"
        if not isinstance(data, list) or not all(isinstance(t, str) for t in data):
            return [], f"{self.path} is not a list of messages; it is left as it is"
        return [t for t in data if t.strip()], None

    def take(self) -> tuple[list[str], str | None]:
        """:meth:`read`, then the file is removed (the caller holds the messages now)."""
        texts, problem = self.read()
        if problem is None:
            try:
                os.unlink(self.path)
            except OSError:
                pass
        return texts, problem
