"""Folders besides ``$HOME`` that file tools may use: ``file_tool_roots`` in config.json.

With ``file_tool_home_only`` on, a file tool's path must resolve (``~``, ``..`` and symlinks
resolved) under ``$HOME`` or under one of these folders, resolved the same way: a link inside a
root that points outside every root is outside. A root is added with ``/add-dir PATH`` (asked,
then saved) or for one session with ``mnemara run --dir PATH``.

:func:`check_root` says in one line why a folder cannot be a root: it must be given as an
absolute path, exist, be a folder, and be none of ``/``, a system tree (``/proc``, ``/sys``,
``/dev``, ``/run``, ``/etc``, ``/boot``), a folder holding ``$HOME`` or Mnemara's instances, or
a folder inside Mnemara's instances.
"""
from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field

#: Trees no root may be in (or be): pseudo file systems, runtime state, system configuration.
SYSTEM_TREES = ("/proc", "/sys", "/dev", "/run", "/etc", "/boot")


def under(path: str, folder: str) -> bool:
    """``path`` is ``folder`` or inside it (both resolved)."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def real_homes() -> tuple[str, str]:
    """``$HOME`` and Mnemara's instances folder (``$MNEMARA_HOME``), symlinks resolved."""
    from mnemara.store.instance import mnemara_home

    return os.path.realpath(os.path.expanduser("~")), os.path.realpath(mnemara_home())


def check_root(path: object, home: str, mnemara_home: str) -> str:
    """The resolved folder ``path`` names; raises ValueError (one line) when it cannot be a root.

    ``home`` and ``mnemara_home`` are resolved (``$HOME`` and ``$MNEMARA_HOME``).
    """
    if not isinstance(path, str) or not path.strip():
        raise ValueError("a folder path is needed")
    if "\x00" in path:
        raise ValueError("a folder path cannot hold a NUL character")
    expanded = os.path.expanduser(path)
    if not os.path.isabs(expanded):
        raise ValueError(f"{path!r} is relative: give the folder's absolute path (e.g. /srv/project)")
    resolved = os.path.realpath(expanded)
    via = f" ({path} resolves to {resolved})" if os.path.normpath(expanded) != resolved else ""
    if not os.path.exists(resolved):
        raise ValueError(f"{path!r} does not exist{via}")
    if not os.path.isdir(resolved):
        raise ValueError(f"{path!r} is not a folder{via}")
    if resolved == os.sep:
        raise ValueError(f"{path!r} is the whole file system{via}: add the project folder itself")
    for tree in SYSTEM_TREES:
        if under(resolved, tree):
            raise ValueError(f"{path!r} is in {tree}, a system folder{via}; file tools never use it")
    if under(home, resolved):
        raise ValueError(f"{path!r} holds $HOME and more{via}: add the project folder itself")
    if under(mnemara_home, resolved) or under(resolved, mnemara_home):
        raise ValueError(f"{path!r} holds or is inside Mnemara's instances ({mnemara_home}){via}")
    return resolved


@dataclass
class FileRoots:
    """The usable roots of a config (resolved when the config was adopted) and one problem line
    per entry that is not used."""

    roots: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @classmethod
    def from_entries(cls, entries: Iterable[object], home: str, mnemara_home: str,
                     source: str = "file_tool_roots") -> FileRoots:
        found = cls()
        for index, entry in enumerate(entries):
            try:
                resolved = check_root(entry, home, mnemara_home)
            except ValueError as exc:
                found.problems.append(f"{source}[{index}]: {exc}; it is not used")
                continue
            if resolved not in found.roots:
                found.roots.append(resolved)
        return found

    def holding(self, resolved: str) -> str | None:
        """The root ``resolved`` (a path with symlinks resolved) is inside, if any."""
        return next((root for root in self.roots if under(resolved, root)), None)
