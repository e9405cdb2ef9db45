"""Peer inbox beside a real AgentSession: writer process -> SQLite -> inbox -> real CLI -> scripted API."""
from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from mnemara.core.config import update_config
from mnemara.peer import attach_inbox
from mnemara.peer.db import statuses
from mnemara.testing.scripted_api import http_error, reply
from tests.peer_support import ROW_ID, add, more_polls, new_db, problems
from tests.peer.test_peer_processes import MIX, finish, spawn_writer, wait_until

pytestmark = pytest.mark.e2e


def configure(session, db_path: Path, **extra) -> None:
    update_config(session.instance.config_path, peer_poll_enabled=True, peer_db_path=str(db_path),
                  peer_role="eng", peer_poll_roles=["lead", "qa"], peer_poll_interval_seconds=0.1,
                  peer_poll_silent_types=["heartbeat", "ack"], peer_poll_ack_tool="mcp__bus__ack",
                  peer_poll_submit_tool="mcp__bus__send", peer_deliver_backlog=True, **extra)
    session.reload_config()


def inbox_requests(api) -> list:
    return [r for r in api.message_requests() if "[peer inbox]" in r.user_text()]


async def run_turn(session, text: str) -> list:
    return [e async for e in session.aturn(text)]


async def _rows_written_during_a_user_turn_arrive_in_one_batched_turn(scripted_api, session, tmp_path) -> None:
    path = new_db(tmp_path / "peer.db")
    configure(session, path)
    shown: list[str] = []
    seen: list[str] = []
    inbox = attach_inbox(session, on_turn=lambda text: shown.append(text) or (lambda e: seen.append(type(e).__name__)))
    assert session.peer_inbox is inbox and inbox.role == "eng"
    scripted_api.push(reply("a long answer to the user, streamed slowly " * 3, delay=0.03),
                      reply("Handled rows; acked them."))
    inbox.start()
    try:
        user_turn = asyncio.create_task(run_turn(session, "what is the lease timeout?"))
        await wait_until(lambda: session.busy)
        ids = await finish(await spawn_writer(path, MIX, tmp_path / "rows.json", gap=0.01))
        bcast, to_us, other, unwatched, hb, ack, bad = ids
        await wait_until(lambda: statuses(path)[hb][0] == "done" and statuses(path)[ack][0] == "done")
        assert not user_turn.done() or inbox_requests(scripted_api) == []
        await user_turn
        await wait_until(lambda: inbox.stats.delivered_turns == 1, 60)
        await more_polls(inbox)  # more polls: nothing goes out twice
    finally:
        await inbox.aclose()
    sent = inbox_requests(scripted_api)
    assert len(sent) == 1 and len(scripted_api.message_requests()) == 2
    text = sent[0].user_text()
    assert [int(i) for i in ROW_ID.findall(text)] == [bcast, to_us, bad]
    assert "`mcp__bus__ack` (row ids: " in text and "`mcp__bus__send`" in text
    assert "broadcast from lead" in text and "addressed to us" in text and "{not json" in text
    for absent in ("for another panel", "unwatched sender", "heartbeat", '"ack"'):
        assert absent not in text
    st = statuses(path)
    for rid in (bcast, to_us, bad, other, unwatched):
        assert st[rid] == ("pending", None)
    assert st[hb][1] and st[ack][1]
    assert len(shown) == 1 and text.endswith(shown[0]) and seen[-1] == "TurnDone" and "AssistantText" in seen
    rows = session.store.history()
    assert [r.role for r in rows] == ["user", "assistant", "user", "assistant"]
    assert rows[2].text.startswith("[peer inbox] 3 new peer messages for eng")
    assert [p["problem"] for p in problems(session.instance.debug_log_path)] == [f"malformed_payload:{bad}"]


async def _failed_inbox_turn_is_delivered_again(scripted_api, session, tmp_path) -> None:
    """A new inbox on a fresh peer db (the writer process was proven above: the row is added here)."""
    path = new_db(tmp_path / "peer-retry.db")
    configure(session, path, peer_poll_batch=False)
    scripted_api.clear()
    earlier = len(problems(session.instance.debug_log_path))
    scripted_api.push(http_error(500), reply("got it"))
    inbox = attach_inbox(session)
    ids = [add(path, "qa", "eng", {"ask": "addressed to us"})]
    inbox.start()
    try:
        await wait_until(lambda: inbox.stats.delivered_turns == 1, 60)
        await more_polls(inbox)
    finally:
        await inbox.aclose()
    sent = inbox_requests(scripted_api)
    assert len(sent) == 2 and all(f"· row {ids[0]} ·" in r.user_text() for r in sent)
    assert inbox.stats.failed_turns == 1 and statuses(path)[ids[0]] == ("pending", None)
    kinds = [p["problem"] for p in problems(session.instance.debug_log_path)[earlier:]]
    assert kinds == ["delivery_failed"]


async def test_rows_from_a_writer_process_arrive_in_one_batched_turn_and_a_failed_one_is_delivered_again(
        scripted_api, session_factory, tmp_path):
    """One session: rows a writer process adds during a user turn go out in one batched inbox turn
    (through the same CLI process); then an inbox turn the API fails is delivered again (a failed
    turn never hands its process on, so the retry starts a second CLI)."""
    session = session_factory("eng-panel")
    try:
        await _rows_written_during_a_user_turn_arrive_in_one_batched_turn(scripted_api, session, tmp_path)
        await _failed_inbox_turn_is_delivered_again(scripted_api, session, tmp_path)
    finally:
        await session.aclose()


async def test_disabled_in_config_attaches_nothing(session_factory):
    session = session_factory("quiet")
    assert attach_inbox(session) is None and session.peer_inbox is None
