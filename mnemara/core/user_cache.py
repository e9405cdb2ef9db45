"""Mnemara's folder in the user's cache (``$XDG_CACHE_HOME/mnemara``, else ``~/.cache/mnemara``).

It holds the early start's records and the CLI launcher (:mod:`mnemara.claude.child_guard`,
:mod:`mnemara.claude.launch_inputs`, :mod:`mnemara.claude.startup_answers`): what the next start
runs is read from it, so the agent's file tools may not write it (:mod:`mnemara.guard.guarded_files`).
"""
from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """The folder (it may not exist yet)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "mnemara"
