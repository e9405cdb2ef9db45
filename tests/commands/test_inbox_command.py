"""/inbox: toggles delivery live, shows state, refuses bad arguments."""
from __future__ import annotations

from pathlib import Path

from mnemara.commands import dispatch
from mnemara.peer import PeerInbox
from mnemara.session.agent import AgentSession
from tests.peer_support import Recorder, add, new_db


def panel(session_factory, tmp_path: Path) -> AgentSession:
    session = session_factory("eng")
    session.peer_inbox = PeerInbox(db_path=tmp_path / "peer.db", role="eng", senders=("lead",), deliver=Recorder())
    return session


def test_toggle_and_explicit_on_off(session_factory, tmp_path: Path) -> None:
    ctx = panel(session_factory, tmp_path)
    res = dispatch(ctx, "/inbox")
    assert res.ok and res.payload.enabled is False and res.text.startswith("⚡ Inbox: OFF")
    assert dispatch(ctx, "/inbox").payload.enabled is True
    assert dispatch(ctx, "/inbox off").payload.enabled is False
    assert dispatch(ctx, "/inbox OFF").payload.enabled is False
    assert dispatch(ctx, "/inbox on").payload.state_text == "⚡ Inbox: ON"


async def test_status_shows_role_file_and_problems(session_factory, tmp_path: Path) -> None:
    ctx = panel(session_factory, tmp_path)
    await ctx.peer_inbox.step()
    res = dispatch(ctx, "/inbox status")
    assert res.payload.enabled is True
    assert "role: eng" in res.text and str(tmp_path / "peer.db") in res.text
    assert "problem (missing)" in res.text and "peer db missing" in res.payload.state_text
    new_db(tmp_path / "peer.db")
    add(tmp_path / "peer.db", "lead", "eng", {"n": 1})
    await ctx.peer_inbox.step()
    res = dispatch(ctx, "/inbox status")
    assert "delivered: 1 rows in 1 turns" in res.text and "problem" not in res.text


def test_bad_argument_is_refused_and_changes_nothing(session_factory, tmp_path: Path) -> None:
    ctx = panel(session_factory, tmp_path)
    res = dispatch(ctx, "/inbox maybe")
    assert not res.ok and "unknown argument 'maybe'" in res.text and "usage: /inbox" in res.text
    assert ctx.peer_inbox.enabled is True


def test_without_peer_polling_says_how_to_enable(session_factory, tmp_path: Path) -> None:
    session = session_factory("solo")
    res = dispatch(session, "/inbox")
    assert not res.ok and "peer_poll_enabled" in res.text
    res = dispatch(session, "/inbox on")
    assert not res.ok


def test_inbox_command_on_a_real_session(session_factory, tmp_path: Path) -> None:
    from mnemara.core.config import update_config
    from mnemara.peer import attach_inbox

    session = session_factory("eng")
    assert attach_inbox(session) is None
    assert not dispatch(session, "/inbox").ok  # peer poll off in config: says how to turn it on
    update_config(session.instance.config_path, peer_poll_enabled=True, peer_db_path="bus.db")
    session.reload_config()
    inbox = attach_inbox(session)
    assert inbox is not None and inbox.db_path == session.instance.root / "bus.db" and inbox.role == "eng"
    res = dispatch(session, "/inbox")
    assert res.ok and res.payload.state_text == "⚡ Inbox: OFF" and not inbox.enabled
    assert dispatch(session, "/inbox on").payload.state_text == "⚡ Inbox: ON"


def test_inbox_on_off_is_saved_and_the_next_panel_starts_that_way(session_factory) -> None:
    from mnemara.core.config import Config, update_config
    from mnemara.peer import attach_inbox

    session = session_factory("saved")
    update_config(session.instance.config_path, peer_poll_enabled=True, peer_db_path="bus.db")
    session.reload_config()
    assert attach_inbox(session).enabled
    assert dispatch(session, "/inbox off").payload.enabled is False
    assert Config.load(session.instance.config_path).peer_inbox_on is False
    dispatch(session, "/inbox status")
    assert Config.load(session.instance.config_path).peer_inbox_on is False
    later = session_factory("saved")  # a new panel on the same instance
    assert attach_inbox(later).enabled is False
    assert dispatch(later, "/inbox").payload.enabled is True
    assert Config.load(later.instance.config_path).peer_inbox_on is True
    assert not dispatch(later, "/inbox maybe").ok and Config.load(later.instance.config_path).peer_inbox_on is True
