"""The live config of one session (or one tool context): config.json with temporary overrides on top.

It changes three ways: :meth:`LiveConfig.update` (validated, saved atomically,
then live; nothing is saved when a value is refused), :meth:`LiveConfig.override`
(this session only, validated, never saved: ``/swap --temp``, ``/tokens --temp``)
and :meth:`LiveConfig.reload` (hand edits, at the start of every turn). Each
ends by making the new :class:`~mnemara.core.config.Config` object
:attr:`LiveConfig.current`, which every holder reads when it needs it (the
session, its tools, CLI launcher and warm start: none keeps a copy), then
handing it to those that must act on a change (the permission gate rebuilds its
policy index, the request recorder, the parts, listeners).
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from mnemara.core.config import Config, update_config


class LiveConfig:
    """Loads, changes and hands out one session's config (a :class:`~mnemara.core.config.ConfigSource`)."""

    def __init__(self, path: Path, hand_out: Callable[[Config], None] | None = None, *,
                 current: Config | None = None) -> None:
        self.path = path
        #: the one live config (config.json unless ``current`` is given); every change replaces it
        self.current = Config.load(path) if current is None else current
        self.overrides: dict[str, Any] = {}  # this session only, on top of config.json
        self._hand_out = hand_out

    def reload(self) -> Config:
        """Re-read config.json, put the overrides on top and hand the result out."""
        cfg = Config.load(self.path)
        if self.overrides:
            cfg = Config.from_dict({**cfg.to_dict(), **self.overrides}, source="session override")
        return self.adopt(cfg)

    def adopt(self, config: Config) -> Config:
        """Make ``config`` (already validated, and saved when it should be) the live config and hand it out."""
        self.current = config
        if self._hand_out is not None:
            self._hand_out(config)
        return config

    def update(self, **changes: Any) -> Config:
        """Save ``changes`` to config.json (an override of the same field ends) and reload."""
        for key in changes:
            self.overrides.pop(key, None)
        update_config(self.path, **changes)
        return self.reload()

    def override(self, **changes: Any) -> Config:
        """Put ``changes`` on top of config.json for this session only (checked against :attr:`current`)."""
        Config.from_dict({**self.current.to_dict(), **changes}, source="session override")
        self.overrides.update(changes)
        return self.reload()
