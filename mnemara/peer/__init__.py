"""Peer polling: panels that coordinate through a shared SQLite ``returns`` table.

- :mod:`mnemara.peer.db`       read-only poll query and the short silent-ack write
- :mod:`mnemara.peer.rows`     one row, its payload and message type
- :mod:`mnemara.peer.message`  the text of an injected inbox turn
- :mod:`mnemara.peer.inbox`    :class:`PeerInbox`, the async runner beside a session
"""
from __future__ import annotations

from mnemara.peer.db import Filter, PeerDbError, ack_rows, read_pending
from mnemara.peer.addressing import resolve_db_path, resolve_role
from mnemara.peer.inbox import InboxStats, PeerInbox
from mnemara.peer.message import format_turn
from mnemara.peer.rows import PeerRow
from mnemara.peer.session_link import PeerTurnFailed, attach_inbox, session_deliverer

__all__ = [
    "Filter", "InboxStats", "PeerDbError", "PeerInbox", "PeerRow", "PeerTurnFailed", "ack_rows",
    "attach_inbox", "format_turn", "session_deliverer",
    "read_pending", "resolve_db_path", "resolve_role",
]
