"""Mnemara: a terminal runtime for Claude agents where the user owns the context.

Public API (imported lazily so ``import mnemara`` stays light)::

    from mnemara import AgentSession, Instance, Config, events
"""
from __future__ import annotations

import importlib
from typing import Any

__all__ = ["AgentSession", "Instance", "Config", "events", "TurnResult"]

_LAZY = {
    "AgentSession": ("mnemara.session.agent", "AgentSession"),
    "Instance": ("mnemara.core.instance", "Instance"),
    "Config": ("mnemara.core.config", "Config"),
    "TurnResult": ("mnemara.core.events", "TurnResult"),
    "events": ("mnemara.core.events", None),
}


def __getattr__(name: str) -> Any:
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'mnemara' has no attribute {name!r}")
    module = importlib.import_module(target[0])
    value = module if target[1] is None else getattr(module, target[1])
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
