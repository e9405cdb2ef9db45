"""Peer polling: panels that coordinate through a shared SQLite ``returns`` table.

- :mod:`mnemara.peer.db`       read-only poll query and the short silent-ack write
- :mod:`mnemara.peer.rows`     one row, its payload and message type
- :mod:`mnemara.peer.message`  the text of an injected inbox turn
- :mod:`mnemara.peer.inbox`    :class:`PeerInbox`, the async runner beside a session
"""
from __future__ import annotations

from mnemara.peer.db import Filter, PeerDbError, ack_rows, read_pending
from mnemara.peer.inbox import InboxStats, PeerInbox, resolve_db_path, resolve_role
from mnemara.peer.message import format_turn
from mnemara.peer.rows import PeerRow

__all__ = [
    "Filter", "InboxStats", "PeerDbError", "PeerInbox", "PeerRow", "ack_rows", "format_turn",
    "read_pending", "resolve_db_path", "resolve_role",
]
