"""Carry a role-doc edit into the API calls of a turn that is already running.

The Claude Code CLI fixes its system prompt when the process starts, so inside
one turn's tool loop (several API calls) a new system prompt cannot be sent.
Instead a PostToolUse hook asks :class:`RoleDocWatch` after every tool call
whether the file changed since the turn began; when it did, the new text goes
to the model as additional context with the tool result, and the next turn
sends it as the system prompt proper.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from claude_agent_sdk.types import SyncHookJSONOutput

from mnemara.core.roledoc import read_role_doc


class RoleDocWatch:
    """Remembers the role doc text a turn started with and spots later edits."""

    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.text = text
        self._stamp = _stamp(path)

    def changed_text(self) -> str | None:
        """The role doc's new text if it was edited since the last check, else None."""
        if not self.path:
            return None
        stamp = _stamp(self.path)
        if stamp == self._stamp:
            return None
        self._stamp = stamp
        role = read_role_doc(self.path)
        if role.warning or role.text == self.text:
            return None
        self.text = role.text
        return role.text


def _stamp(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(Path(path).expanduser())
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


def refresh_output(text: str) -> SyncHookJSONOutput:
    """PostToolUse hook output that hands the edited role doc to the model."""
    notice = (
        "<role_doc_updated>\nThe user edited the role doc (your system prompt) during this turn. "
        "From now on follow this text instead of the earlier version:\n"
        f"{text}\n</role_doc_updated>"
    )
    return {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": notice}}
