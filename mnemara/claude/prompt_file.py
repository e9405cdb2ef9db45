"""Hand the system prompt to the Claude CLI through a private file, never through argv.

A system prompt given as a string travels to the CLI as one ``--system-prompt``
argument: Linux refuses a single argument of 128 KiB or more ("Argument list too
long", so a big role doc broke every turn) and every user on the machine can read
it in ``ps``. The SDK also accepts ``{"type": "file", "path": ...}``, which becomes
``--system-prompt-file PATH``; the CLI reads that file once while it starts
(checked against the bundled CLI: the file can be deleted as soon as
``connect()`` has returned). So the text goes to a 0600 temp file that lives
only from spawn until the CLI is connected. No size limit of our own remains;
the model's context window is the only cap, and the API reports it.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import asyncio  # a type only: importing it (about 18 ms) would delay the early CLI's spawn

    from claude_agent_sdk.types import SystemPromptFile


class PromptFile:
    """One system prompt written to a private temp file; :meth:`remove` is idempotent."""

    def __init__(self, text: str) -> None:
        fd, name = tempfile.mkstemp(prefix="mnemara-system-", suffix=".md")  # mode 0600 by construction
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(text.encode("utf-8"))
        except BaseException:
            os.unlink(name)
            raise
        self.path = Path(name)

    def sdk_value(self) -> SystemPromptFile:
        """The value for ``ClaudeAgentOptions.system_prompt``."""
        return {"type": "file", "path": str(self.path)}

    def remove(self) -> None:
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass

    def remove_after(self, _task: asyncio.Future[None]) -> None:
        """Done-callback for the task that connects the CLI (it has read the file by then)."""
        self.remove()

