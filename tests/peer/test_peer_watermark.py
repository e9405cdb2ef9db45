"""The peer watermark persists across restarts; a first enable delivers what is addressed to the panel and skips
old broadcasts (saying how many) unless told not to."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

from mnemara.core.config import Config
from mnemara.peer.inbox import PeerInbox
from mnemara.peer.watermark import FILE_NAME
from peer_support import Recorder, add, new_db


def _inbox(root: Path, rec: Recorder, on_notice: Callable[[str], object] | None = None, **cfg: object) -> PeerInbox:
    config = Config.from_dict({"peer_poll_enabled": True, "peer_db_path": "peer.db", "peer_role": "eng", **cfg})
    return PeerInbox.from_config(config, "eng", deliver=rec, instance_root=root, debug_log=root / "debug.log",
                                 on_notice=on_notice)


async def test_first_enable_delivers_rows_addressed_to_us_skips_old_broadcasts_and_says_how_many(tmp_path: Path) -> None:
    """Issue 29: a row written to this panel before its inbox was configured is delivered on the first enable."""
    path = new_db(tmp_path / "peer.db")
    to_us = add(path, "lead", "eng", {"n": 1})
    old_broadcasts = [add(path, "lead", None, {"all": i}) for i in range(2)]
    other = add(path, "lead", "writer", {"not": "ours"})
    rec, notices = Recorder(), []
    first = _inbox(tmp_path, rec, peer_poll_roles=["lead"], on_notice=notices.append)
    await first.step()
    assert rec.ids() == [to_us] and first.watermark == other
    assert len(notices) == 1 and "2 broadcast(s) already pending were skipped" in notices[0]
    assert notices[0] in first.describe()
    assert json.loads((tmp_path / FILE_NAME).read_text()) == {"db": str(path), "watermark": other,
                                                              "broadcasts_after": other}
    new = [add(path, "lead", None, {"all": "new"}), add(path, "lead", "eng", {"n": "new"})]
    await first.step()
    assert rec.ids() == [to_us, *new]
    again, later = Recorder(), []
    restarted = _inbox(tmp_path, again, peer_poll_roles=["lead"], on_notice=later.append)  # same instance
    await restarted.step()
    assert again.turns == [] and later == [] and restarted.watermark >= new[-1]
    assert "peer_backlog_skipped" in (tmp_path / "debug.log").read_text()
    assert old_broadcasts[0] < other


async def test_the_first_enable_cut_off_holds_when_the_panel_stops_before_delivering(tmp_path: Path) -> None:
    path = new_db(tmp_path / "peer.db")
    add(path, "lead", None, {"old": 1})
    to_us = add(path, "lead", "eng", {"n": 1})
    off = _inbox(tmp_path, Recorder(), peer_poll_roles=["lead"], peer_inbox_on=False)
    await off.step()  # delivery OFF: nothing delivered, the watermark stays before our row
    rec = Recorder()
    await _inbox(tmp_path, rec, peer_poll_roles=["lead"]).step()
    assert rec.ids() == [to_us]  # the old broadcast stays skipped after the restart


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
    assert rec2.ids() == [row]  # a first enable again: the row to us is still pending (nobody acked it)
    assert json.loads((tmp_path / FILE_NAME).read_text())["watermark"] == row
