"""The turn engine end to end: AgentSession -> real SDK -> real Claude CLI -> scripted API.

A Claude CLI start costs about a second of CPU, so behaviours that one configuration can show
share a session: consecutive turns through one kept CLI, each checked by a helper named after
the behaviour it proves (a failure's traceback names it). Failed turns never hand their CLI on,
so each failure below meets a fresh CLI, as it would in a session of its own.
"""
from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from mnemara.core import events as ev
from mnemara.claude._private import cli_process
from mnemara.core.config import update_config
from mnemara.core.debuglog import read_events
from mnemara.memory.notes import day_files, parse_file
from mnemara.testing.scripted_api import http_error, reply, thinking, tool_use

pytestmark = pytest.mark.e2e


# -- one configuration, one CLI: consecutive turns, one behaviour each --------------------------------

def _prewarm_serves_the_first_turn(api, session) -> None:
    import time

    session.prewarm()
    deadline = time.monotonic() + 60
    while (session.pool.spare is None or not session.pool.spare.ready.done()) and time.monotonic() < deadline:
        time.sleep(0.1)
    api.push(reply("warm hello"))
    assert session.turn("first").text == "warm hello"
    assert session.stats == {"spare_used": 1, "fresh_started": 0, "reused": 0}, "the prewarmed CLI did not serve turn 1"


def _streamed_text_turn_is_persisted(api, session) -> None:
    api.push(reply("Hello from the scripted model, streamed in pieces."))
    before = len(session.store.history())
    result = session.turn("hi there")
    deltas = [e.text for e in result.events if isinstance(e, ev.TextDelta)]
    assert len(deltas) > 1 and "".join(deltas) == "Hello from the scripted model, streamed in pieces."
    assert result.text == "Hello from the scripted model, streamed in pieces."
    done = result.done
    assert not done.interrupted and done.error is None and done.cost_usd and done.cost_usd > 0
    rows = session.store.history()[before:]
    assert [r.role for r in rows] == ["user", "assistant"]
    assert rows[0].text == "hi there"
    assert rows[1].id == done.assistant_row_id and rows[1].text == result.text
    assert rows[1].meta["usage"]["output_tokens"] == 7
    assert api.last.user_text().endswith("hi there")


def _stream_off_sends_no_deltas(api, session) -> None:
    update_config(session.instance.config_path, stream=False)
    api.push(reply(thinking("pondering"), "whole answer"))
    result = session.turn("hello")
    assert not [e for e in result.events if isinstance(e, ev.TextDelta)]
    assert [e.thinking for e in result.events if isinstance(e, ev.ThinkingBlock)] == ["pondering"]
    assert result.text == "whole answer"
    stored = session.store.get(result.done.assistant_row_id).blocks
    assert [b["type"] for b in stored] == ["thinking", "text"]
    update_config(session.instance.config_path, stream=True)


def _write_memory_round_trip(api, session) -> None:
    sent = len(api.message_requests())
    api.push(reply(tool_use("mcp__mnemara__write_memory", {"text": "The lease timeout is 30s.", "category": "insight"})),
             reply("Noted."))
    result = session.turn("remember the lease timeout")
    assert [e.name for e in result.tool_uses] == ["mcp__mnemara__write_memory"]
    tool_results = [e for e in result.events if isinstance(e, ev.ToolResult)]
    assert len(tool_results) == 1 and not tool_results[0].is_error and '"ok": true' in tool_results[0].text
    atoms = [a for f in day_files(session.instance.memory_dir) for a in parse_file(f)]
    assert [(a.category, a.text) for a in atoms] == [("insight", "The lease timeout is 30s.")]
    requests = api.message_requests()[sent:]
    assert "mcp__mnemara__write_memory" in requests[0].tool_names()
    assert {"Bash", "Read", "Write", "Edit"} <= set(requests[0].tool_names())
    assert requests[1].new_tool_results()[0]["tool_use_id"] == result.tool_uses[0].id
    stored = session.store.get(result.done.assistant_row_id).blocks
    assert [b["type"] for b in stored] == ["tool_use", "tool_result", "text"]


def _mcp_servers_of_config_are_wired_through(api, session) -> None:
    sent = len(api.message_requests())
    api.push(reply(tool_use("mcp__echo__echo", {"text": "ping"})), reply("echoed"))
    result = session.turn("use the echo server")
    requests = api.message_requests()[sent:]
    assert "mcp__echo__echo" in requests[0].tool_names()
    results = [e for e in result.events if isinstance(e, ev.ToolResult)]
    assert len(results) == 1 and not results[0].is_error and results[0].text == "echo: ping"
    assert requests[1].new_tool_results()[0]["content"][0]["text"].startswith("echo: ping")
    assert result.text == "echoed"


def _bash_timeout_seconds_bounds_bash(api, session) -> None:
    api.push(reply(tool_use("Bash", {"command": "sleep 8; echo too-late", "timeout": 600000})), reply("ok"))
    result = session.turn("run the slow thing")
    (res,) = [e for e in result.events if isinstance(e, ev.ToolResult)]
    assert "too-late" not in res.text and res.is_error  # killed at the 1 s cap despite asking for 600 s


def _cli_retry_is_reported_and_the_turn_succeeds(api, session) -> None:
    api.push(http_error(529), reply("after one retry"))
    result = session.turn("try hard")
    assert result.ok and result.text == "after one retry"
    notices = [e.message for e in result.events if isinstance(e, ev.Notice)]
    assert len(notices) == 1 and "overloaded (HTTP 529); retrying" in notices[0] and "attempt 1 of 1" in notices[0]


def _config_broken_mid_session_gives_one_error_then_recovers(api, session) -> None:
    sent = len(api.message_requests())
    good = session.instance.config_path.read_text(encoding="utf-8")
    session.instance.config_path.write_text("{oops", encoding="utf-8")
    result = session.turn("hello while broken")
    assert [e.kind for e in result.errors] == ["config"] and "config.json" in result.errors[0].message
    assert session.instance.config_path.read_text(encoding="utf-8") == "{oops"
    assert len(api.message_requests()) == sent, "a turn was sent with a broken config.json"
    session.instance.config_path.write_text(good, encoding="utf-8")
    api.push(reply("fixed"))
    assert session.turn("and now").text == "fixed"
    # never answered: stored and marked, but not sent again behind the user's back (issue 27)
    assert "hello while broken" not in api.last.user_text()
    (kept,) = [row for row in session.store.history() if row.text == "hello while broken"]
    assert kept.meta["no_reply"] is True and kept.meta["error_kind"] == "config"


def _window_order_rows_then_pinned_then_message(api, session) -> None:
    session.store.append("user", "old question")
    session.store.append("assistant", [{"type": "text", "text": "old answer"},
                                       {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}},
                                       {"type": "tool_result", "tool_use_id": "t1", "content": "a.txt"}])
    session.store.upsert_slot("inventory", "user", "HP 10/10, sword")
    session.store.upsert_slot("goal", "user", "find the lease timeout")
    session.turn("new message")
    blocks = [b["text"] for b in api.last.blocks("user") if b.get("type") == "text"]
    start = next(i for i, b in enumerate(blocks) if b.startswith("<conversation_history>"))
    close = blocks.index("</conversation_history>")  # the cache layout: the window first, a block per row
    history = "\n".join(blocks[start:close + 1])
    history = history[history.index("old question"):]  # the rows of the turns before come first
    assert history.index("old answer") < history.index("[tool_use Bash") < history.index("a.txt")
    slots, message = blocks[close + 1:]  # what changes between turns comes after the cached window
    assert slots.startswith("<pinned_slots>") and slots.index("inventory") < slots.index("goal")
    assert message == "new message"


def _window_caps_and_trim(api, session) -> None:
    update_config(session.instance.config_path, max_window_turns=3, window_trim_to=1)  # one row at a time
    live_before, evicted_before = len(session.store.live_rows()), session.store.counts()["evicted"]
    for i in range(4):
        session.store.append("user" if i % 2 == 0 else "assistant", f"row-{i}")
    session.turn("now")
    history = api.last.user_text()
    assert "row-0" not in history and "row-1" not in history and "row-2" in history and "row-3" in history
    live = [t.text for t in session.store.live_rows()]
    assert live == ["row-3", "now", "(scripted API: no reply was queued)"]
    assert session.store.counts()["evicted"] == evicted_before + live_before + 3


def test_one_cli_serves_prewarm_streaming_tools_retries_config_and_window_turns(scripted_api, session_factory,
                                                                                 monkeypatch, isolated_home):
    """One configuration (an MCP server, a 1 s Bash cap, one CLI retry), one CLI started ahead
    of the first turn, and every turn after it through that same process: each helper is one
    behaviour; at the end no CLI session transcript was left on disk."""
    import sys

    from mnemara.store.instance import Instance

    monkeypatch.setenv("CLAUDE_CODE_MAX_RETRIES", "1")
    server = Path(__file__).resolve().parents[1] / "mcp_echo_server.py"
    update_config(Instance.create("t").config_path, bash_timeout_seconds=1,
                  mcp_servers=[{"name": "echo", "command": sys.executable, "args": [str(server)], "env": {}}])
    session = session_factory("t", warm_spare=True, permission_prompt=lambda request: "y")
    steps = [_prewarm_serves_the_first_turn, _streamed_text_turn_is_persisted, _stream_off_sends_no_deltas,
             _write_memory_round_trip, _mcp_servers_of_config_are_wired_through, _bash_timeout_seconds_bounds_bash,
             _cli_retry_is_reported_and_the_turn_succeeds, _config_broken_mid_session_gives_one_error_then_recovers,
             _window_order_rows_then_pinned_then_message, _window_caps_and_trim]
    for step in steps:
        step(scripted_api, session)
    turns = len(steps)  # one CLI turn each (the broken config's turn is refused before any CLI; its recovery is one)
    assert session.stats == {"spare_used": 1, "fresh_started": 0, "reused": turns - 1}, "a turn did not get the kept CLI"
    # turns leave no CLI session transcripts
    projects = isolated_home / ".claude" / "projects"
    assert not projects.exists() or not any(projects.rglob("*.jsonl"))


# -- failures: each meets a fresh CLI and never hands it on --------------------------------------------

def _api_failures_give_one_clear_error_and_keep_what_was_done(scripted_api, session) -> None:
    """One kind of API failure per turn; the first fails after a tool ran, and the turn keeps what
    it did. (401, 500 and a dropped connection are proven the same way, with the CLI's own
    retries, in test_api_faults_e2e.py.)"""
    failures = [([reply(tool_use("mcp__mnemara__write_memory", {"text": "kept note"})), http_error(429)], "rate_limit"),
                ([http_error(403)], "auth"), ([http_error(529)], "overloaded")]
    for n, (script, kind) in enumerate(failures):
        scripted_api.push(*script)
        before = len(session.store.history())
        result = session.turn(f"this one fails ({kind} {n})")
        errors = result.errors
        assert len(errors) == 1 and errors[0].kind == kind, (kind, errors)
        assert result.done.error == errors[0].message
        rows = session.store.history()[before:]
        assert rows[0].role == "user" and rows[0].meta["error_kind"] == kind
        if n == 0:  # failure after a tool ran: the partial turn is kept, the note it wrote too
            assert [r.role for r in rows] == ["user", "assistant"] and rows[1].id == result.done.assistant_row_id
            assert [b["type"] for b in rows[1].blocks] == ["tool_use", "tool_result"]
            assert rows[1].meta["error_kind"] == kind
            atoms = [a for f in day_files(session.instance.memory_dir) for a in parse_file(f)]
            assert [a.text for a in atoms] == ["kept note"]
        else:
            assert len(rows) == 1 and result.done.assistant_row_id is None
        logged = [e for e in read_events(session.instance.debug_log_path) if e["event"] == "turn_error"]
        assert [e["kind"] for e in logged][-1] == kind and len(logged) == n + 1
        assert session.pool.spare is None, "a failed turn handed its CLI on"
    assert session.stats == {"spare_used": 0, "fresh_started": len(failures), "reused": 0}


async def _slow_turn_seen_streaming(session, api, text: str, answer=None) -> tuple[asyncio.Task, list]:
    """Start a turn whose answer (default: 200 words) streams slowly; return once its first text has arrived."""
    api.push(answer or reply("slow " * 200, delay=0.05))
    seen: list = []

    async def run() -> None:
        async for event in session.aturn(text):
            seen.append(event)

    task = asyncio.create_task(run())
    for _ in range(400):
        if any(isinstance(e, ev.TextDelta) for e in seen):
            break
        await asyncio.sleep(0.05)
    return task, seen


async def _stop_mid_stream_records_interrupted(api, session) -> None:
    task, seen = await _slow_turn_seen_streaming(session, api, "take your time")
    assert await session.stop()
    await asyncio.wait_for(task, 20)
    done = seen[-1]
    assert isinstance(done, ev.TurnDone) and done.interrupted
    row = session.store.get(done.assistant_row_id)
    assert row.meta["interrupted"] is True and row.text.startswith("slow")
    assert len(row.text) < len("slow " * 200)
    assert not session.busy
    assert session.pool.spare is None, "a stopped turn handed its CLI on"


async def _crashed_cli_gives_one_error(api, session) -> None:
    import os
    import signal

    before = len(session.store.history())
    task, seen = await _slow_turn_seen_streaming(session, api, "crash please")
    process = cli_process(session.pool.active.client)  # the CLI serving this turn
    os.kill(process.pid, signal.SIGKILL)
    await asyncio.wait_for(task, 30)
    errors = [e for e in seen if isinstance(e, ev.ErrorEvent)]
    assert len(errors) == 1 and errors[0].kind == "cli" and "Claude CLI" in errors[0].message
    assert seen[-1].error == errors[0].message and seen[-1].interrupted  # the text shown so far is kept, once
    user, partial = session.store.history()[before:]
    assert user.text == "crash please" and partial.id == seen[-1].assistant_row_id
    assert partial.text.startswith("slow ") and partial.meta["interrupted"] is True
    assert any(e["event"] == "turn_error" and e["kind"] == "cli" for e in read_events(session.instance.debug_log_path))
    assert session.pool.spare is None, "a crashed CLI was kept"


async def _closing_inside_a_running_loop_releases_the_kept_process(session) -> None:
    from mnemara.claude.process import process_transport

    kept = session.pool.spare  # kept by a turn of the sync API: it lives on the session's own loop
    assert kept is not None
    transport = process_transport(kept.client)
    session.close()  # inside this test's loop: kill now, release on the session's loop
    for _ in range(200):
        if transport.is_closing():
            break
        await asyncio.sleep(0.01)
    assert transport.is_closing()


async def test_failed_stopped_or_crashed_turns_keep_what_they_did_and_the_next_turn_works_then_close_in_a_loop(
        scripted_api, session_factory):
    """API failures of several kinds, a stop, then a CLI killed mid-answer, in one session: each
    turn keeps what it did (the text shown so far, interrupted), never hands its CLI on (so each
    meets a fresh one, as in a session of its own), and the next turn works. That last turn runs
    on the sync API, so its kept CLI lives on the session's loop: closing from inside this test's
    loop must still release it."""
    session = session_factory(warm_spare=False)
    await asyncio.to_thread(_api_failures_give_one_clear_error_and_keep_what_was_done, scripted_api, session)
    await _stop_mid_stream_records_interrupted(scripted_api, session)
    await _crashed_cli_gives_one_error(scripted_api, session)
    scripted_api.push(reply("alive"))
    result = await asyncio.to_thread(session.turn, "still there?")
    assert result.done.error is None and result.text == "alive"
    assert "this one fails (overloaded 2)" in scripted_api.last.user_text()  # failed turns' messages stay in the window
    assert session.stats == {"spare_used": 0, "fresh_started": 6, "reused": 0}
    await _closing_inside_a_running_loop_releases_the_kept_process(session)


def test_no_api_key_is_reported_and_message_kept(scripted_api, session_factory, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    session = session_factory()
    result = session.turn("hello?")
    assert [e.kind for e in result.errors] == ["no_api_key"]
    message = result.errors[0].message
    assert "export ANTHROPIC_API_KEY=" in message and "\n" not in message and "claude login" not in message
    assert "_bundled/claude auth login" in message  # the CLI inside the SDK: there is no `claude` on PATH
    assert [r.text for r in session.store.history()] == ["hello?"]
    assert scripted_api.message_requests() == []
