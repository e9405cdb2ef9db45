"""/import and migrate show every change in what the agent may do (issue 25, item 3).

The difference is computed from the permission gate's answers, not from a list of config keys,
so the property test below asks an independent gate, for a wide set of tool names and inputs,
whether anything changed, and checks that every change is shown and asked.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mnemara.context import exchange
from mnemara.core.config import Config, McpServer, ToolPolicy
from mnemara.guard.gate import PermissionGate
from mnemara.store.instance import Instance
from mnemara.store.turns import TurnStore
from mnemara.tools import all_specs

OWN = "mcp__mnemara__"
POLICY_NAMES = ["Bash", "Read", "Write", "Edit", "WriteMemory", "GraphQuery", "GraphWrite", "GraphRead", "ReadSkeleton",
                "RagQuery", "GraphAddNode", "EvictThinking", "mcp__mnemara", "mcp__srv", "mcp__srv__fetch",
                f"{OWN}graph_query", f"{OWN}read_skeleton", "NoSuchTool"]
FLAGS = ["read_skeleton_enabled", "graph_enabled", "rag_enabled", "file_tool_home_only"]

policies = st.lists(st.builds(ToolPolicy, tool=st.sampled_from(POLICY_NAMES), mode=st.sampled_from(["allow", "ask", "deny"]),
                              allowed_patterns=st.sampled_from([[], ["^ls$"], [".*"]])),
                    max_size=5, unique_by=lambda p: p.tool)
servers = st.lists(st.sampled_from(["srv", "other"]), unique=True, max_size=2)


@st.composite
def configs(draw: st.DrawFn) -> Config:
    config = Config(allowed_tools=draw(policies),
                    mcp_servers=[McpServer(name=name, command="/bin/true") for name in draw(servers)],
                    model=draw(st.sampled_from(["claude-sonnet-4-6", "claude-opus-4-7"])))
    for flag in FLAGS:
        setattr(config, flag, draw(st.booleans()))
    return config


def _universe() -> list[tuple[str, dict[str, Any]]]:
    """Tool calls the test asks about, chosen here and not by the code under test."""
    calls: list[tuple[str, dict[str, Any]]] = [("Bash", {"command": "true"}), ("Bash", {"command": "ls"})]
    for tool, key in (("Read", "file_path"), ("Write", "file_path"), ("Edit", "file_path")):
        calls += [(tool, {key: "~/notes.txt"}), (tool, {key: "/etc/hosts"})]
    for spec in all_specs():
        calls.append((spec.qualified_name, {}))
        if spec.file_args:
            calls.append((spec.qualified_name, {spec.file_args[0]: "~/x.py"}))
    calls += [(f"{OWN}graph_query", {"cypher": "RETURN 1", "write": True}),
              ("mcp__srv__fetch", {}), ("mcp__srv__other_tool", {}), ("mcp__other__tool", {}), ("mcp__third__t", {})]
    return calls


UNIVERSE = _universe()


def _answers(config: Config, inst: Instance) -> list[str]:
    gate = PermissionGate(config, inst)
    enabled = {spec.qualified_name: spec.enabled(config) for spec in all_specs()}
    return ["off" if enabled.get(name) is False else gate.decide(name, args).verdict for name, args in UNIVERSE]


def _shown(name: str, lines: list[str], keys: list[str]) -> bool:
    """Whether ``lines`` show a change for ``name``: its answer, or a pattern of a policy governing it
    (a pattern allows some calls only, so the probe call may not show it)."""
    if any(line.startswith(f"  ~ {name}") for line in lines):
        return True
    if any(line[4:].startswith(f"allowed_patterns[{key}]") for line in lines for key in keys):
        return True
    if name.startswith("mcp__") and not name.startswith(OWN):  # any tool of a server: its server-wide probe
        server = name.split("__")[1]
        return any(line.startswith(f"  ~ mcp__{server}__") for line in lines) or \
            any("mcp_servers" in line for line in lines)
    return False


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mine=configs(), theirs=configs())
def test_every_change_in_any_tools_answer_is_shown_and_asked(mine: Config, theirs: Config, tmp_path: Path) -> None:
    inst = Instance.at(tmp_path / "inst")
    mine.save(inst.config_path)
    before, after = _answers(mine, inst), _answers(theirs, inst)
    changed = sorted({name for (name, _), old, new in zip(UNIVERSE, before, after) if old != new})
    lines = exchange.permission_changes(mine, theirs, inst.root)
    gate = PermissionGate(mine, inst)
    for name in changed:
        assert _shown(name, lines, gate._keys(name)), (name, lines)  # the policy keys that govern the tool
    export = tmp_path / "export.md"
    export.write_text(exchange.export_markdown([], theirs, "src"), encoding="utf-8")
    with TurnStore(inst.turns_path) as store:
        try:
            exchange.import_export(export, store, inst.config_path, inst.root)
            asked = False
        except exchange.PermissionChangeNeedsConsent:
            asked = True
    if changed or mine.model != theirs.model:
        assert asked and Config.load(inst.config_path).to_dict() == mine.to_dict(), changed


def test_the_reported_case_is_listed(tmp_path: Path) -> None:
    """The attack pass: mcp__mnemara and Read on ask; the export adds ReadSkeleton, GraphQuery and 0.18's
    GraphAddNode on allow and turns read_skeleton on. Nothing was listed."""
    inst = Instance.at(tmp_path / "inst")
    mine = Config(allowed_tools=[ToolPolicy(tool="mcp__mnemara", mode="ask"), ToolPolicy(tool="Read", mode="ask")])
    theirs = Config(allowed_tools=[*mine.allowed_tools, ToolPolicy(tool="ReadSkeleton", mode="allow"),
                                   ToolPolicy(tool="GraphQuery", mode="allow"), ToolPolicy(tool="GraphAddNode", mode="allow")],
                    read_skeleton_enabled=True, agent_max_window_turns=500, runtime_sentinel=False,
                    replay_policy_path="/tmp/policy.md", model="claude-opus-4-7")
    mine.runtime_sentinel = True
    lines = exchange.permission_changes(mine, theirs, inst.root)
    text = "\n".join(lines)
    assert f"~ {OWN}read_skeleton [inside $HOME]: off -> allow" in text
    assert f"~ {OWN}graph_query [read]: ask -> allow" in text
    assert f"~ {OWN}graph_add_node: ask -> allow" in text
    for field in ("read_skeleton_enabled", "agent_max_window_turns", "runtime_sentinel", "replay_policy_path", "model"):
        assert f"+ {field}:" in text, field
