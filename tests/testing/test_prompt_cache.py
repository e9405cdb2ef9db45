"""The scripted API's prompt-cache emulation, against hand-worked examples of Anthropic's documented rules.

Token counts are the project's estimate: a text of 4*N characters is N tokens. Each example writes
out what the documentation says should be billed, then checks the emulation bills exactly that.
"""
from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from mnemara.testing.prompt_cache import CacheRuleError, ManualClock, PromptCache, prompt_blocks
from mnemara.testing.scripted_api import ScriptedAPI, reply

EPHEMERAL = {"type": "ephemeral"}
ONE_HOUR = {"type": "ephemeral", "ttl": "1h"}


def t(tokens: int, tag: str = "x", mark: dict[str, Any] | None = None) -> dict[str, Any]:
    """A text block of exactly ``tokens`` estimated tokens (distinct texts per tag)."""
    body = (tag + "-" * (tokens * 4))[: tokens * 4]
    block: dict[str, Any] = {"type": "text", "text": body}
    if mark is not None:
        block["cache_control"] = mark
    return block


def req(system: list[dict[str, Any]], *messages: tuple[str, list[dict[str, Any]]]) -> dict[str, Any]:
    return {"model": "claude-sonnet-4-5", "system": system,
            "messages": [{"role": role, "content": blocks} for role, blocks in messages]}


def usage(cache: PromptCache, body: dict[str, Any]) -> tuple[int, int, int]:
    """(cache read, cache written, plain input) of one request."""
    u = cache.account(body)
    assert u.total_input_tokens == sum(b.tokens for b in prompt_blocks(body))  # read + written + input = the prompt
    return u.cache_read_input_tokens, u.cache_creation_input_tokens, u.input_tokens


def test_a_large_marked_system_prompt_is_written_once_then_read():
    # The documentation's first example: a long system prompt marked once, a short question after it.
    # Call 1 writes the system prompt (2,000 tokens) and sends the question (10) plainly;
    # call 2, identical prefix, reads those 2,000 and again sends the question plainly.
    cache = PromptCache(ManualClock())
    body = req([t(2000, "book", EPHEMERAL)], ("user", [t(10, "q1")]))
    assert usage(cache, body) == (0, 2000, 10)
    assert usage(cache, req([t(2000, "book", EPHEMERAL)], ("user", [t(12, "q2")]))) == (2000, 0, 12)


def test_a_prefix_under_the_minimum_is_never_cached():
    # "Prompts shorter than the minimum are processed without caching, even if marked": 900 tokens, twice.
    cache = PromptCache(ManualClock())
    body = req([t(900, "short", EPHEMERAL)], ("user", [t(5, "q")]))
    assert usage(cache, body) == (0, 0, 905)
    assert usage(cache, body) == (0, 0, 905)
    assert len(cache) == 0


def test_multi_turn_conversation_reads_the_last_turn_and_writes_only_the_new_part():
    # The documented multi-turn pattern: the mark moves to the last user message each turn. Turn 2 reads
    # everything up to turn 1's mark (system 1,500 + question 100) and writes only the answer and the new
    # question (200 + 50). Moving the mark does not change what was cached.
    cache = PromptCache(ManualClock())
    system = [t(1500, "sys")]
    turn1 = req(system, ("user", [t(100, "q1", EPHEMERAL)]))
    assert usage(cache, turn1) == (0, 1600, 0)
    turn2 = req(system, ("user", [t(100, "q1")]), ("assistant", [t(200, "a1")]), ("user", [t(50, "q2", EPHEMERAL)]))
    assert usage(cache, turn2) == (1600, 250, 0)


def test_the_lookback_reaches_twenty_block_boundaries_and_no_further():
    # The documented lookback: 30 blocks, a mark on block 30. A change in block 25 still hits the prefix
    # cached at block 24 (checked: 30, 29, ..., 24); a change in block 5 is 26 boundaries back, past the
    # 20 checked (30 down to 11), so the prefix cached at block 4 is not found and everything is written.
    cache = PromptCache(ManualClock())
    system = [t(1100, "sys")]

    def blocks(changed: int | None) -> list[dict[str, Any]]:
        return [t(10, f"b{i}{'*' if i == changed else ''}") for i in range(1, 31)]

    def marked(bs: list[dict[str, Any]], at: int) -> list[dict[str, Any]]:
        bs = [dict(b) for b in bs]
        bs[at - 1]["cache_control"] = EPHEMERAL
        return bs

    for at in (4, 24):  # earlier requests left prefixes cached at blocks 4 and 24
        cache.account(req(system, ("user", marked(blocks(None)[:at], at))))
    assert usage(cache, req(system, ("user", marked(blocks(25), 30)))) == (1100 + 240, 60, 0)
    assert usage(cache, req(system, ("user", marked(blocks(5), 30)))) == (0, 1100 + 300, 0)


def test_a_second_breakpoint_extends_the_lookback():
    # The documented fix for long turns: a mark every <20 blocks keeps an earlier prefix reachable.
    cache = PromptCache(ManualClock())
    system = [t(1100, "sys", EPHEMERAL)]
    cache.account(req(system, ("user", [t(10, "q")])))
    many = [t(10, f"b{i}") for i in range(25)]
    many[-1]["cache_control"] = EPHEMERAL
    assert usage(cache, req(system, ("user", [t(10, "q")] + many))) == (1100, 260, 0)


def test_five_minute_entries_expire_and_a_read_restarts_their_lifetime():
    clock = ManualClock()
    cache = PromptCache(clock)
    body = req([t(2000, "doc", EPHEMERAL)], ("user", [t(4, "q")]))
    assert usage(cache, body) == (0, 2000, 4)
    clock.advance(299)
    assert usage(cache, body) == (2000, 0, 4)  # read at 4:59 ...
    clock.advance(299)
    assert usage(cache, body) == (2000, 0, 4)  # ... which restarted the 5 minutes
    clock.advance(301)
    assert usage(cache, body) == (0, 2000, 4)  # gone after 5 minutes of no use: written again


def test_the_one_hour_cache_survives_a_six_minute_gap_and_is_split_in_usage():
    clock = ManualClock()
    cache = PromptCache(clock)
    body = req([t(2000, "doc", ONE_HOUR)], ("user", [t(4, "q")]))
    u = cache.account(body)
    assert (u.cache_creation_1h, u.cache_creation_5m) == (2000, 0)
    assert u.as_usage()["cache_creation"] == {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 2000}
    clock.advance(6 * 60)
    assert usage(cache, body) == (2000, 0, 4)
    clock.advance(3601)
    assert usage(cache, body) == (0, 2000, 4)


def test_mixed_ttls_bill_each_segment_at_its_own_ttl():
    # The documented A/B/C example: nothing cached yet, a 1-hour mark on the system prompt (B = 1,500)
    # and a 5-minute mark on the last message (C = 1,700): 1,500 tokens are 1-hour writes, 200 are
    # 5-minute writes. Six minutes later the 1-hour part is read (A = 1,500) and C - A is written again.
    clock = ManualClock()
    cache = PromptCache(clock)
    body = req([t(1500, "sys", ONE_HOUR)], ("user", [t(200, "q", EPHEMERAL)]))
    u = cache.account(body)
    assert (u.cache_read_input_tokens, u.cache_creation_1h, u.cache_creation_5m, u.input_tokens) == (0, 1500, 200, 0)
    clock.advance(6 * 60)
    u = cache.account(body)
    assert (u.cache_read_input_tokens, u.cache_creation_1h, u.cache_creation_5m, u.input_tokens) == (1500, 0, 200, 0)


def test_tools_come_first_and_a_change_there_invalidates_everything_after():
    cache = PromptCache(ManualClock())
    tools = [{"name": "Read", "description": "r" * 2000, "input_schema": {"type": "object"}}]
    body = {**req([t(1000, "sys", EPHEMERAL)], ("user", [t(3, "q")])), "tools": tools}
    first = usage(cache, body)
    assert first[0] == 0 and first[1] > 1000
    assert usage(cache, body) == (first[1], 0, 3)
    changed = {**body, "tools": [{**tools[0], "description": "w" * 2000}]}
    assert usage(cache, changed)[0] == 0


def test_the_same_text_in_another_role_or_model_is_another_prefix():
    cache = PromptCache(ManualClock())
    cache.account(req([t(1200, "sys")], ("user", [t(10, "q", EPHEMERAL)])))
    assert usage(cache, req([t(1200, "sys")], ("assistant", [t(10, "q", EPHEMERAL)])))[0] == 0
    other_model = {**req([t(1200, "sys")], ("user", [t(10, "q", EPHEMERAL)])), "model": "claude-opus-4-5"}
    assert usage(cache, other_model)[0] == 0


@pytest.mark.parametrize("system, message", [
    ([t(10, f"s{i}", EPHEMERAL) for i in range(4)], [t(10, "q", EPHEMERAL)]),  # five marks
    ([t(1100, "s", EPHEMERAL)], [t(10, "q", ONE_HOUR)]),  # a 1-hour mark after a 5-minute one
    ([t(1100, "s", {"type": "ephemeral", "ttl": "10m"})], [t(10, "q")]),  # an unknown ttl
    ([t(1100, "s", {"type": "persistent"})], [t(10, "q")]),  # an unknown kind
])
def test_requests_the_api_refuses_are_refused(system, message):
    with pytest.raises(CacheRuleError):
        PromptCache(ManualClock()).account(req(system, ("user", message)))


def _post(api: ScriptedAPI, body: dict[str, Any]) -> tuple[int, bytes]:
    request = urllib.request.Request(api.base_url + "/v1/messages?beta=true", data=json.dumps(body).encode(),
                                     method="POST", headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def test_the_server_reports_the_cache_in_streamed_and_plain_usage():
    clock = ManualClock()
    with ScriptedAPI(clock=clock) as api:
        api.push(reply("one"), reply("two"))
        body = req([t(2000, "doc", EPHEMERAL)], ("user", [t(4, "q")]))
        status, raw = _post(api, {**body, "stream": True})
        assert status == 200
        events = [json.loads(line[6:]) for line in raw.decode().splitlines() if line.startswith("data: ")]
        start = events[0]["message"]["usage"]
        delta = next(e for e in events if e["type"] == "message_delta")["usage"]
        assert (start["cache_creation_input_tokens"], start["cache_read_input_tokens"], start["input_tokens"]) == (2000, 0, 4)
        assert start["cache_creation"] == {"ephemeral_5m_input_tokens": 2000, "ephemeral_1h_input_tokens": 0}
        assert delta["cache_creation_input_tokens"] == 2000 and delta["output_tokens"] == 7
        status, raw = _post(api, body)
        plain = json.loads(raw)["usage"]
        assert status == 200 and (plain["cache_read_input_tokens"], plain["cache_creation_input_tokens"]) == (2000, 0)
        assert [r.usage["cache_read_input_tokens"] for r in api.message_requests()] == [0, 2000]


def test_a_refused_request_is_answered_400_and_consumes_no_scripted_reply():
    with ScriptedAPI(clock=ManualClock()) as api:
        api.push(reply("kept for the next good request"))
        five = req([t(10, f"s{i}", EPHEMERAL) for i in range(5)], ("user", [t(3, "q")]))
        status, raw = _post(api, five)
        assert status == 400 and "maximum of 4" in json.loads(raw)["error"]["message"]
        assert api.pending == 1
        status, raw = _post(api, req([t(10, "s")], ("user", [t(3, "q")])))
        assert status == 200 and json.loads(raw)["content"][0]["text"] == "kept for the next good request"
