"""The file-stat manifest: which files the agent Read this session, and are they still what it saw.

A :class:`FileTracker` lives in the session's tool state
(:attr:`mnemara.context.tool_state.ToolState.file_tracker`). After each turn it
notes every ``Read`` (and refreshes files the agent itself wrote with
Edit/Write/MultiEdit/NotebookEdit, since the agent knows that new content). When
``file_stat_manifest_enabled`` is on, :meth:`FileTracker.manifest` is appended to
the system prompt: path, size, mtime, fresh / STALE / gone against the current
disk hash, and the estimated tokens of reading the file again.
"""
from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Iterable

from mnemara.context.blocks import READ_TOOL, WRITE_TOOLS, file_path_of
from mnemara.guard.checks import process_relative_path
from mnemara.store.rows import Turn
from mnemara.core.tokens import CHARS_PER_TOKEN

HEADING = "## Files read this session"


@dataclass
class FileRecord:
    path: str
    sha256: str | None  # None: the file was already gone when recorded
    size: int
    mtime_ns: int


def _stat_hash(path: str) -> FileRecord:
    """Size, mtime and hash of a regular file; never opens a per-process path, pipe or device
    (reading ``/proc/self/fd/1`` here would block on Mnemara's own stdout)."""
    if process_relative_path(path) is not None:
        return FileRecord(path, None, 0, 0)
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            return FileRecord(path, None, 0, 0)
        digest = hashlib.sha256()
        with open(path, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
        return FileRecord(path, digest.hexdigest(), st.st_size, st.st_mtime_ns)
    except OSError:
        return FileRecord(path, None, 0, 0)


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    size = n / 1024
    if size < 1024:
        return f"{size:.1f} KB"
    return f"{size / 1024:.1f} MB"


class FileTracker:
    """Files Read this session, keyed by normalised absolute path, in first-read order."""

    def __init__(self) -> None:
        self.files: dict[str, FileRecord] = {}

    def record(self, path: str) -> None:
        full = os.path.normpath(os.path.abspath(os.path.expanduser(path)))
        self.files[full] = _stat_hash(full)

    def observe(self, turns: Iterable[Turn]) -> None:
        """Note the Reads of these turns and refresh tracked files the agent wrote.

        Only calls that ran count: a call whose result is an error or missing (refused by the
        permission gate, outside ``$HOME``, denied by the user) is skipped, or the manifest would
        tell the model the size, age and changes of a file it was not allowed to read.
        """
        for turn in turns:
            ran = {b.get("tool_use_id") for b in turn.blocks
                   if b.get("type") == "tool_result" and not b.get("is_error")}
            for block in turn.blocks:
                if block.get("type") != "tool_use" or block.get("id") not in ran:
                    continue
                path = file_path_of(block)
                if path is None:
                    continue
                name = block.get("name")
                full = os.path.normpath(os.path.abspath(os.path.expanduser(path)))
                if name == READ_TOOL or (name in WRITE_TOOLS and full in self.files):
                    self.record(full)

    def status(self, rec: FileRecord) -> tuple[str, int, int]:
        """(fresh|STALE|gone, current size, current mtime_ns)."""
        try:
            st = os.stat(rec.path)
        except OSError:
            return "gone", rec.size, rec.mtime_ns
        if rec.sha256 is None:
            return "STALE", st.st_size, st.st_mtime_ns
        if st.st_size == rec.size and st.st_mtime_ns == rec.mtime_ns:
            return "fresh", st.st_size, st.st_mtime_ns
        now = _stat_hash(rec.path)
        return ("fresh" if now.sha256 == rec.sha256 else "STALE"), st.st_size, st.st_mtime_ns

    def rows(self) -> list[dict[str, Any]]:
        out = []
        for rec in self.files.values():
            state, size, mtime_ns = self.status(rec)
            out.append({
                "path": rec.path,
                "size": size,
                "mtime": datetime.fromtimestamp(mtime_ns / 1e9, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC") if mtime_ns else "-",
                "status": state,
                "tokens": (size + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN,
            })
        return out

    def manifest(self) -> str:
        """The markdown table for the system prompt ('' when no file was Read yet)."""
        rows = self.rows()
        if not rows:
            return ""
        lines = [
            HEADING,
            "",
            "STALE: changed on disk since you last read or wrote it; Read it again before relying on it. "
            "gone: no longer on disk.",
            "",
            "| path | size | mtime | status | ~tokens |",
            "|---|---|---|---|---|",
        ]
        for r in rows:
            path = r["path"].replace("|", "\\|")
            lines.append(f"| {path} | {_size(r['size'])} | {r['mtime']} | {r['status']} | {r['tokens']} |")
        return "\n".join(lines)

