"""Mnemara: a terminal runtime for Claude agents where the user owns the context.

The public API, for embedding a session in your own Python::

    from mnemara import AgentSession, Instance, Config, events

Everything named in ``__all__`` is public and kept stable; the subpackages (``mnemara.core``,
``mnemara.session``, ``mnemara.claude``, ...) are internals that may change between releases.
Names are imported on first use, so ``import mnemara`` stays light; type checkers see them through
the ``TYPE_CHECKING`` imports below.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mnemara.core import events
    from mnemara.core.config import Config, update_config
    from mnemara.core.errors import (
        BackendUnavailable,
        ConfigError,
        InstanceBusy,
        InstanceExists,
        InstanceNotFound,
        MnemaraError,
        StoreError,
        StoreUnavailable,
        UsageError,
    )
    from mnemara.core.events import (
        AssistantText,
        ErrorEvent,
        Event,
        Halt,
        Notice,
        TextDelta,
        ThinkingBlock,
        ToolResult,
        ToolUse,
        TurnDone,
        TurnResult,
    )
    from mnemara.store.instance import Instance
    from mnemara.session.agent import AgentSession

    __version__: str

__all__ = [
    "AgentSession", "Instance", "Config", "update_config", "events", "__version__",
    "Event", "TextDelta", "AssistantText", "ThinkingBlock", "ToolUse", "ToolResult", "Halt", "ErrorEvent",
    "Notice", "TurnDone", "TurnResult",
    "MnemaraError", "UsageError", "InstanceNotFound", "InstanceExists", "InstanceBusy", "ConfigError",
    "StoreError", "StoreUnavailable", "BackendUnavailable",
]

_EVENTS = ("Event", "TextDelta", "AssistantText", "ThinkingBlock", "ToolUse", "ToolResult", "Halt", "ErrorEvent",
           "Notice", "TurnDone", "TurnResult")
_ERRORS = ("MnemaraError", "UsageError", "InstanceNotFound", "InstanceExists", "InstanceBusy", "ConfigError",
           "StoreError", "StoreUnavailable", "BackendUnavailable")
_LAZY: dict[str, tuple[str, str | None]] = {
    "AgentSession": ("mnemara.session.agent", "AgentSession"),
    "Instance": ("mnemara.store.instance", "Instance"),
    "Config": ("mnemara.core.config", "Config"),
    "update_config": ("mnemara.core.config", "update_config"),
    "events": ("mnemara.core.events", None),
    **{name: ("mnemara.core.events", name) for name in _EVENTS},
    **{name: ("mnemara.core.errors", name) for name in _ERRORS},
}


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("mnemara")
    except PackageNotFoundError:  # a source tree that was never installed
        return "0+unknown"


def __getattr__(name: str) -> Any:
    if name == "__version__":
        value: Any = _version()
    else:
        target = _LAZY.get(name)
        if target is None:
            raise AttributeError(f"module 'mnemara' has no attribute {name!r}")
        module = importlib.import_module(target[0])
        value = module if target[1] is None else getattr(module, target[1])
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
