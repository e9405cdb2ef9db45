"""What ``migrate`` refuses to take over: links, special files and over-size files in an instance folder.

A 0.18-style folder may carry ``memory/<today>.md -> ~/.bashrc``; after a migration the first
note would be appended there. The writers refuse links themselves (:mod:`mnemara.core.fsutil`),
but a migration should not adopt a folder that holds one: it stops before touching anything and
names every entry, so the user can look at each.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path

#: Above this a file is refused (a 0.18 turns.sqlite of years of chat stays well below it).
MAX_FILE_BYTES = 1024 * 1024 * 1024
#: Folders whose content is not checked: earlier migration backups and staging.
SKIPPED_PREFIXES = ("pre-migrate-", ".migrate-staging")


def describe(path: Path, st: os.stat_result, max_bytes: int) -> str | None:
    """Why the entry ``path`` (with its ``lstat``) is refused, or None when it is an ordinary file or folder."""
    if stat.S_ISLNK(st.st_mode):
        try:
            target = os.readlink(path)
        except OSError:
            target = "?"
        return f"a symbolic link (to {target})"
    if stat.S_ISDIR(st.st_mode):
        return None
    if not stat.S_ISREG(st.st_mode):
        return "a special file (pipe, socket or device)"
    if st.st_size > max_bytes:
        cap = f"{max_bytes // (1024 * 1024)} MB" if max_bytes >= 1024 * 1024 else f"{max_bytes} bytes"
        return f"{st.st_size} bytes, over the {cap} cap"
    return None


def refused_entries(root: Path, max_bytes: int | None = None) -> list[str]:
    """``<relative path>: <why>`` for every link, special file or over-size file under ``root``
    (``max_bytes``: :data:`MAX_FILE_BYTES` unless given)."""
    root = Path(root)
    max_bytes = MAX_FILE_BYTES if max_bytes is None else max_bytes
    out: list[str] = []
    for folder, dirs, files in os.walk(root, followlinks=False):
        if Path(folder) == root:
            dirs[:] = [d for d in dirs if not d.startswith(SKIPPED_PREFIXES)]
        for name in sorted([*dirs, *files]):
            path = Path(folder) / name
            try:
                why = describe(path, os.lstat(path), max_bytes)
            except OSError as exc:
                why = f"cannot be checked ({exc.strerror or exc})"
            if why is not None:
                out.append(f"{path.relative_to(root)}: {why}")
    return sorted(out)
