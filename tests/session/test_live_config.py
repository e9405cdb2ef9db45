"""One live config: ``session.update_config`` validates, saves atomically and every holder sees it."""
from __future__ import annotations

import pytest

from mnemara.commands import dispatch
from mnemara.core.config import Config
from mnemara.core.errors import ConfigError


def test_recall_on_then_recall_says_on(session_factory) -> None:
    session = session_factory("recall")
    assert "auto-recall is OFF" in dispatch(session, "/recall").text
    assert dispatch(session, "/recall on").text.startswith("auto-recall is ON")
    shown = dispatch(session, "/recall").text
    assert shown.startswith("auto-recall is ON;"), shown
    assert dispatch(session, "/recall off").ok and dispatch(session, "/recall").text.startswith("auto-recall is OFF")


def test_after_swap_the_permission_gate_holds_the_new_config(session_factory) -> None:
    session = session_factory("swap")
    before = session.gate.config
    assert dispatch(session, "/swap haiku").ok
    assert session.config.model == "claude-haiku-4-5"
    assert session.gate.config is session.config and session.gate.config is not before
    assert session.tool_context.config is session.config
    assert Config.load(session.instance.config_path).model == "claude-haiku-4-5"


def test_every_command_that_changes_config_reaches_every_holder(session_factory, tmp_path) -> None:
    session = session_factory("holders")
    seen: list[Config] = []
    session.config_listeners.append(seen.append)
    role = tmp_path / "role.md"
    role.write_text("You are terse.\n", encoding="utf-8")
    for line in ("/tokens 500k", "/name Mimir", f"/role {role}", "/recall on", "/swap sonnet"):
        assert dispatch(session, line).ok, line
        assert seen[-1] is session.config is session.gate.config is session.tool_context.config, line
    assert (session.config.max_window_tokens, session.config.display_name, session.config.role_doc_path,
            session.config.auto_recall, session.config.model) == (500_000, "Mimir", str(role), True, "claude-sonnet-4-6")
    assert Config.load(session.instance.config_path) == session.config


def test_a_refused_change_saves_nothing_and_changes_no_holder(session_factory) -> None:
    session = session_factory("refused")
    path = session.instance.config_path
    before_text, before = path.read_bytes(), session.config
    with pytest.raises(ConfigError):
        session.update_config(max_window_tokens="lots")
    assert path.read_bytes() == before_text and session.config is before and session.gate.config is before
    res = dispatch(session, "/tokens -5")
    assert not res.ok and path.read_bytes() == before_text


def test_window_follows_the_live_config(session_factory) -> None:
    session = session_factory("window")
    for i in range(6):
        session.store.append("user" if i % 2 == 0 else "assistant", f"message {i}")
    assert len(session.window().rows) == 6
    session.update_config(max_window_turns=2, row_cap_slack_when_token_headroom=0, window_trim_to=1)
    assert [t.blocks for t in session.window().rows] == [t.blocks for t in session.store.window_for(session.config).rows]
    assert len(session.window().rows) == 2


def test_the_peer_inbox_follows_the_live_config(session_factory, tmp_path) -> None:
    from mnemara.peer import attach_inbox

    session = session_factory("eng")
    session.update_config(peer_poll_enabled=True, peer_db_path="bus.db", peer_poll_interval_seconds=30)
    inbox = attach_inbox(session)
    assert inbox is not None and session.peer_inbox is inbox and inbox.interval == 30
    session.update_config(peer_poll_interval_seconds=5, peer_poll_roles=["lead"], peer_db_path=str(tmp_path / "b.db"))
    assert inbox.interval == 5 and inbox.filter.senders == ("lead",) and inbox.db_path == tmp_path / "b.db"
