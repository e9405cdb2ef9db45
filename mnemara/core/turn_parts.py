"""How a domain part takes part in every turn of a session, declared once.

A part (the context discipline, auto-recall, the peer inbox, ...) subclasses
:class:`TurnPart` and overrides the moments it cares about; the session calls
every part it holds, in the order they were added, and a part that raises is
logged to debug.log and skipped (it never fails the turn). The runtime sentinel
and the permission gate are not parts: they decide every tool call, in that
order, in :mod:`mnemara.claude.options`.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from mnemara.core.debuglog import LogTarget, log_event

if TYPE_CHECKING:
    from mnemara.core.config import Config
    from mnemara.store.instance import Instance
    from mnemara.store.turns import TurnStore
    from mnemara.tools import ToolContext


class TurnHost(Protocol):
    """What a part may use of the session running the turn."""

    instance: Instance
    store: TurnStore
    tool_context: ToolContext

    @property
    def config(self) -> Config: ...  # the live config, read when needed


class TurnPart:
    """Base class of a part of every turn; each hook does nothing unless overridden."""

    # (the hooks below take the narrow TurnHost, not the session: a part sees only what it may use)

    name = "part"

    def system_prompt_extra(self, host: TurnHost) -> str:
        """Text appended to the role doc in the system prompt ('' for none)."""
        return ""

    def turn_context(self, host: TurnHost, text: str) -> str:
        """An extra text block sent with this turn's message only, never stored ('' for none)."""
        return ""

    def answer_meta(self, host: TurnHost, text: str) -> dict[str, Any]:
        """Fields stored in the meta of the answer row when the turn with message ``text`` completes
        (not when it fails or is interrupted); {} for none."""
        return {}

    def after_turn(self, host: TurnHost, assistant_row_id: int) -> None:
        """Called once the turn's assistant row is stored and the window trimmed."""

    def config_changed(self, config: Config) -> None:
        """Called when the session's live config changes (``update_config``, a reload)."""


P = TypeVar("P", bound=TurnPart)


class PartHost(TurnHost, Protocol):
    """A session a part is installed on: its parts, and adding one."""

    parts: list[TurnPart]

    def add_part(self, part: P) -> P: ...


T = TypeVar("T")
R = TypeVar("R")


def call_each(log: LogTarget, moment: str, targets: Iterable[T], call: Callable[[T], R]) -> list[R]:
    """``call(target)`` for each of ``targets`` (parts or an embedder's callables), in order; one that
    raises is logged (``log``: the instance's logger) as ``<moment>_error`` with its name and skipped."""
    out = []
    for target in list(targets):
        try:
            out.append(call(target))
        except Exception as exc:
            name = target.name if isinstance(target, TurnPart) else getattr(target, "__name__", repr(target))
            log_event(log, f"{moment}_error", level="error", part=name, error=repr(exc))
    return out
