"""The live config of one session: config.json with this session's temporary overrides on top.

It changes three ways: :meth:`LiveConfig.update` (validated, saved atomically,
then live; nothing is saved when a value is refused), :meth:`LiveConfig.override`
(this session only, validated, never saved: ``/swap --temp``, ``/tokens --temp``)
and :meth:`LiveConfig.reload` (hand edits, at the start of every turn). Each
ends by making the new :class:`~mnemara.core.config.Config` object
:attr:`LiveConfig.current`, which the session's holders read when they need it
(the session, its CLI launcher and warm start), then handing it to those that
must act on a change (tools, permission gate, parts, listeners).
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from mnemara.core.config import Config, update_config


class LiveConfig:
    """Loads, changes and hands out one session's config (a :class:`~mnemara.core.config.ConfigSource`)."""

    def __init__(self, path: Path, hand_out: Callable[[Config], None]) -> None:
        self.path = path
        self.current = Config.load(path)  # the one live config; every change replaces it
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
