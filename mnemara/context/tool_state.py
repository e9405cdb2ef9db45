"""What one session's tools and turn parts share (the file-stat manifest, memory backends, the
running turn's row), kept apart from the tool catalogue so the domain can hold one without importing
the tools built on it."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mnemara.context.manifest import FileTracker
    from mnemara.memory.surfaces import MemoryBackends


@dataclass
class ToolState:
    """What one session's tools and turn parts share, each piece created on first use.

    ``file_tracker``: the files the agent Read this session (the file-stat manifest).
    ``memory_backends``: the session's RAG index and graph handles, set by
    :func:`mnemara.memory.surfaces.backends_for`, which needs the instance and config.
    """

    memory_backends: "MemoryBackends | None" = None
    peer_inbox: Any = None  # the session's PeerInbox, when one is attached (the built-in peer tools)
    turn_row: int | None = None  # row id of the running turn's user message (provenance of agent notes)
    #: tokens of earlier turns' slots and per-turn blocks that the running turn's continued CLI conversation
    #: still sends (0 when the turn was rebuilt): inspect_context counts them, as the context viewer does
    carried_tokens: int = 0
    _calls: dict[tuple[str, str], list[str]] = field(default_factory=dict, repr=False)
    _file_tracker: "FileTracker | None" = field(default=None, repr=False)

    def note_call(self, tool_name: str, tool_input: object, tool_use_id: str | None) -> None:
        """Remember a tool call's id as the CLI announces it, for the handler to name (:meth:`take_call`)."""
        if tool_use_id and isinstance(tool_input, dict):
            key = (tool_name.rsplit("__", 1)[-1], str(tool_input.get("text", "")))
            self._calls.setdefault(key, []).append(tool_use_id)

    def take_call(self, tool: str, text: str) -> str | None:
        """The id of the oldest announced call of ``tool`` with this ``text`` argument, or None."""
        waiting = self._calls.get((tool, text))
        return waiting.pop(0) if waiting else None

    def close(self) -> None:
        """Release what the tools hold open (the graph file), so the next opener finds it closed cleanly."""
        if self.memory_backends is not None:
            self.memory_backends.release()

    @property
    def file_tracker(self) -> "FileTracker":
        if self._file_tracker is None:
            from mnemara.context.manifest import FileTracker

            self._file_tracker = FileTracker()
        return self._file_tracker
