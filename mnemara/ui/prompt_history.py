"""The instance's ``.prompt_history``, read and written by the panel in the REPL's own format.

The REPL keeps it through prompt-toolkit's ``FileHistory``: each entry is a line
``# <time>`` followed by the entry's lines, each prefixed with ``+``. The panel
reads and appends the same file without importing prompt-toolkit (a quarter of a
second at start-up), so Up in either one recalls what was sent in the other.

Never through a link (as the REPL, which then keeps its history in memory): a planted
``.prompt_history -> ~/.bashrc`` would get every message appended. Such a file is
neither read nor written; the history of this panel is kept in memory and the
panel says so once (:attr:`PromptHistory.problem`).
"""
from __future__ import annotations

import datetime
import os
from pathlib import Path

from mnemara.core.fsutil import LinkRefused, check_no_links, open_nofollow

MAX_ENTRIES = 5000  # newest entries kept in memory for recall and search
#: The most of one entry the file keeps (a 5 MB paste is cut here, with a note saying so).
MAX_ENTRY_BYTES = 64 * 1024


def kept_entry(text: str) -> str:
    """``text`` as ``.prompt_history`` keeps it: whole up to :data:`MAX_ENTRY_BYTES` (UTF-8), else its
    start, cut on a character boundary, and a last line saying how long it was."""
    data = text.encode("utf-8", errors="replace")
    if len(data) <= MAX_ENTRY_BYTES:
        return text
    note = f"\n[cut: this entry was {len(data)} bytes; .prompt_history keeps the first {MAX_ENTRY_BYTES}]"
    room = MAX_ENTRY_BYTES - len(note.encode("utf-8"))
    return data[:room].decode("utf-8", errors="ignore") + note


def append_entry(path: Path, text: str) -> None:
    """Append ``text`` to the history file at ``path`` in prompt-toolkit's format (cut by
    :func:`kept_entry`), never through a link; raises OSError (:class:`LinkRefused` for a link)."""
    body = "".join(f"+{line}\n" for line in kept_entry(text).split("\n"))
    fd = open_nofollow(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        os.write(fd, f"\n# {datetime.datetime.now()}\n{body}".encode("utf-8", errors="replace"))
    finally:
        os.close(fd)


class PromptHistory:
    """Entries oldest first; read once, on first use; :meth:`add` appends to the file too."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._entries: list[str] | None = None
        self.problem: str | None = None  # why the file could not be read or written (the UI says it, once)
        self._memory_only = False  # the file is refused (a link) or failed: entries live in memory only

    @property
    def entries(self) -> list[str]:
        if self._entries is None:
            self._entries = self._load()
        return self._entries

    def is_empty(self) -> bool:
        """No earlier message (a first run): answered from the file's size, without reading it."""
        if self._entries is not None:
            return not self._entries
        try:
            check_no_links(self.path)
            return os.stat(self.path).st_size == 0
        except FileNotFoundError:
            return True
        except OSError as exc:
            self._refuse("read", exc)
            self._entries = []
            return True

    def _load(self) -> list[str]:
        entries: list[str] = []
        lines: list[str] = []
        try:
            check_no_links(self.path)
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
            self._refuse("read", exc)
            return []
        if lines:
            entries.append("".join(lines)[:-1])
        return entries[-MAX_ENTRIES:]

    def add(self, text: str) -> None:
        """Remember ``text`` (sent or run) here and in the file, as the REPL does."""
        if not text.strip():
            return
        self.entries.append(text)
        if self._memory_only:
            return
        try:
            append_entry(self.path, text)
        except OSError as exc:
            self._refuse("write", exc)

    def _refuse(self, doing: str, exc: OSError) -> None:
        self._memory_only = True
        why = exc.strerror if isinstance(exc, LinkRefused) else f"cannot {doing} {self.path}: {exc.strerror or exc}"
        self.problem = f"{why}; the message history (↑, Ctrl+R) is kept in memory only"

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
