"""A kept CLI continues its own conversation while the window only grows, and rebuilds on anything else.

Through the real path: AgentSession -> real SDK -> real Claude CLI -> the scripted API (its prompt-cache
emulation) -> usage. "Continues": the turn's first request holds the earlier turns as the CLI's own
messages and only this turn's part (slots, per-turn blocks, the message) as a new user message.
"Rebuilds": the request is a fresh conversation, one user message with the window's rows.
"""
from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from mnemara.core import events as ev
from mnemara.core.config import update_config
from mnemara.core.debuglog import read_events
from mnemara.testing.prompt_cache import prompt_blocks
from mnemara.testing.scripted_api import RecordedRequest, Reply, http_error, reply, tool_use
from tests.e2e.test_engine_e2e import _slow_turn_seen_streaming

pytestmark = pytest.mark.e2e


def _turn(api: Any, session: Any, text: str, *replies: Reply | str) -> RecordedRequest:
    """Run a turn; its first request."""
    before = len(api.message_requests())
    api.push(*(replies or (f"answer to {text}",)))
    result = session.turn(text)
    assert result.ok, result.errors
    return api.message_requests()[before]


def _row_ids(req: RecordedRequest) -> list[int]:
    first = req.messages[0]["content"]
    return [int(b["text"].split('"')[1]) for b in first if str(b.get("text", "")).startswith("<turn id=")]


def _rebuilt(req: RecordedRequest, text: str, rows: list[int]) -> None:
    """``req`` is a fresh conversation: one user message holding ``rows`` as history, ``text`` last."""
    assert [m["role"] for m in req.messages] == ["user"], [m["role"] for m in req.messages]
    assert _row_ids(req) == rows and req.messages[0]["content"][-1]["text"] == text


def _continued(req: RecordedRequest, text: str, messages: int) -> None:
    """``req`` continues: ``messages`` messages, the last this turn's own part only, ``text`` last."""
    assert len(req.messages) == messages and req.messages[-1]["role"] == "user"
    last = req.messages[-1]["content"]
    assert last[-1]["text"] == text and not any(str(b.get("text", "")).startswith("<turn id=") for b in last)


def _decisions(session: Any) -> list[tuple[bool, str | None]]:
    return [(e["continued"], e["reason"]) for e in read_events(session.instance.debug_log_path)
            if e["event"] == "cli_conversation"]


def test_a_grown_window_continues_and_reads_the_last_turn_from_the_cache(scripted_api, session_factory, isolated_home):
    session = session_factory("grown", permission_prompt=lambda req: "y")
    target = isolated_home / "six_kb.py"
    target.write_text("x = 1  # a line of a 6 KB file\n" * 200, encoding="utf-8")
    session.store.upsert_slot("plan", "user", "step 1 of 3")
    first = _turn(scripted_api, session, "read six_kb.py",
                  reply(tool_use("Read", {"file_path": str(target)}, id="toolu_cont_1")), reply("it sets x"))
    _rebuilt(first, "read six_kb.py", [])
    session.store.upsert_slot("plan", "user", "step 2 of 3: the slot changed")
    second = _turn(scripted_api, session, "and what does it set x to?")
    _continued(second, "and what does it set x to?", 5)
    assert [m["role"] for m in second.messages] == ["user", "assistant", "user", "assistant", "user"]
    use, result = second.messages[1]["content"][0], second.messages[2]["content"][0]
    assert (use["type"], use["id"], result["type"], result["tool_use_id"]) == ("tool_use", "toolu_cont_1",
                                                                               "tool_result", "toolu_cont_1")
    assert "x = 1" in str(result["content"])  # the real result, not a rendered row
    # the slot's new value goes in this turn's message, after the cached conversation
    own = [b["text"] for b in second.messages[-1]["content"]]
    assert any(t.startswith("<pinned_slots>") and "step 2 of 3" in t for t in own)
    # everything through last turn's tool result is read back from the (emulated) cache, none written again
    blocks = prompt_blocks(second.body)
    through = next(k for k, b in enumerate(blocks) if b.where == "messages[2].content[0]")
    assert second.usage["cache_read_input_tokens"] >= sum(b.tokens for b in blocks[:through + 1])
    assert second.usage["cache_creation_input_tokens"] < 200  # its answer and this message: not the 6 KB again
    third = _turn(scripted_api, session, "thanks")
    _continued(third, "thanks", 7)
    assert session.stats == {"spare_used": 0, "fresh_started": 1, "reused": 2} and session.pool.continued == 2
    assert _decisions(session) == [(True, None), (True, None)]


def test_inspect_context_counts_what_a_continued_conversation_still_carries(scripted_api, session_factory):
    """The agent's own view of its context matches the viewer's: a continued turn still sends the slots
    and per-turn blocks earlier turns were sent with; a rebuilt one does not."""
    session = session_factory("inspect")
    session.store.upsert_slot("plan", "user", "a slot of some length " * 20)
    _turn(scripted_api, session, "first")
    inspect = tool_use("mcp__mnemara__inspect_context", {}, id="toolu_inspect_1")
    second = _turn(scripted_api, session, "how full is it?", reply(inspect), reply("about half"))
    _continued(second, "how full is it?", 3)

    def inspected(use_id: str) -> dict[str, int]:
        """The parts inspect_context answered, from the result the last request carried."""
        answer = next(b for m in scripted_api.message_requests()[-1].messages for b in m["content"]
                      if isinstance(b, dict) and b.get("tool_use_id") == use_id)
        return {p["name"]: p["tokens"] for p in json.loads(answer["content"][0]["text"])["parts"]}

    parts = inspected("toolu_inspect_1")
    carried = session.pool.spare.conversation.carried_tokens if session.pool.spare.conversation else 0
    assert parts.get("continued conversation", 0) > 0 and carried >= parts["continued conversation"]
    update_config(session.instance.config_path, cli_conversation="rebuild")
    session.reload_config()
    _turn(scripted_api, session, "again?", reply(dict(inspect, id="toolu_inspect_2")), reply("same"))
    assert "continued conversation" not in inspected("toolu_inspect_2")


def test_a_trim_an_eviction_an_edit_or_rebuild_mode_rebuild(scripted_api, session_factory):
    session = session_factory("changes")
    update_config(session.instance.config_path, max_window_turns=6, window_trim_to=0.5)
    _turn(scripted_api, session, "one")  # rows 1, 2
    _continued(_turn(scripted_api, session, "two"), "two", 3)  # rows 3, 4
    _continued(_turn(scripted_api, session, "three"), "three", 5)  # rows 5, 6
    # the fourth message makes 7 rows > 6: a trim to 3 rows (5, 6 and the message)
    _rebuilt(_turn(scripted_api, session, "four"), "four", [5, 6])  # rows 7, 8
    update_config(session.instance.config_path, max_window_turns=100)
    _continued(_turn(scripted_api, session, "five"), "five", 3)  # rows 9, 10
    session.store.evict([6])  # an eviction (/evict, an agent's evict_row)
    _rebuilt(_turn(scripted_api, session, "six"), "six", [5, 7, 8, 9, 10])  # rows 11, 12
    session.store.set_text(5, "three (edited by hand)")  # an edit
    req = _turn(scripted_api, session, "seven")
    _rebuilt(req, "seven", [5, 7, 8, 9, 10, 11, 12])
    assert "three (edited by hand)" in req.user_text()
    update_config(session.instance.config_path, cli_conversation="rebuild")
    _rebuilt(_turn(scripted_api, session, "eight"), "eight", [5, 7, 8, 9, 10, 11, 12, 13, 14])
    assert session.stats == {"spare_used": 0, "fresh_started": 1, "reused": 7} and session.pool.continued == 3
    changed = "the window changed (a row left, was edited or was added)"
    assert _decisions(session) == [(True, None), (True, None), (False, changed), (True, None), (False, changed),
                                   (False, changed), (False, "cli_conversation is rebuild")]

def test_a_role_doc_edit_gets_the_new_system_prompt_in_a_new_conversation(scripted_api, session_factory,
                                                                           tmp_path: Path):
    role = tmp_path / "role.md"
    role.write_text("You are VERSION-ONE.", encoding="utf-8")
    session = session_factory("role")
    update_config(session.instance.config_path, role_doc_path=str(role))
    _turn(scripted_api, session, "one")
    _continued(_turn(scripted_api, session, "two"), "two", 3)
    role.write_text("You are VERSION-TWO.", encoding="utf-8")
    req = _turn(scripted_api, session, "three")
    _rebuilt(req, "three", [1, 2, 3, 4])
    assert req.system_text.endswith("VERSION-TWO.") and "VERSION-ONE" not in str(req.body)


def test_a_stopped_turn_is_never_continued(scripted_api, session_factory):
    session = session_factory("stopped")

    async def go() -> tuple[RecordedRequest, RecordedRequest]:
        for text in ("one", "two"):
            scripted_api.push(f"answer to {text}")
            async for _ in session.aturn(text):
                pass
        continued = scripted_api.last
        task, _ = await _slow_turn_seen_streaming(session, scripted_api, "take your time")
        assert await session.stop()
        await asyncio.wait_for(task, 30)
        before = len(scripted_api.message_requests())
        scripted_api.push("after the stop")
        done = [e async for e in session.aturn("after the stop")][-1]
        assert isinstance(done, ev.TurnDone) and done.error is None
        return continued, scripted_api.message_requests()[before]

    continued, after = asyncio.run(go())
    _continued(continued, "two", 3)
    _rebuilt(after, "after the stop", [1, 2, 3, 4, 5, 6])  # the stopped turn's message and partial answer as rows
    assert 'interrupted="true"' in after.messages[0]["content"][-3]["text"]


def test_a_failed_turn_is_never_continued(scripted_api, session_factory):
    session = session_factory("failed")
    _turn(scripted_api, session, "one")
    _continued(_turn(scripted_api, session, "two"), "two", 3)
    scripted_api.push(http_error(500, "overloaded for a moment"))
    failed = session.turn("three")
    assert not failed.ok
    _rebuilt(_turn(scripted_api, session, "four"), "four", [1, 2, 3, 4, 5])  # "three" is a row now, unanswered


def test_the_cli_never_compacts_a_continued_conversation_on_its_own(scripted_api, session_factory):
    """Mnemara owns compression (/compress): a conversation the CLI finds nearly full must not be summarised
    by the CLI's auto-compaction (an extra call, and a rewrite of what the user owns, unasked). The first
    answer reports 175,000 input tokens, past the CLI's auto-compact threshold for a 200 K window: the next
    turn rebuilds (a fresh conversation has no count to compact on); the kept CLI is rewound right after
    the turn that reported it (see tests/context/test_continuation.py for the rule)."""
    session = session_factory("nocompact")
    _turn(scripted_api, session, "first", reply("noted", usage={"input_tokens": 175_000, "output_tokens": 7}))
    before = len(scripted_api.message_requests())
    second = _turn(scripted_api, session, "second")
    for request in scripted_api.message_requests()[before:]:
        assert "Respond with TEXT ONLY" not in json.dumps(request.messages), "the CLI compacted the conversation"
    assert len(scripted_api.message_requests()) == before + 1
    assert [m["role"] for m in second.messages] == ["user"]  # rebuilt: one message holding the window's rows
    assert "noted" in second.user_text() and second.messages[0]["content"][-1]["text"] == "second"
