"""The files a file tool (Write, Edit, ...) may change only when the user is asked, whatever the policy.

An allowed Write must not let the agent grant itself more or put words in the user's mouth, so these
are always asked:

* the files that grant tools: ``config.json`` and ``permissions.json`` (:data:`CONTROL_FILES`);
* the files Mnemara takes as what was said and typed: the conversation, the rows and messages waiting
  to be stored or sent, the prompt history (:data:`RECORD_FILES`; a "user" row written into the spool
  is stored as the user's next turn);
* the role doc the instance pins as its system prompt (the agent proposes changes with
  ``propose_role_amendment`` instead);
* everything in Mnemara's cache folder (:func:`~mnemara.core.user_cache.cache_dir`): the next start
  reads what it launches there (the early-launch record, the CLI's start-up answers, the launcher).

A file counts by real path, by name in any instance folder next to this one (a sibling's policies or
conversation are no less the user's), and by identity (a hard link, or other letter case on a
case-insensitive disk).
"""
from __future__ import annotations

import os
from pathlib import Path

from mnemara.core.user_cache import cache_dir
from mnemara.store.instance import Instance

CONTROL_FILES = ("config.json", "permissions.json")
RECORD_FILES = ("turns.sqlite", "turns.sqlite-wal", "turns.sqlite-shm", "turns.sqlite-journal", "spool.jsonl",
                "unsent.json", ".prompt_history")


class GuardedFiles:
    """The guarded files of one instance; :meth:`what` says what a resolved path is among them."""

    def __init__(self, instance: Instance) -> None:
        self._instances_root = os.path.realpath(instance.root.parent)
        self._fixed = {os.path.realpath(p): "this instance's own permissions or config"
                       for p in (instance.config_path, instance.permissions_path)}
        for name in RECORD_FILES:
            self._fixed[os.path.realpath(instance.root / name)] = f"this instance's own conversation record ({name})"
        self._own = dict(self._fixed)
        self._cache = os.path.realpath(cache_dir())  # the start-up records' folder, resolved once

    def set_role_doc(self, role_doc_path: str) -> None:
        """Guard the role doc the config names now (the config can change while a session runs)."""
        self._own = dict(self._fixed)
        role = (role_doc_path or "").strip()
        if role:
            self._own[os.path.realpath(os.path.expanduser(role))] = "the role doc (the system prompt of every turn)"

    def what(self, resolved: str) -> str:
        """What ``resolved`` (a real path) is, e.g. "this instance's own permissions or config", or ""."""
        if resolved in self._own:
            return self._own[resolved]
        if resolved == self._cache or resolved.startswith(self._cache.rstrip(os.sep) + os.sep):
            return "Mnemara's start-up records (the cache folder the next start launches from)"
        path = Path(resolved)
        if str(path.parent.parent) == self._instances_root:
            if path.name in CONTROL_FILES:
                return "another instance's permissions or config"
            if path.name in RECORD_FILES:
                return f"another instance's conversation record ({path.name})"
        try:
            target = os.stat(resolved)
        except (OSError, ValueError):
            return ""
        for guarded, what in self._own.items():
            try:
                if os.path.samestat(target, os.stat(guarded)):
                    return what
            except OSError:
                continue
        return ""
