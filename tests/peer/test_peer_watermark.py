"""The peer watermark persists across restarts; a first enable skips the backlog unless told not to."""
from __future__ import annotations

import json
from pathlib import Path

from mnemara.core.config import Config
from mnemara.peer.inbox import PeerInbox
from mnemara.peer.watermark import FILE_NAME
from peer_support import Recorder, add, new_db


def _inbox(root: Path, rec: Recorder, **cfg: object) -> PeerInbox:
    config = Config.from_dict({"peer_poll_enabled": True, "peer_db_path": "peer.db", "peer_role": "eng", **cfg})
    return PeerInbox.from_config(config, "eng", deliver=rec, instance_root=root, debug_log=root / "debug.log")


async def test_backlog_is_skipped_once_and_nothing_is_delivered_twice_after_a_restart(tmp_path: Path) -> None:
    path = new_db(tmp_path / "peer.db")
    old = [add(path, "lead", "eng", {"n": i}) for i in range(3)]
    rec = Recorder()
    first = _inbox(tmp_path, rec)
    await first.step()
    assert rec.turns == [] and first.watermark == old[-1]
    assert json.loads((tmp_path / FILE_NAME).read_text()) == {"db": str(path), "watermark": old[-1]}
    new = add(path, "lead", "eng", {"n": "new"})
    await first.step()
    assert rec.ids() == [new]
    again = Recorder()
    restarted = _inbox(tmp_path, again)  # a new panel on the same instance
    await restarted.step()
    assert again.turns == [] and restarted.watermark >= new
    assert "peer_backlog_skipped" in (tmp_path / "debug.log").read_text()


async def test_deliver_backlog_switch_delivers_what_was_pending(tmp_path: Path) -> None:
    path = new_db(tmp_path / "peer.db")
    old = [add(path, "lead", "eng", {"n": i}) for i in range(2)]
    rec = Recorder()
    await _inbox(tmp_path, rec, peer_deliver_backlog=True).step()
    assert rec.ids() == old


async def test_a_watermark_for_another_database_or_an_unreadable_one_is_not_used(tmp_path: Path) -> None:
    path = new_db(tmp_path / "peer.db")
    (tmp_path / FILE_NAME).write_text(json.dumps({"db": "/elsewhere/other.db", "watermark": 10_000}))
    row = add(path, "lead", "eng", {"n": 1})
    rec = Recorder()
    await _inbox(tmp_path, rec, peer_deliver_backlog=True).step()
    assert rec.ids() == [row]  # the other database's high number did not hide this row
    (tmp_path / FILE_NAME).write_text("not json")
    rec2 = Recorder()
    inbox = _inbox(tmp_path, rec2)
    await inbox.step()
    assert rec2.turns == [] and json.loads((tmp_path / FILE_NAME).read_text())["watermark"] == row
