"""The instance's ``.prompt_history``, read and written by the panel in the REPL's own format.

The REPL keeps it through prompt-toolkit's ``FileHistory``: each entry is a line
``# <time>`` followed by the entry's lines, each prefixed with ``+``. The panel
reads and appends the same file without importing prompt-toolkit (a quarter of a
second at start-up), so Up in either one recalls what was sent in the other.
"""
from __future__ import annotations

import datetime
from pathlib import Path

MAX_ENTRIES = 5000  # newest entries kept in memory for recall and search


class PromptHistory:
    """Entries oldest first; read once, on first use; :meth:`add` appends to the file too."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._entries: list[str] | None = None
        self.problem: str | None = None  # why the file could not be read or written (said once by the UI)

    @property
    def entries(self) -> list[str]:
        if self._entries is None:
            self._entries = self._load()
        return self._entries

    def _load(self) -> list[str]:
        entries: list[str] = []
        lines: list[str] = []
        try:
            with open(self.path, "rb") as handle:
                for raw in handle:
                    line = raw.decode("utf-8", errors="replace")
                    if line.startswith("+"):
                        lines.append(line[1:])
                    elif lines:
                        entries.append("".join(lines)[:-1])
                        lines = []
        except FileNotFoundError:
            return []
        except OSError as exc:
            self.problem = f"cannot read {self.path}: {exc.strerror or exc}"
            return []
        if lines:
            entries.append("".join(lines)[:-1])
        return entries[-MAX_ENTRIES:]

    def add(self, text: str) -> None:
        """Remember ``text`` (sent or run) here and in the file, as the REPL does."""
        if not text.strip():
            return
        self.entries.append(text)
        try:
            with open(self.path, "ab") as handle:
                body = "".join(f"+{line}\n" for line in text.split("\n"))
                handle.write(f"\n# {datetime.datetime.now()}\n{body}".encode("utf-8", errors="replace"))
        except OSError as exc:
            self.problem = f"cannot write {self.path}: {exc.strerror or exc}"

    def search(self, needle: str) -> list[str]:
        """Distinct entries containing ``needle`` (any case), newest first."""
        low = needle.lower()
        seen: set[str] = set()
        found = []
        for entry in reversed(self.entries):
            if low in entry.lower() and entry not in seen:
                seen.add(entry)
                found.append(entry)
        return found
