"""Where this panel is on the peer bus, from its config: its role and the peer database's path.

Read alike by the inbox (:mod:`mnemara.peer.inbox`), the outbox (:mod:`mnemara.peer.outbox`) and
``migrate`` (:mod:`mnemara.legacy.migrate`).
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mnemara.core.config import Config


def resolve_role(config: "Config", instance_name: str) -> str:
    """This panel's role: ``peer_role``, or the instance name when that is empty."""
    return (config.peer_role or "").strip() or instance_name


def resolve_db_path(raw: str, base: Path | None = None) -> Path | None:
    """``peer_db_path`` with ``~`` expanded; a relative path is taken from ``base`` (the instance folder).

    None when the setting is empty (the inbox then reports "no peer_db_path").
    """
    if not raw.strip():
        return None
    path = Path(raw.strip()).expanduser()
    if not path.is_absolute() and base is not None:
        path = Path(base) / path
    return path
