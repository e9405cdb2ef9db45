"""The turn engine end to end: AgentSession -> real SDK -> real Claude CLI -> scripted API."""
from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from mnemara import events as ev
from mnemara.config import update_config
from mnemara.debuglog import read_events
from mnemara.memory.notes import day_files, parse_file
from mnemara.testing import drop, http_error, reply, thinking, tool_use

pytestmark = pytest.mark.e2e


def test_streamed_text_turn_is_persisted(scripted_api, session_factory):
    session = session_factory()
    scripted_api.push(reply("Hello from the scripted model, streamed in pieces."))
    result = session.turn("hi there")
    deltas = [e.text for e in result.events if isinstance(e, ev.TextDelta)]
    assert len(deltas) > 1 and "".join(deltas) == "Hello from the scripted model, streamed in pieces."
    assert result.text == "Hello from the scripted model, streamed in pieces."
    done = result.done
    assert not done.interrupted and done.error is None and done.cost_usd and done.cost_usd > 0
    rows = session.store.history()
    assert [r.role for r in rows] == ["user", "assistant"]
    assert rows[0].text == "hi there"
    assert rows[1].id == done.assistant_row_id and rows[1].text == result.text
    assert rows[1].meta["usage"]["output_tokens"] == 7
    assert scripted_api.last.user_text().endswith("hi there")


def test_stream_off_sends_no_deltas(scripted_api, session_factory):
    session = session_factory()
    update_config(session.instance.config_path, stream=False)
    scripted_api.push(reply(thinking("pondering"), "whole answer"))
    result = session.turn("hello")
    assert not [e for e in result.events if isinstance(e, ev.TextDelta)]
    assert [e.thinking for e in result.events if isinstance(e, ev.ThinkingBlock)] == ["pondering"]
    assert result.text == "whole answer"
    stored = session.store.get(result.done.assistant_row_id).blocks
    assert [b["type"] for b in stored] == ["thinking", "text"]


def test_role_doc_is_reread_after_edit_and_missing_one_warns(scripted_api, session_factory, tmp_path, capsys):
    role = tmp_path / "role.md"
    role.write_text("You are ROLE-VERSION-ONE.", encoding="utf-8")
    session = session_factory(warm_spare=True)
    update_config(session.instance.config_path, role_doc_path=str(role))
    session.turn("first")
    session.turn("second, same role doc: the first turn's CLI serves it")
    assert session.stats == {"spare_used": 0, "fresh_started": 1, "reused": 1}
    role.write_text("You are ROLE-VERSION-TWO.", encoding="utf-8")
    session.turn("third")
    assert session.stats == {"spare_used": 0, "fresh_started": 2, "reused": 1}  # the kept CLI had the old text
    role.unlink()
    result = session.turn("fourth")
    systems = [r.system_text for r in scripted_api.message_requests()]
    assert systems[0].endswith("You are ROLE-VERSION-ONE.") and systems[1].endswith("You are ROLE-VERSION-ONE.")
    assert systems[2].endswith("You are ROLE-VERSION-TWO.")
    assert "ROLE-VERSION" not in systems[3]
    assert any(isinstance(e, ev.Notice) and "role doc not found" in e.message for e in result.events)
    assert result.ok
    assert "role doc not found" in capsys.readouterr().err
    assert any(e["event"] == "role_doc_warning" for e in read_events(session.instance.debug_log_path))


def test_window_order_pinned_first_then_rows_then_message(scripted_api, session_factory):
    session = session_factory()
    session.store.append("user", "old question")
    session.store.append("assistant", [{"type": "text", "text": "old answer"},
                                       {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}},
                                       {"type": "tool_result", "tool_use_id": "t1", "content": "a.txt"}])
    session.store.upsert_slot("inventory", "user", "HP 10/10, sword")
    session.store.upsert_slot("goal", "user", "find the lease timeout")
    session.turn("new message")
    blocks = [b["text"] for b in scripted_api.last.blocks("user") if b.get("type") == "text"]
    ours = blocks[-3:]
    assert ours[0].startswith("<pinned_slots>")
    assert ours[0].index("inventory") < ours[0].index("goal")
    assert ours[1].startswith("<conversation_history>")
    assert ours[1].index("old question") < ours[1].index("old answer") < ours[1].index("[tool_use Bash") < ours[1].index("a.txt")
    assert ours[2] == "new message"


def test_window_caps_and_trim(scripted_api, session_factory):
    session = session_factory()
    update_config(session.instance.config_path, max_window_turns=3)
    for i in range(4):
        session.store.append("user" if i % 2 == 0 else "assistant", f"row-{i}")
    session.turn("now")
    history = scripted_api.last.blocks("user")[-2]["text"]
    assert "row-0" not in history and "row-1" not in history and "row-2" in history and "row-3" in history
    live = [t.text for t in session.store.live_rows()]
    assert live == ["row-3", "now", "(scripted API: no reply was queued)"]
    assert session.store.counts()["evicted"] == 3


def test_write_memory_round_trip(scripted_api, session_factory):
    session = session_factory()
    scripted_api.push(reply(tool_use("mcp__mnemara__write_memory", {"text": "The lease timeout is 30s.", "category": "insight"})),
                      reply("Noted."))
    result = session.turn("remember the lease timeout")
    assert [e.name for e in result.tool_uses] == ["mcp__mnemara__write_memory"]
    tool_results = [e for e in result.events if isinstance(e, ev.ToolResult)]
    assert len(tool_results) == 1 and not tool_results[0].is_error and '"ok": true' in tool_results[0].text
    atoms = [a for f in day_files(session.instance.memory_dir) for a in parse_file(f)]
    assert [(a.category, a.text) for a in atoms] == [("insight", "The lease timeout is 30s.")]
    requests = scripted_api.message_requests()
    assert "mcp__mnemara__write_memory" in requests[0].tool_names()
    assert {"Bash", "Read", "Write", "Edit"} <= set(requests[0].tool_names())
    assert requests[1].tool_results()[0]["tool_use_id"] == result.tool_uses[0].id
    stored = session.store.get(result.done.assistant_row_id).blocks
    assert [b["type"] for b in stored] == ["tool_use", "tool_result", "text"]


API_FAILURES = [(http_error(401), "auth"), (http_error(403), "auth"), (http_error(429), "rate_limit"),
                (http_error(500), "server"), (http_error(529), "overloaded"), (None, "connection")]


def test_api_failures_give_one_clear_error_and_session_recovers(scripted_api, session_factory):
    """Every kind of API failure, one after another in one session (a failed turn never hands its
    CLI on, so each failure meets a fresh CLI, as it would in its own session)."""
    session = session_factory()
    for n, (failure, kind) in enumerate(API_FAILURES):
        scripted_api.push(*(failure and [failure] or [drop(3), drop(0)]))
        before = len(session.store.history())
        result = session.turn(f"this one fails ({kind} {n})")
        errors = result.errors
        assert len(errors) == 1 and errors[0].kind == kind, (kind, errors)
        assert result.done.error == errors[0].message
        rows = session.store.history()[before:]
        assert rows[0].role == "user" and rows[0].meta["error_kind"] == kind
        if kind == "connection":  # the text streamed before the drop is kept once, marked interrupted
            assert [r.role for r in rows] == ["user", "assistant"] and rows[1].id == result.done.assistant_row_id
            assert rows[1].text == "this ans" and rows[1].meta["interrupted"] is True
        else:
            assert len(rows) == 1 and result.done.assistant_row_id is None
        logged = [e for e in read_events(session.instance.debug_log_path) if e["event"] == "turn_error"]
        assert [e["kind"] for e in logged][-1] == kind and len(logged) == n + 1
    scripted_api.push(reply("recovered"))
    again = session.turn("again")
    assert again.ok and again.text == "recovered"
    assert "this one fails (connection 5)" in scripted_api.last.user_text()


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


async def test_stop_mid_stream_records_interrupted_and_next_turn_works(scripted_api, session_factory):
    session = session_factory()
    scripted_api.push(reply("slow " * 200, delay=0.05))
    seen: list = []

    async def run() -> None:
        async for event in session.aturn("take your time"):
            seen.append(event)

    task = asyncio.create_task(run())
    for _ in range(400):
        if any(isinstance(e, ev.TextDelta) for e in seen):
            break
        await asyncio.sleep(0.05)
    assert await session.stop()
    await asyncio.wait_for(task, 20)
    done = seen[-1]
    assert isinstance(done, ev.TurnDone) and done.interrupted
    row = session.store.get(done.assistant_row_id)
    assert row.meta["interrupted"] is True and row.text.startswith("slow")
    assert len(row.text) < len("slow " * 200)
    assert not session.busy
    scripted_api.push(reply("fresh"))
    events = [e async for e in session.aturn("next")]
    assert events[-1].interrupted is False and "fresh" in [e.text for e in events if isinstance(e, ev.AssistantText)]
    await session.aclose()


async def test_crashed_cli_gives_one_error_and_next_turn_works(scripted_api, session_factory):
    import os
    import signal

    session = session_factory()
    scripted_api.push(reply("slow " * 200, delay=0.05))
    seen: list = []

    async def run() -> None:
        async for event in session.aturn("crash please"):
            seen.append(event)

    task = asyncio.create_task(run())
    for _ in range(400):
        if any(isinstance(e, ev.TextDelta) for e in seen):
            break
        await asyncio.sleep(0.05)
    process = session.pool.active.client._transport._process  # the CLI serving this turn
    os.kill(process.pid, signal.SIGKILL)
    await asyncio.wait_for(task, 30)
    errors = [e for e in seen if isinstance(e, ev.ErrorEvent)]
    assert len(errors) == 1 and errors[0].kind == "cli" and "Claude CLI" in errors[0].message
    assert seen[-1].error == errors[0].message and seen[-1].interrupted  # the text shown so far is kept, once
    user, partial = session.store.history()
    assert user.text == "crash please" and partial.id == seen[-1].assistant_row_id
    assert partial.text.startswith("slow ") and partial.meta["interrupted"] is True
    assert any(e["event"] == "turn_error" and e["kind"] == "cli" for e in read_events(session.instance.debug_log_path))
    scripted_api.push(reply("alive"))
    events = [e async for e in session.aturn("still there?")]
    assert events[-1].error is None and "alive" in [e.text for e in events if isinstance(e, ev.AssistantText)]
    await session.aclose()


def test_mcp_servers_of_config_are_wired_through(scripted_api, session_factory):
    import sys

    server = Path(__file__).with_name("mcp_echo_server.py")
    session = session_factory()
    update_config(session.instance.config_path,
                  mcp_servers=[{"name": "echo", "command": sys.executable, "args": [str(server)], "env": {}}])
    scripted_api.push(reply(tool_use("mcp__echo__echo", {"text": "ping"})), reply("echoed"))
    result = session.turn("use the echo server")
    requests = scripted_api.message_requests()
    assert "mcp__echo__echo" in requests[0].tool_names()
    results = [e for e in result.events if isinstance(e, ev.ToolResult)]
    assert len(results) == 1 and not results[0].is_error and results[0].text == "echo: ping"
    assert requests[1].tool_results()[0]["content"][0]["text"].startswith("echo: ping")
    assert result.text == "echoed"


def test_failure_after_a_tool_ran_keeps_the_partial_turn(scripted_api, session_factory):
    session = session_factory()
    scripted_api.push(reply(tool_use("mcp__mnemara__write_memory", {"text": "kept note"})), http_error(500))
    result = session.turn("write then fail")
    assert [e.kind for e in result.errors] == ["server"]
    row = session.store.get(result.done.assistant_row_id)
    assert [b["type"] for b in row.blocks] == ["tool_use", "tool_result"]
    assert row.meta["error_kind"] == "server"
    atoms = [a for f in day_files(session.instance.memory_dir) for a in parse_file(f)]
    assert [a.text for a in atoms] == ["kept note"]


def test_prewarm_serves_the_first_turn(scripted_api, session_factory):
    import time

    session = session_factory(warm_spare=True)
    session.prewarm()
    deadline = time.monotonic() + 60
    while (session.pool.spare is None or not session.pool.spare.ready.done()) and time.monotonic() < deadline:
        time.sleep(0.1)
    scripted_api.push(reply("warm hello"))
    assert session.turn("first").text == "warm hello"
    assert session.stats == {"spare_used": 1, "fresh_started": 0, "reused": 0}


def test_bash_timeout_seconds_bounds_bash(scripted_api, session_factory):
    session = session_factory(permission_prompt=lambda request: "y")
    update_config(session.instance.config_path, bash_timeout_seconds=1)
    scripted_api.push(reply(tool_use("Bash", {"command": "sleep 8; echo too-late", "timeout": 600000})), reply("ok"))
    result = session.turn("run the slow thing")
    (res,) = [e for e in result.events if isinstance(e, ev.ToolResult)]
    assert "too-late" not in res.text and res.is_error  # killed at the 1 s cap despite asking for 600 s


def test_cli_retry_is_reported_and_the_turn_succeeds(scripted_api, session_factory, monkeypatch):
    monkeypatch.setenv("CLAUDE_CODE_MAX_RETRIES", "1")
    session = session_factory()
    scripted_api.push(http_error(529), reply("after one retry"))
    result = session.turn("try hard")
    assert result.ok and result.text == "after one retry"
    notices = [e.message for e in result.events if isinstance(e, ev.Notice)]
    assert len(notices) == 1 and "overloaded (HTTP 529); retrying" in notices[0] and "attempt 1 of 1" in notices[0]


def test_turns_leave_no_cli_session_transcripts(scripted_api, session_factory, isolated_home):
    session = session_factory()
    session.turn("one")
    session.turn("two")
    projects = isolated_home / ".claude" / "projects"
    assert not projects.exists() or not any(projects.rglob("*.jsonl"))


def test_config_broken_mid_session_gives_one_error_then_recovers(scripted_api, session_factory):
    session = session_factory()
    good = session.instance.config_path.read_text(encoding="utf-8")
    session.instance.config_path.write_text("{oops", encoding="utf-8")
    result = session.turn("hello while broken")
    assert [e.kind for e in result.errors] == ["config"] and "config.json" in result.errors[0].message
    assert session.instance.config_path.read_text(encoding="utf-8") == "{oops"
    assert scripted_api.message_requests() == []
    session.instance.config_path.write_text(good, encoding="utf-8")
    scripted_api.push(reply("fixed"))
    assert session.turn("and now").text == "fixed"
    assert "hello while broken" in scripted_api.last.user_text()
