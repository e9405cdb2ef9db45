"""The agent's window tools, the spec's tool names and 0.18 policy names, through the real Claude CLI."""
from __future__ import annotations

import json

import pytest

from mnemara.core import events as ev
from mnemara.core.config import ToolPolicy, update_config
from mnemara.testing.scripted_api import reply, tool_use

pytestmark = pytest.mark.e2e
T = "mcp__mnemara__"


def _results(result: ev.TurnResult) -> list[dict]:
    return [json.loads(e.text) for e in result.events if isinstance(e, ev.ToolResult)]


def turn(api, session, message: str, *replies) -> ev.TurnResult:
    """One turn of the shared session; the API forgets earlier turns first."""
    api.clear()
    api.push(*replies)
    return session.turn(message)


def _the_agent_reads_segments_pins_evicts_tunes_and_logs_its_own_window(scripted_api, session) -> None:
    ids = [session.store.append("user" if i % 2 == 0 else "assistant", f"row {i} " + "words " * 40) for i in range(6)]
    update_config(session.instance.config_path, agent_max_window_turns=40)
    calls = [
        ("inspect_context", {}),
        ("list_window", {"limit": 10}),
        ("mark_segment", {"name": "detour", "from_row": ids[3], "to_row": ids[5]}),
        ("pin_row", {"row_id": ids[0], "label": "brief"}),
        ("evict_ids", {"row_ids": [ids[0], ids[1]]}),  # row 0 is pinned: only row 1 goes
        ("evict_since", {"segment": "detour"}),
        ("list_pinned", {}),
        ("unpin_row", {"row_id": ids[0]}),
        ("evict_last", {"n": 1}),
        ("evict_older_than", {"older_than": "1d"}),
        ("evict_thinking_blocks", {"keep_recent": 1}),
        ("tune_window", {"max_window_turns": 30}),
        ("log_choice", {"decision": "drop the detour", "rationale": "it was a dead end"}),
    ]
    result = turn(scripted_api, session, "tidy your context",
                  reply(*[tool_use(T + name, args) for name, args in calls]), reply("tidied"))
    out = dict(zip([name for name, _ in calls], _results(result)))
    assert all(r["ok"] for r in out.values()), out
    assert {p["name"] for p in out["inspect_context"]["parts"]} >= {"role doc", "pinned rows", "working window"}
    assert out["inspect_context"]["rows"]["live"] == 7  # six rows and the user's message
    assert [r["id"] for r in out["list_window"]["rows"]][:6] == ids
    assert out["mark_segment"]["row_ids"] == ids[3:6]
    assert out["evict_ids"]["row_ids"] == [ids[1]] and out["evict_ids"]["tokens_freed"] > 0
    assert ids[3] in out["evict_since"]["row_ids"] and ids[0] not in out["evict_since"]["row_ids"]
    assert [r["label"] for r in out["list_pinned"]["rows"]] == ["brief"]
    assert out["unpin_row"]["unpinned"] == [ids[0]]
    assert out["tune_window"]["after"] == {"max_window_turns": 30}
    assert session.store.get(ids[1]).evicted and not session.store.get(ids[0]).pinned
    choice = json.loads((session.instance.root / "choices.jsonl").read_text().splitlines()[-1])
    assert choice["decision"] == "drop the detour" and choice["rationale"] == "it was a dead end"
    from mnemara.core.config import Config

    assert Config.load(session.instance.config_path).max_window_turns == 30


def _spec_names_are_accepted_and_unknown_parameters_reach_the_model_as_errors(scripted_api, session,
                                                                                isolated_home) -> None:
    source = isolated_home / "mod.py"
    source.write_text('def greet(name):\n    """Say hi."""\n    return "hi " + name\n')
    calls = [
        tool_use(T + "write_memory", {"text": "Fridays are risky", "category": "insight",
                                      "payload": {"evidence": "3 incidents", "applies_to": ["deploy pipeline"]}}),
        tool_use(T + "graph_add_node", {"label": "Service", "id": "svc:billing", "properties_json": '{"port": 5433}'}),
        tool_use(T + "read_skeleton", {"file_path": str(source)}),
        tool_use(T + "rag_query", {"question": "fridays", "top_k": 3}),
    ]
    texts = [e.text for e in turn(scripted_api, session, "remember", reply(*calls), reply("ok")).events
             if isinstance(e, ev.ToolResult)]
    memory, node, skeleton = (json.loads(t) for t in texts[:3])
    assert memory["ok"] and node["ok"] and skeleton["ok"] and "def greet(name)" in skeleton["skeleton"]
    results = scripted_api.last.tool_results()
    assert results[3].get("is_error") and "'top_k'" in json.dumps(results[3])  # the model sees the refusal
    note = next(session.instance.memory_dir.glob("*.md")).read_text()
    assert "Fridays are risky" in note and "- evidence: 3 incidents" in note
    graph = session.tool_context.state  # the session's graph handle answers the edge the payload made
    from mnemara.memory.surfaces import backends_for

    with backends_for(session.instance, session.config, graph).using_graph() as g:
        linked = g.neighbors("entity:deploy pipeline", 1, "applies_to")["neighbors"]
        assert [n["node"]["label"] for n in linked] == ["memory_atom"]
        assert g.get_node("svc:billing")["properties"] == {"port": 5433}


def _018_policy_names_govern_our_tools_with_a_notice(scripted_api, session) -> None:
    cfg = session.config
    update_config(session.instance.config_path,
                  allowed_tools=[*[p.model_dump() for p in cfg.allowed_tools],
                                 ToolPolicy(tool="GraphAddNode", mode="deny").model_dump()])
    result = turn(scripted_api, session, "add a node", reply(tool_use(T + "graph_add_node", {"label": "X"})),
                  reply("denied"))
    notices = [e.message for e in result.events if isinstance(e, ev.Notice)]
    assert any("GraphAddNode" in n and "Mnemara 0.18 name" in n and "graph_add_node" in n for n in notices), notices
    assert not any("no such tool" in n for n in notices)
    assert scripted_api.last.new_tool_results()[-1].get("is_error")


def test_window_tools_spec_names_and_018_policy_names_through_one_cli(scripted_api, session_factory, isolated_home):
    """One session (one CLI process, turn after turn; read_skeleton is enabled before the first turn
    since the tool list is fixed per process): the agent tidies its own window, the spec's tool
    names and arguments are accepted and an unknown parameter reaches the model as an error, then
    a 0.18 policy name (GraphAddNode=deny) governs graph_add_node with a notice."""
    session = session_factory()
    update_config(session.instance.config_path, read_skeleton_enabled=True)
    _the_agent_reads_segments_pins_evicts_tunes_and_logs_its_own_window(scripted_api, session)
    _spec_names_are_accepted_and_unknown_parameters_reach_the_model_as_errors(scripted_api, session, isolated_home)
    _018_policy_names_govern_our_tools_with_a_notice(scripted_api, session)
