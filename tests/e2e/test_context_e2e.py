"""Context discipline end to end: AgentSession -> real SDK -> real Claude CLI -> scripted Messages API.

A Claude CLI start costs about a second of CPU, so the behaviours share one session: each helper
below is one behaviour (a failure's traceback names it), run as consecutive turns through the
CLI the session keeps while its options stay the same. Only the file-stat manifest changes the
system prompt, and so starts a new CLI per turn it changes.
"""
from __future__ import annotations

import json

import pytest

from mnemara.core import events as ev
from mnemara.commands import dispatch
from mnemara.core.config import update_config
from tests.sample_session import fill_store
from mnemara.testing.scripted_api import reply, thinking, tool_use

pytestmark = pytest.mark.e2e


def _our_blocks(request) -> list[str]:
    return [b["text"] for b in request.blocks("user") if b.get("type") == "text"]


def _history(request) -> str:
    """The window as sent: the blocks from ``<conversation_history>`` to its closing tag (a block per row)."""
    text = request.user_text()
    return text[text.index("<conversation_history>"):text.index("</conversation_history>")]


def _tool_result_payload(result: ev.TurnResult) -> dict:
    texts = [e.text for e in result.events if isinstance(e, ev.ToolResult)]
    assert len(texts) == 1, texts
    return json.loads(texts[0])


def _compress_smart_injects_an_audit_turn_the_agent_acts_on(api, session) -> None:
    sent = len(api.message_requests())
    res = dispatch(session, "/compress smart")
    assert res.ok and res.action == "send"
    api.push(
        reply(thinking("rows 2 and 4 carry old reasoning"),
              tool_use("mcp__mnemara__evict_thinking_blocks", {"row_ids": [2, 4]})),
        reply("KEEP: 1, 3\nEVICTED: thinking of 2 and 4\nASK: nothing"),
    )
    result = session.turn(res.payload.text)
    first = api.message_requests()[sent]
    assert first.user_text().endswith(res.payload.text)
    assert "[MNEMARA CONTEXT AUDIT]" in first.user_text()
    assert _tool_result_payload(result)["row_ids"] == [2, 4]
    assert not any(b["type"] == "thinking" for i in (2, 4) for b in session.store.get(i).blocks)
    assert "EVICTED" in result.text


def _model_evicts_its_own_write_pairs_and_thinking(api, session) -> None:
    before = {t.id: t.tokens for t in session.store.live_rows()}
    api.push(
        reply(tool_use("mcp__mnemara__evict_write_pairs", {"row_ids": [2]})),
        reply(tool_use("mcp__mnemara__evict_thinking_blocks", {})),
        reply(tool_use("mcp__mnemara__evict_tool_use_blocks", {"row_ids": [4]})),
        reply("Window trimmed."),
    )
    result = session.turn("you are near the cap: compact your window")
    payloads = [json.loads(e.text) for e in result.events if isinstance(e, ev.ToolResult)]
    assert [p["strategy"] for p in payloads] == ["evict_write_pairs", "evict_thinking_blocks", "evict_tool_use_blocks"]
    assert all(p["ok"] and p["tokens_freed"] > 0 for p in payloads)
    assert payloads[0]["row_ids"] == [2]
    row2 = session.store.get(2)
    edit = next(b for b in row2.blocks if b.get("type") == "tool_use" and b["name"] == "Edit")
    assert edit["input"]["evicted"] is True and set(edit["input"]) == {"file_path", "evicted"}
    assert not any(b["type"] == "thinking" for t in session.store.live_rows() for b in t.blocks if t.id in before)
    assert sum(session.store.get(i).tokens for i in before) < sum(before.values())
    session.turn("continue")
    history = _history(api.last)
    assert '"evicted": true' in history and "[thinking]" not in history


def _model_upserts_a_slot_and_the_next_request_shows_it_after_the_cached_window(api, session) -> None:
    session.store.append("user", "earlier question")
    sent = len(api.message_requests())
    api.push(
        reply(tool_use("mcp__mnemara__upsert_slot", {"label": "health", "role": "system", "content": "HP: 73 / 100"})),
        reply("Slot set."),
    )
    first = session.turn("track my health")
    payload = _tool_result_payload(first)
    assert payload["ok"] and payload["updated"] is False
    assert "mcp__mnemara__upsert_slot" in api.message_requests()[sent].tool_names()

    api.push(
        reply(tool_use("mcp__mnemara__upsert_slot", {"label": "health", "role": "system", "content": "HP: 41 / 100"})),
        reply("Updated."),
    )
    second = session.turn("I got hit")
    assert _tool_result_payload(second)["row_id"] == payload["row_id"]  # same row, updated in place

    session.turn("status?")
    blocks = _our_blocks(api.last)
    # this turn's slots: the last sent (a continued conversation also holds the earlier turns' messages)
    at, slots = [(k, b) for k, b in enumerate(blocks) if b.startswith("<pinned_slots>")][-1]
    history = _history(api.last)
    assert blocks.index("</conversation_history>") < at < len(blocks) - 1  # slots change: after
    assert 'label="health"' in slots and "HP: 41 / 100" in slots and "HP: 73" not in slots
    assert "earlier question" in history
    assert [t.pin_label for t in session.store.pinned()] == ["health"]


def _read_skeleton_not_offered_by_default(api, session) -> None:
    requests = api.message_requests()
    assert requests and not any("mcp__mnemara__read_skeleton" in r.tool_names() for r in requests)
    assert all("mcp__mnemara__upsert_slot" in r.tool_names() for r in requests)


def _auto_evict_after_write_and_repeated_reads(api, session, home) -> None:
    target = home / "notes.py"
    target.write_text("A = 1\n" * 200, encoding="utf-8")
    update_config(session.instance.config_path, auto_evict_after_write=True, compress_repeated_reads=True,
                  preserve_compressed_reads=True)
    api.push(reply(tool_use("Read", {"file_path": str(target)})), reply("read once"))
    first = session.turn("read notes.py")
    api.push(reply(tool_use("Read", {"file_path": str(target)})), reply("read twice"))
    second = session.turn("read it again")
    first_row = session.store.get(first.done.assistant_row_id)
    stub = next(b for b in first_row.blocks if b["type"] == "tool_result")["content"]
    assert "unchanged" in stub and str(second.done.assistant_row_id) in stub
    assert first_row.protected
    full = next(b for b in session.store.get(second.done.assistant_row_id).blocks if b["type"] == "tool_result")
    assert "A = 1" in json.dumps(full)

    body = "B = 2\n" * 300
    api.push(reply(tool_use("Read", {"file_path": str(target)})),  # the CLI wants a Read before a Write
             reply(tool_use("Write", {"file_path": str(target), "content": body})), reply("written"))
    third = session.turn("rewrite it")
    assert target.read_text(encoding="utf-8") == body  # the real CLI wrote the file
    row = session.store.get(third.done.assistant_row_id)
    uses = [b for b in row.blocks if b["type"] == "tool_use"]
    assert [b["name"] for b in uses] == ["Read", "Write"]
    assert all(b["input"] == {"file_path": str(target), "evicted": True} for b in uses)
    assert "B = 2" not in json.dumps(row.blocks)
    reread = next(b for b in session.store.get(second.done.assistant_row_id).blocks if b["type"] == "tool_use")
    assert reread["input"]["evicted"] is True  # the earlier Read of the same path is stubbed too
    assert any(e.get("event") == "eviction" and e.get("by") == "auto"
               for e in map(json.loads, session.instance.debug_log_path.read_text().splitlines()))
    update_config(session.instance.config_path, auto_evict_after_write=False, compress_repeated_reads=False,
                  preserve_compressed_reads=False)


def _manifest_off_by_default(api, session, watched, doomed) -> None:
    assert not session.config.file_stat_manifest_enabled  # as Instance.create wrote it; this test never set it
    sent = len(api.message_requests())
    api.push(
        reply(tool_use("Read", {"file_path": str(watched)}), tool_use("Read", {"file_path": str(doomed)})),
        reply("Read both."),
    )
    session.turn("read the files")
    session.turn("anything new?")
    assert not any("Files read this session" in r.system_text + r.user_text() for r in api.message_requests()[sent:])


def _manifest_lists_files_read_and_read_skeleton_is_offered_once_enabled(api, session, watched, doomed, src) -> None:
    update_config(session.instance.config_path, file_stat_manifest_enabled=True, read_skeleton_enabled=True)
    api.push(reply(tool_use("mcp__mnemara__read_skeleton", {"path": str(src)})), reply("done"))
    result = session.turn("skim mod.py")
    request = api.message_requests()[-2]
    manifest = request.user_text().split("</conversation_history>")[1]  # after the cached window, not in the system
    assert "## Files read this session" in manifest and "Files read this session" not in request.system_text
    assert f"| {watched} | 12 B |" in manifest and "| fresh |" in manifest
    assert "mcp__mnemara__read_skeleton" in request.tool_names()
    payload = _tool_result_payload(result)
    assert payload["ok"] and 'def area(r: float) -> float:\n    """Circle area."""' in payload["skeleton"]
    assert "3.14159" not in payload["skeleton"]


def _manifest_flags_stale_and_gone(api, session, watched, doomed) -> None:
    watched.write_text("print('v2 changed')\n", encoding="utf-8")
    doomed.unlink()
    session.turn("and now?")
    rows = {line.split(" | ")[0].lstrip("| "): line for line in api.last.user_text().splitlines() if line.startswith("| /")}
    assert "| STALE |" in rows[str(watched)] and "| gone |" in rows[str(doomed)]


def test_window_edits_slots_auto_eviction_manifest_and_read_skeleton_through_kept_clis(scripted_api, session_factory,
                                                                                        isolated_home):
    """The model edits its window (an audit turn, evictions, a slot), the opt-in automatic
    evictions run, and the manifest and read_skeleton stay off until enabled: one CLI serves
    all of that; turning read_skeleton on changes the tools, so the first turn after it gets a
    new CLI (the manifest rides in the message, after the cached window: it changes no option)."""
    watched = isolated_home / "watched.py"
    watched.write_text("print('v1')\n", encoding="utf-8")
    doomed = isolated_home / "doomed.txt"
    doomed.write_text("bye\n", encoding="utf-8")
    src = isolated_home / "mod.py"
    src.write_text('def area(r: float) -> float:\n    """Circle area."""\n    return 3.14159 * r * r\n', encoding="utf-8")
    session = session_factory(permission_prompt=lambda req: "y")
    fill_store(session.store, turns=3)  # rows 1..6; row 2 holds an Edit of a file Read before
    _compress_smart_injects_an_audit_turn_the_agent_acts_on(scripted_api, session)
    _model_evicts_its_own_write_pairs_and_thinking(scripted_api, session)
    _model_upserts_a_slot_and_the_next_request_shows_it_after_the_cached_window(scripted_api, session)
    _read_skeleton_not_offered_by_default(scripted_api, session)
    _auto_evict_after_write_and_repeated_reads(scripted_api, session, isolated_home)
    _manifest_off_by_default(scripted_api, session, watched, doomed)
    assert session.stats == {"spare_used": 0, "fresh_started": 1, "reused": 10}, "a turn did not get the kept CLI"
    _manifest_lists_files_read_and_read_skeleton_is_offered_once_enabled(scripted_api, session, watched, doomed, src)
    _manifest_flags_stale_and_gone(scripted_api, session, watched, doomed)
    assert session.stats == {"spare_used": 0, "fresh_started": 2, "reused": 11}


def test_context_commands_through_the_piped_repl(scripted_api, mnemara_home, tmp_path):
    from mnemara.core.config import Config
    from mnemara.store.instance import Instance
    from mnemara.store.turns import TurnStore
    from tests.conftest import run_cli

    inst = Instance.create("ctxrepl")
    with TurnStore(inst.turns_path) as store:
        fill_store(store, turns=2)
        before = [t.blocks for t in store.history()]
    out = tmp_path / "exported.md"
    scripted_api.push(
        reply(tool_use("mcp__mnemara__upsert_slot", {"label": "deploy", "role": "system", "content": "DEPLOY: green"})),
        reply("slot saved"),
        reply(tool_use("mcp__mnemara__evict_thinking_blocks", {"row_ids": [2, 4]})),
        reply("AUDIT DONE"),
    )
    script = "\n".join([
        "/evict foo", "/tokens -5", "/compress 0",
        "/tokens 500k", "remember the deploy state", "/compress smart", f"/export {out}", "/evict", "/quit",
    ]) + "\n"
    proc = run_cli("run", "--instance", "ctxrepl", "--no-tui", input=script, timeout=180)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("usage: /") == 3
    assert "slot saved" in proc.stdout and "AUDIT DONE" in proc.stdout and f"to {out}" in proc.stdout
    requests = scripted_api.message_requests()
    assert "[MNEMARA CONTEXT AUDIT]" in requests[2].user_text()
    assert "DEPLOY: green" in requests[2].user_text().split("</conversation_history>")[1]  # slot after the window
    assert Config.load(inst.config_path).max_window_tokens == 500_000
    with TurnStore(inst.turns_path) as store:
        rows = store.history()
        assert [t.blocks for t in rows[:4]] != before
        assert not any(b["type"] == "thinking" for i in (2, 4) for b in store.get(i).blocks)
        assert [t.pin_label for t in store.pinned()] == ["deploy"]
    assert "DEPLOY: green" in out.read_text(encoding="utf-8")
