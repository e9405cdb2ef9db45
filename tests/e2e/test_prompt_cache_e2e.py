"""The request is laid out for Anthropic's prompt cache, measured through the real path:
AgentSession -> real SDK -> real Claude CLI -> the scripted API's cache emulation -> usage.

One session (one kept CLI) shows the behaviours in turn; each helper names the one it proves.
"""
from __future__ import annotations

import pytest

from mnemara.core.config import update_config
from mnemara.testing.prompt_cache import prompt_blocks
from mnemara.testing.scripted_api import reply, tool_use

pytestmark = pytest.mark.e2e


def _our_mark(body: dict) -> int:
    """The index (in the cache's block order) of Mnemara's breakpoint: the last history row."""
    blocks = prompt_blocks(body)
    first = body["messages"][0]["content"]
    rows = [j for j, b in enumerate(first) if str(b.get("text", "")).startswith("<turn id=")]
    assert rows, "the request carries no history row"
    assert "cache_control" in first[rows[-1]] and not any("cache_control" in first[j] for j in rows[:-1])
    where = f"messages[0].content[{rows[-1]}]"
    return next(i for i, b in enumerate(blocks) if b.where == where)


def _tokens_through(body: dict, text: str) -> int:
    """Tokens of ``body``'s prompt up to and including the first-message block whose text is ``text``."""
    first = body["messages"][0]["content"]
    j = next(j for j, b in enumerate(first) if b.get("text") == text)
    blocks = prompt_blocks(body)
    end = next(i for i, b in enumerate(blocks) if b.where == f"messages[0].content[{j}]")
    return sum(b.tokens for b in blocks[: end + 1])


def _last_row_text(body: dict) -> str:
    return next(b["text"] for b in reversed(body["messages"][0]["content"]) if str(b.get("text", "")).startswith("<turn id="))


def _next_turn_reads_every_row_the_last_turn_sent(api, session) -> None:
    api.push("first answer", "second answer", "third answer")
    session.turn("first question")
    two = session.turn("second question")
    r2 = api.last
    assert r2.usage["cache_read_input_tokens"] > 0  # tools, system and the CLI's reminders, written by turn 1
    assert r2.usage["cache_creation_input_tokens"] >= sum(b.tokens for b in prompt_blocks(r2.body)[:_our_mark(r2.body) + 1]) \
        - r2.usage["cache_read_input_tokens"]  # turn 1's rows are written once, as history
    assert two.done.usage["cache_read_input_tokens"] == r2.usage["cache_read_input_tokens"]  # Mnemara's accounting
    session.turn("third question")
    r3 = api.last
    assert r3.usage["cache_read_input_tokens"] == _tokens_through(r3.body, _last_row_text(r2.body))
    assert r3.usage["cache_read_input_tokens"] > r2.usage["cache_read_input_tokens"]


def _a_slot_update_does_not_invalidate_the_history(api, session) -> None:
    session.store.upsert_slot("plan", "user", "step 1 of 3")
    api.push("noted", "noted again")
    session.turn("the plan is set")
    before = api.last
    session.store.upsert_slot("plan", "user", "step 2 of 3: the slot changed")
    session.turn("what is the plan now?")
    after = api.last
    assert "step 2 of 3" in after.user_text()
    read = after.usage["cache_read_input_tokens"]
    assert read == _tokens_through(after.body, _last_row_text(before.body))  # every row up to the last turn's
    history = sum(b.tokens for b in prompt_blocks(after.body)[: _our_mark(after.body) + 1])
    assert read >= 0.9 * history


def _a_tool_turn_reads_its_own_first_call_back(api, session, home) -> None:
    target = home / "six_kb.py"
    target.write_text("x = 1  # a line of a 6 KB file\n" * 200, encoding="utf-8")
    api.push(reply(tool_use("Read", {"file_path": str(target)})), reply("read it"))
    session.turn("read six_kb.py")
    first, second = api.message_requests()[-2:]
    assert second.usage["cache_read_input_tokens"] >= sum(b.tokens for b in prompt_blocks(first.body)) - 5


def _the_one_hour_ttl_marks_the_history_for_an_hour(api, session) -> None:
    update_config(session.instance.config_path, cache_ttl="1h")
    api.push("an hour", "an hour again")
    assert session.turn("keep it an hour").ok
    assert session.turn("and again").ok  # a 1-hour mark after a 5-minute one would be refused (400)
    body = api.last.body
    marks = [b["cache_control"] for b in [*body["system"], *(c for m in body["messages"] for c in m["content"])]
             if "cache_control" in b]
    assert len(marks) == 3 and all(mark == {"type": "ephemeral", "ttl": "1h"} for mark in marks)  # the CLI's too
    assert api.last.usage["cache_creation"]["ephemeral_1h_input_tokens"] > 0
    assert api.last.usage["cache_creation"]["ephemeral_5m_input_tokens"] == 0
    update_config(session.instance.config_path, cache_ttl="5m")


def _the_spec_layout_puts_slots_first_and_pays_for_it(api, session) -> None:
    update_config(session.instance.config_path, request_layout="spec")
    api.push("spec one", "spec two")
    session.turn("spec layout, first")
    session.store.upsert_slot("plan", "user", "step 3 of 3: changed again")
    session.turn("spec layout, second")
    body = api.last.body
    texts = [b.get("text", "") for b in body["messages"][0]["content"]]
    assert texts.index(next(t for t in texts if t.startswith("<pinned_slots>"))) < \
        texts.index(next(t for t in texts if t.startswith("<conversation_history>")))
    assert not any("cache_control" in b for b in body["messages"][0]["content"][:-1])
    history = next(t for t in texts if t.startswith("<conversation_history>"))
    assert api.last.usage["cache_creation_input_tokens"] >= len(history) // 4  # the whole window written again
    update_config(session.instance.config_path, request_layout="cache")


def test_the_window_is_read_from_the_prompt_cache(scripted_api, session_factory, isolated_home):
    session = session_factory("cache", permission_prompt=lambda req: "y")
    # every turn rebuilt, as after a trim or an edit (a continued conversation: tests/e2e/test_cli_continuation_e2e.py)
    update_config(session.instance.config_path, cli_conversation="rebuild")
    _next_turn_reads_every_row_the_last_turn_sent(scripted_api, session)
    _a_slot_update_does_not_invalidate_the_history(scripted_api, session)
    _a_tool_turn_reads_its_own_first_call_back(scripted_api, session, isolated_home)
    _the_one_hour_ttl_marks_the_history_for_an_hour(scripted_api, session)
    _the_spec_layout_puts_slots_first_and_pays_for_it(scripted_api, session)
