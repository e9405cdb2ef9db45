"""Labelling a recorded request: every block named by its origin, the pieces putting the request back together."""
from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from mnemara.context.request_view import SDK_IDENTITY, diff_blocks, label_request
from mnemara.core.pricing import cost_usd
from mnemara.context.transcript import build_user_content, escape_delimiters
from mnemara.memory.autorecall import format_block
from mnemara.store.rows import Turn


def _turn(row_id: int, role: str, text: str, **kw) -> Turn:
    return Turn(id=row_id, role=role, blocks=[{"type": "text", "text": text}], tokens=5,
                created_at="2026-01-01T00:00:00+00:00", **kw)


def _body(content: list[dict], system: list[dict] | None = None) -> dict:
    return {"model": "claude-sonnet-4-6", "stream": True, "max_tokens": 100,
            "system": system or [{"type": "text", "text": SDK_IDENTITY + "\n\nYou are my role doc."}],
            "messages": [{"role": "user", "content": content}],
            "tools": [{"name": "Read", "description": "reads", "input_schema": {"type": "object"}}]}


def test_each_origin_is_named():
    hit = {"id": "2026-01-01-ab12", "text": "the door code is 4411", "category": "fact", "created_at": "2026-01-01",
           "evidence": {"relevance": 0.83}, "may_conflict_with": ["2025-12-31-cd34"], "conflict": "another code"}
    slot = _turn(1, "user", "agent notes", pin_label="plan", slot_pos=0, meta={"made_by": "agent"})
    content = [{"type": "text", "text": "<system-reminder>\nToday's date is 2026-12-01.\n</system-reminder>"},
               *build_user_content([slot], [_turn(2, "user", "hi"), _turn(3, "assistant", "hello")], "and now?",
                                   [format_block([hit])])]
    blocks = label_request(_body(content))
    by_origin = [(b.origin, b.label) for b in blocks if b.origin not in ("framing", "tools")]
    assert by_origin == [
        ("cli", "CLI addition: SDK identity line"), ("role_doc", "role doc (system prompt)"),
        ("cli", "CLI addition: date reminder"),
        ("row", "row 2 (user)"), ("row", "row 3 (assistant)"), ("slot", "slot plan (pos 0, user)"),
        ("recall", "recalled note 2026-01-01-ab12 (score 0.83)"), ("message", "your message"),
        ("cli", "CLI addition: request settings (max_tokens, model, stream)"),
    ]
    assert next(b for b in blocks if b.origin == "slot").detail["by_agent"] is True
    assert [(b.label, b.breakpoint) for b in blocks if b.breakpoint] == [("row 3 (assistant)", "5m")]
    assert next(b for b in blocks if b.origin == "recall").detail == {"note": "2026-01-01-ab12", "score": 0.83}
    assert [b.label for b in blocks if b.origin == "tools"] == ["tool schema Read"]
    assert all(b.tokens >= 0 for b in blocks)


def test_later_messages_of_the_turn_and_a_reminder_in_a_tool_result():
    body = _body([{"type": "text", "text": "go"}])
    body["messages"] += [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "x"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                      "content": "data\n\n<system-reminder>\n<total_tokens>9 left</total_tokens>\n</system-reminder>"}]},
    ]
    labels = [b.label for b in label_request(body) if b.origin == "turn"]
    assert labels == ["this turn: tool call Read", "this turn: tool result (with a CLI reminder appended)"]


_texts = st.lists(st.sampled_from(list("ab <>/\n\"=") + ["<turn", "</turn>", "<slot", "</slot>",
                                                         '<turn id="9" role="user">']), max_size=12).map("".join)


@settings(max_examples=100, deadline=None)
@given(rows=st.lists(st.tuples(st.sampled_from(["user", "assistant"]), _texts), max_size=5),
       slots=st.lists(_texts, max_size=3), message=_texts, extra=_texts)
def test_property_the_labelled_pieces_are_the_request_and_name_every_row(rows, slots, message, extra):
    turns = [_turn(i + 10, role, text) for i, (role, text) in enumerate(rows)]
    pinned = [_turn(i + 1, "system", text, pin_label=f"s{i}", slot_pos=i) for i, text in enumerate(slots)]
    content = build_user_content(pinned, turns, message or "m", [escape_delimiters(extra)])
    body = _body(content)
    blocks = label_request(body)
    assert [b.detail["row"] for b in blocks if b.origin == "row"] == [t.id for t in turns]
    assert [b.detail["slot"] for b in blocks if b.origin == "slot"] == [t.pin_label for t in pinned]
    for j, sent in enumerate(content):
        pieces = sorted((b for b in blocks if b.part == "messages" and b.block == j), key=lambda b: b.start)
        assert "".join(b.text for b in pieces) == sent["text"]
    assert json.loads(next(b.text for b in blocks if b.part == "tools")) == body["tools"][0]


def test_diff_names_what_changed_between_two_calls():
    one = label_request(_body(build_user_content([], [_turn(2, "user", "hi")], "first")))
    two = label_request(_body(build_user_content([], [_turn(2, "user", "hi"), _turn(3, "assistant", "yo")], "second")))
    changes = [(sign, b.label) for sign, b in diff_blocks(one, two)]
    assert ("+", "row 3 (assistant)") in changes and ("~", "your message") in changes
    assert all(label != "row 2 (user)" for _, label in changes)


def test_cost_is_an_estimate_for_known_models_only():
    usage = {"input_tokens": 1_000_000, "output_tokens": 1_000_000}
    assert cost_usd("claude-sonnet-4-6", usage) == 18.0
    assert cost_usd("claude-scripted", usage) is None and cost_usd("claude-sonnet-4-6", {}) is None


def test_cache_reads_and_writes_are_priced_by_their_multipliers():
    reads = {"cache_read_input_tokens": 1_000_000}
    writes_5m = {"cache_creation_input_tokens": 1_000_000}
    writes_1h = {"cache_creation_input_tokens": 1_000_000,
                 "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 1_000_000}}
    assert cost_usd("claude-sonnet-4-6", reads) == 0.3
    assert cost_usd("claude-sonnet-4-6", writes_5m) == 3.75
    assert cost_usd("claude-sonnet-4-6", writes_1h) == 6.0
    assert cost_usd("claude-opus-4-1-x", {"input_tokens": 1_000_000}) == 15.0
    assert cost_usd("claude-opus-4-5", {"input_tokens": 1_000_000}) == 5.0


_json = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
                         st.sampled_from(["type", "text", "role", "content", "name", "system", "messages", "tools"]),
                         inner, max_size=4), max_leaves=12)


@settings(max_examples=200, deadline=None)
@given(body=st.dictionaries(st.sampled_from(["system", "messages", "tools", "model", "stream"]), _json, max_size=5))
def test_property_a_body_of_any_shape_is_labelled_without_failing(body):
    for block in label_request(body):
        assert isinstance(block.text, str) and block.tokens >= 0


def test_the_text_view_shows_each_breakpoint_mnemaras_and_the_clis():
    from mnemara.context.request_view import format_call

    system = [{"type": "text", "text": SDK_IDENTITY + "\n\nrole", "cache_control": {"type": "ephemeral"}}]
    content = build_user_content([], [_turn(2, "user", "hi"), _turn(3, "assistant", "yo")], "next", ttl="1h")
    content[-1]["cache_control"] = {"type": "ephemeral"}  # as the CLI marks the last block
    blocks = label_request(_body(content, system))
    assert [(b.label, b.breakpoint) for b in blocks if b.breakpoint] == [
        ("role doc (system prompt)", "5m"), ("row 3 (assistant)", "1h"), ("your message", "5m")]
    report = {"call": 1, "at": "now", "model": "m", "bytes": 1, "status": 200, "usage": {}, "cost_usd_estimate": None,
              "tokens_by_origin": {}, "blocks": [b.to_dict() for b in blocks]}
    text = format_call(report)
    assert "row 3 (assistant) · ~" in text and "cache breakpoint (1h)" in text
    assert text.count("· cache breakpoint") == 3


@settings(max_examples=300, deadline=None)
@given(text=st.lists(st.sampled_from(["a", "\n", ">", '"', "<turn", "\n</turn>", "</turn>", ' by="agent"',
                                      '<turn id="7" role="user">\n', '<turn id="8" role="x" a=">\n',
                                      '<slot pos="0" label="p" role="user">\n', "\n</slot>"]), max_size=16).map("".join))
def test_property_rows_and_slots_are_cut_where_a_lazy_regex_would_cut_them(text):
    """The labeller finds elements with str.find (speed); they must be exactly a lazy regex's matches."""
    import re

    from mnemara.context.request_view import _SLOT_OPEN, _TURN_OPEN, _elements

    for opening, closing in ((_TURN_OPEN, "\n</turn>"), (_SLOT_OPEN, "\n</slot>")):
        lazy = re.compile(opening.pattern + ".*?" + re.escape(closing), re.S)
        assert [(s, e, h.groups()) for s, e, h in _elements(text, opening, closing)] == \
               [(m.start(), m.end(), m.groups()) for m in lazy.finditer(text)]
