"""Unit tests of the permission gate (the domain; end-to-end tests live in test_permissions_e2e)."""
from __future__ import annotations

import asyncio
import json
import os
import re
from pathlib import Path

import pytest

from mnemara.core.config import Config, ToolPolicy, McpServer
from mnemara.core.debuglog import read_events
from mnemara.store.instance import Instance
from mnemara.guard.gate import (
    Decision,
    PermissionGate,
    PermissionRequest,
    always_pattern,
    is_inside_home,
    load_permissions,
)


@pytest.fixture
def inst(mnemara_home: Path) -> Instance:
    return Instance.create("perm")


def gate_for(inst: Instance, prompt=None, **cfg) -> PermissionGate:
    return PermissionGate(Config(**cfg), inst, prompt=prompt)


def answering(*answers):
    """A prompt that records its requests and answers from ``answers`` in order."""
    seen: list[PermissionRequest] = []
    queue = list(answers)

    def prompt(req: PermissionRequest):
        seen.append(req)
        return queue.pop(0) if queue else None

    prompt.seen = seen
    return prompt


# -- defaults and policy naming ------------------------------------------------------

def test_spec_defaults(inst, isolated_home):
    gate = gate_for(inst)
    inside = str(isolated_home / "a.txt")
    assert gate.decide("Bash", {"command": "echo hi"}).verdict == "ask"
    assert gate.decide("Read", {"file_path": inside}).verdict == "allow"
    assert gate.decide("Write", {"file_path": inside, "content": "x"}).verdict == "ask"
    assert gate.decide("Edit", {"file_path": inside}).verdict == "ask"
    assert gate.decide("MultiEdit", {"file_path": inside}).verdict == "ask"


def test_defaults_hold_when_config_has_no_policies(inst, isolated_home):
    gate = gate_for(inst, allowed_tools=[])
    assert gate.decide("Bash", {"command": "ls"}).verdict == "ask"
    assert gate.decide("Read", {"file_path": str(isolated_home / "x")}).verdict == "allow"


def test_write_memory_policy_maps_to_mcp_name(inst):
    # WriteMemory=deny in spec naming governs the model-facing mcp__mnemara__write_memory
    gate = gate_for(inst, allowed_tools=[ToolPolicy(tool="WriteMemory", mode="deny")])
    d = gate.decide("mcp__mnemara__write_memory", {"text": "x"})
    assert d.verdict == "deny" and "WriteMemory" in d.reason
    # and the model-facing name works as a policy name too
    gate = gate_for(inst, allowed_tools=[ToolPolicy(tool="mcp__mnemara__write_memory", mode="ask")])
    assert gate.decide("mcp__mnemara__write_memory", {"text": "x"}).verdict == "ask"
    assert gate.startup_problems == []
    # the exact model-facing entry beats the spec-named default entry
    gate = gate_for(inst, allowed_tools=[ToolPolicy(tool="WriteMemory", mode="allow"),
                                         ToolPolicy(tool="mcp__mnemara__write_memory", mode="deny")])
    assert gate.decide("mcp__mnemara__write_memory", {"text": "x"}).verdict == "deny"


def test_other_inprocess_tools_default_allow(inst):
    gate = gate_for(inst)
    assert gate.decide("mcp__mnemara__wiki_read", {"path": "x"}).verdict == "allow"


def test_policy_by_model_facing_name(inst):
    gate = gate_for(inst, allowed_tools=[ToolPolicy(tool="mcp__mnemara__wiki_write", mode="ask")])
    assert gate.decide("mcp__mnemara__wiki_write", {"path": "p"}).verdict == "ask"
    assert gate.decide("mcp__mnemara__wiki_read", {"path": "p"}).verdict == "allow"


def test_external_mcp_namespace(inst):
    gate = gate_for(
        inst,
        mcp_servers=[McpServer(name="fetch", command="x")],
        allowed_tools=[ToolPolicy(tool="mcp__fetch__dangerous", mode="deny")],
    )
    assert gate.decide("mcp__fetch__fetch", {"url": "u"}).verdict == "allow"
    assert gate.decide("mcp__fetch__dangerous", {}).verdict == "deny"
    # a server that is not configured is unknown: ask
    assert gate.decide("mcp__other__thing", {}).verdict == "ask"


def test_server_wide_policy(inst):
    gate = gate_for(inst, mcp_servers=[McpServer(name="fetch", command="x")],
                    allowed_tools=[ToolPolicy(tool="mcp__fetch", mode="ask")])
    assert gate.decide("mcp__fetch__fetch", {"url": "u"}).verdict == "ask"


def test_a_server_whose_name_holds_a_double_underscore_is_found_and_its_deny_holds(inst):
    """Audit 4: tools of a server named ``my__srv`` (a valid name) were taken for server ``my``: a
    server-wide deny of ``mcp__my__srv`` became an ask (the CLI names them ``mcp__my__srv__<tool>``)."""
    servers = [McpServer(name="my__srv", command="x"), McpServer(name="my", command="y")]
    gate = gate_for(inst, mcp_servers=servers, allowed_tools=[ToolPolicy(tool="mcp__my__srv", mode="deny")])
    decision = gate.decide("mcp__my__srv__echo", {"text": "x"})
    assert decision.verdict == "deny" and "mcp__my__srv=deny" in decision.reason, decision
    assert gate.decide("mcp__my__echo", {"text": "x"}).verdict == "allow"  # server "my" is not denied
    gate.set_config(Config(mcp_servers=servers))
    decision = gate.decide("mcp__my__srv__echo", {"text": "x"})
    assert decision.verdict == "allow" and "'my__srv'" in decision.reason, decision
    gate.set_config(Config(mcp_servers=servers, allowed_tools=[ToolPolicy(tool="mcp__my__srv", mode="ask")]))
    assert gate.decide("mcp__my__srv__echo", {"text": "x"}).verdict == "ask"


def test_unknown_tool_asks(inst):
    assert gate_for(inst).decide("Task", {"prompt": "x"}).verdict == "ask"


def test_deny_policy_beats_patterns_and_session(inst):
    gate = gate_for(inst, allowed_tools=[ToolPolicy(tool="Bash", mode="deny", allowed_patterns=["^ls$"])])
    gate.session_allowed.add("Bash")
    d = gate.decide("Bash", {"command": "ls"})
    assert d == Decision("deny", d.reason) and "denied" in d.reason


def test_config_patterns_allow_target(inst):
    gate = gate_for(inst, allowed_tools=[ToolPolicy(tool="Bash", mode="ask", allowed_patterns=[r"^git status$"])])
    assert gate.decide("Bash", {"command": "git status"}).verdict == "allow"
    assert gate.decide("Bash", {"command": "git status; rm -rf ~"}).verdict == "ask"


def test_decide_never_raises_on_odd_input(inst):
    gate = gate_for(inst)
    assert gate.decide("Bash", None).verdict == "ask"
    assert gate.decide("Bash", {"command": 5}).verdict == "ask"
    assert gate.decide("Read", {"file_path": 5}).verdict == "deny"
    assert gate.decide("Read", {}).verdict == "deny"


# -- home only -------------------------------------------------------------------------

def test_home_only_refuses_dotdot(inst, isolated_home, monkeypatch):
    monkeypatch.chdir(isolated_home)
    gate = gate_for(inst)
    d = gate.decide("Read", {"file_path": "../../etc/passwd"})
    assert d.verdict == "deny" and "outside $HOME" in d.reason
    events = [e for e in read_events(inst.debug_log_path) if e["event"] == "permission_home_only"]
    assert events and events[-1]["target"] == "../../etc/passwd"


def test_home_only_refuses_absolute_outside(inst):
    for tool in ("Read", "Write", "Edit"):
        assert gate_for(inst).decide(tool, {"file_path": "/etc/hostname"}).verdict == "deny"


def test_home_only_refuses_symlink_out(inst, isolated_home, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside")
    (outside / "secret").write_text("s")
    link = isolated_home / "link"
    link.symlink_to(outside)
    d = gate_for(inst).decide("Read", {"file_path": str(link / "secret")})
    assert d.verdict == "deny"
    # a not-yet-existing file under the link is outside too
    assert gate_for(inst).decide("Write", {"file_path": str(link / "new.txt")}).verdict == "deny"


def test_home_only_allows_inside_and_tilde(inst, isolated_home):
    assert gate_for(inst).decide("Read", {"file_path": "~/notes.txt"}).verdict == "allow"
    assert gate_for(inst).decide("Read", {"file_path": str(isolated_home / "a" / ".." / "b")}).verdict == "allow"


def test_home_prefix_is_not_inside(isolated_home):
    sibling = str(isolated_home) + "-evil/file"
    assert is_inside_home(sibling)[0] is False


def test_home_only_off_lets_ask_mode_decide(inst):
    gate = gate_for(inst, file_tool_home_only=False)
    assert gate.decide("Read", {"file_path": "/etc/hostname"}).verdict == "allow"
    assert gate.decide("Write", {"file_path": "/tmp/x"}).verdict == "ask"


def test_home_only_beats_allow_patterns(inst):
    gate = gate_for(inst, allowed_tools=[ToolPolicy(tool="Read", mode="allow", allowed_patterns=[".*"])])
    assert gate.decide("Read", {"file_path": "/etc/passwd"}).verdict == "deny"


def test_writes_to_own_permissions_always_ask(inst):
    gate = gate_for(inst, allowed_tools=[ToolPolicy(tool="Write", mode="allow")])
    gate.session_allowed.add("Write")
    assert gate.decide("Write", {"file_path": str(inst.permissions_path)}).verdict == "ask"
    assert gate.decide("Edit", {"file_path": str(inst.config_path)}).verdict == "ask"


def test_writes_to_a_sibling_instances_or_another_name_of_the_own_config_always_ask(inst, isolated_home):
    """Audit 4: with Write/Edit allowed, the agent could grant a sibling instance Bash=allow (its config.json
    next to ours) or rewrite its own config.json through a second name for the same file (a hard link; on a
    case-insensitive disk, CONFIG.JSON): only the exact path was recognised."""
    sibling = Instance.create("sibling")
    gate = gate_for(inst, allowed_tools=[ToolPolicy(tool="Write", mode="allow"), ToolPolicy(tool="Edit", mode="allow")])
    for path in (sibling.config_path, sibling.permissions_path):
        decision = gate.decide("Write", {"file_path": str(path)})
        assert decision.verdict == "ask" and "another instance's" in decision.reason, decision
    alias = isolated_home / "notes.json"
    os.link(inst.config_path, alias)
    decision = gate.decide("Edit", {"file_path": str(alias)})
    assert decision.verdict == "ask" and "this instance's own" in decision.reason, decision
    other = isolated_home / "config.json"  # a config.json that is no instance's: an ordinary file
    other.write_text("{}")
    assert gate.decide("Write", {"file_path": str(other)}).verdict == "allow"
    assert gate.decide("Write", {"file_path": str(sibling.root / "wiki" / "config.json")}).verdict == "allow"
    assert gate.decide("Read", {"file_path": str(sibling.config_path)}).verdict == "allow"


# -- answers ---------------------------------------------------------------------------

def test_answer_y_is_once(inst):
    prompt = answering("y")
    gate = gate_for(inst, prompt=prompt)
    assert asyncio.run(gate.ask("Bash", {"command": "echo hi"})) is True
    assert gate.decide("Bash", {"command": "echo hi"}).verdict == "ask"
    assert prompt.seen[0] == PermissionRequest("Bash", "Bash", "echo hi", {"command": "echo hi"})


@pytest.mark.parametrize("answer", ["n", None, "", "maybe", 3])
def test_answer_n_or_garbage_denies(inst, answer):
    gate = gate_for(inst, prompt=answering(answer))
    assert asyncio.run(gate.ask("Bash", {"command": "echo hi"})) is False


def test_no_prompt_denies(inst):
    gate = gate_for(inst)
    d = asyncio.run(gate.ask_decision("Bash", {"command": "echo hi"}))
    assert d.verdict == "deny" and "no one can be asked" in d.reason


def test_prompt_eof_and_exceptions_deny(inst):
    def eof(_req):
        raise EOFError

    def boom(_req):
        raise RuntimeError("ui broke")

    assert asyncio.run(gate_for(inst, prompt=eof).ask("Bash", {"command": "x"})) is False
    assert asyncio.run(gate_for(inst, prompt=boom).ask("Bash", {"command": "x"})) is False


def test_async_prompt(inst):
    async def prompt(_req):
        await asyncio.sleep(0)
        return "y"

    assert asyncio.run(gate_for(inst, prompt=prompt).ask("Bash", {"command": "x"})) is True


def test_answer_a_persists_exact_target(inst):
    gate = gate_for(inst, prompt=answering("a"))
    cmd = "grep -r 'a.b' . | wc -l"
    assert asyncio.run(gate.ask("Bash", {"command": cmd})) is True
    data = json.loads(inst.permissions_path.read_text())
    [pattern] = data["allowed_patterns"]["Bash"]
    assert re.fullmatch(pattern, cmd) and not re.search(pattern, cmd + "; rm -rf ~")
    assert not re.search(pattern, "grep -r 'aXb' . | wc -l")
    # the same gate and a fresh gate (next session) both allow it unprompted
    assert gate.decide("Bash", {"command": cmd}).verdict == "allow"
    assert gate_for(inst).decide("Bash", {"command": cmd}).verdict == "allow"
    assert gate_for(inst).decide("Bash", {"command": cmd + " "}).verdict == "ask"


def test_answer_a_keeps_other_entries(inst):
    inst.permissions_path.write_text(json.dumps({"allowed_patterns": {"Write": ["^x$"]}, "note": "mine"}))
    gate = gate_for(inst, prompt=answering("a"))
    asyncio.run(gate.ask("Bash", {"command": "ls"}))
    data = json.loads(inst.permissions_path.read_text())
    assert data["note"] == "mine" and data["allowed_patterns"]["Write"] == ["^x$"]
    assert data["allowed_patterns"]["Bash"] == [always_pattern("ls")]


def test_answer_a_on_malformed_file_allows_once_and_keeps_file(inst):
    inst.permissions_path.write_text("{not json")
    gate = gate_for(inst, prompt=answering("a"))
    d = asyncio.run(gate.ask_decision("Bash", {"command": "ls"}))
    assert d.verdict == "allow" and "could not save" in d.reason
    assert inst.permissions_path.read_text() == "{not json"


def test_answer_s_is_session_only(inst):
    gate = gate_for(inst, prompt=answering("s"))
    assert asyncio.run(gate.ask("Bash", {"command": "echo 1"})) is True
    assert gate.decide("Bash", {"command": "rm x"}).verdict == "allow"
    assert gate_for(inst).decide("Bash", {"command": "echo 1"}).verdict == "ask"
    assert json.loads(inst.permissions_path.read_text())["allowed_patterns"] == {}


def test_ask_rechecks_before_prompting(inst):
    prompt = answering("s", "n")
    gate = gate_for(inst, prompt=prompt)

    async def two():
        return await asyncio.gather(gate.ask("Bash", {"command": "a"}), gate.ask("Bash", {"command": "b"}))

    assert asyncio.run(two()) == [True, True]
    assert len(prompt.seen) == 1


# -- start-up problems -----------------------------------------------------------------

def test_bad_regex_in_config_is_reported_not_fatal(inst):
    gate = gate_for(inst, allowed_tools=[ToolPolicy(tool="Bash", mode="ask", allowed_patterns=["(unclosed", "^ls$"])])
    problems = gate.startup_problems
    assert any("config.json" in p and "allowed_tools[0]" in p and "(unclosed" in p for p in problems)
    assert gate.decide("Bash", {"command": "ls"}).verdict == "allow"
    assert gate.decide("Bash", {"command": "(unclosed"}).verdict == "ask"


def test_typo_and_duplicate_policy_reported(inst):
    gate = gate_for(inst, allowed_tools=[ToolPolicy(tool="Bsh", mode="allow"),
                                         ToolPolicy(tool="Bash", mode="deny"),
                                         ToolPolicy(tool="Bash", mode="allow")])
    problems = gate.startup_problems
    assert any("'Bsh'" in p and "no such tool" in p for p in problems)
    assert any("allowed_tools[2]" in p and "second policy" in p for p in problems)
    assert gate.decide("Bash", {"command": "ls"}).verdict == "deny"


@pytest.mark.parametrize("content", ["{broken", "[1, 2]", '{"allowed_patterns": ["^.*$"]}', "\x00\xff"])
def test_malformed_permissions_json_means_no_allows(inst, content):
    inst.permissions_path.write_text(content, encoding="latin-1")
    gate = gate_for(inst)
    assert gate.decide("Bash", {"command": "rm -rf ~"}).verdict == "ask"
    assert any("permissions.json" in p for p in gate.startup_problems)


def test_bad_entries_in_permissions_json_are_skipped_and_named(inst):
    inst.permissions_path.write_text(json.dumps({"allowed_patterns": {"Bash": ["(bad", 7, "^ls$"], "Write": "x"}}))
    patterns, problems = load_permissions(inst.permissions_path)
    assert patterns == {"Bash": ["^ls$"]}
    assert any("['Bash'][0]" in p and "(bad" in p for p in problems)
    assert any("['Bash'][1]" in p for p in problems)
    assert any("['Write']" in p for p in problems)
    gate = gate_for(inst)
    assert gate.decide("Bash", {"command": "ls"}).verdict == "allow"


def test_misspelt_tool_in_permissions_json_is_reported(inst):
    inst.permissions_path.write_text(json.dumps({"allowed_patterns": {"Bsh": ["^ls$"], "Bash": ["^pwd$"]}}))
    gate = gate_for(inst)
    problems = gate.startup_problems
    assert len(problems) == 1 and "permissions.json" in problems[0] and "'Bsh'" in problems[0]
    assert "no such tool" in problems[0] and "\n" not in problems[0]
    assert gate.decide("Bash", {"command": "pwd"}).verdict == "allow"
    assert gate.decide("Bash", {"command": "ls"}).verdict == "ask"


def test_unreadable_permissions_json(inst):
    # a directory in its place cannot be read even by root
    inst.permissions_path.unlink()
    inst.permissions_path.mkdir()
    gate = gate_for(inst, prompt=answering("a"))
    assert gate.decide("Bash", {"command": "ls"}).verdict == "ask"
    assert any("permissions.json" in p and "cannot read" in p for p in gate.startup_problems)
    d = asyncio.run(gate.ask_decision("Bash", {"command": "ls"}))
    assert d.verdict == "allow" and "could not save" in d.reason
    assert inst.permissions_path.is_dir()


def test_hand_edit_of_permissions_json_takes_effect(inst):
    gate = gate_for(inst)
    assert gate.decide("Bash", {"command": "make"}).verdict == "ask"
    inst.permissions_path.write_text(json.dumps({"allowed_patterns": {"Bash": ["^make$"]}, "pad": "changed-size"}))
    assert gate.decide("Bash", {"command": "make"}).verdict == "allow"


def test_new_problems_reported_once_and_logged(inst):
    inst.permissions_path.write_text(json.dumps({"allowed_patterns": {"Bash": ["(bad"]}}))
    gate = gate_for(inst)
    first = gate.new_problems()
    assert len(first) == 1 and "permissions.json" in first[0]
    assert gate.new_problems() == []
    logged = [e for e in read_events(inst.debug_log_path) if e["event"] == "permission_config_problem"]
    assert [e["problem"] for e in logged] == first
    # a later hand edit that adds another bad entry is reported when it appears
    inst.permissions_path.write_text(json.dumps({"allowed_patterns": {"Bash": ["(bad", "[also"]}}))
    assert len(gate.new_problems()) == 1


def test_default_config_has_no_problems(inst):
    assert gate_for(inst).startup_problems == []


def test_writes_to_the_conversation_record_or_the_role_doc_always_ask(inst, isolated_home):
    """With Write and Edit allowed, the agent could append a "user" row to spool.jsonl (stored as the
    user's next turn), queue a message in unsent.json, or rewrite the role doc pinned as its own system
    prompt, all unasked. These files, this instance's and a sibling's, are asked like config.json."""
    role = isolated_home / "roles" / "assistant.md"
    role.parent.mkdir()
    role.write_text("Be terse.", encoding="utf-8")
    (isolated_home / "role-link.md").symlink_to(role)
    sibling = Instance.create("sibling")
    gate = gate_for(inst, role_doc_path=str(isolated_home / "role-link.md"),
                    allowed_tools=[ToolPolicy(tool="Write", mode="allow"), ToolPolicy(tool="Edit", mode="allow")])
    for root, whose in ((inst.root, "this instance's own"), (sibling.root, "another instance's")):
        for name in ("spool.jsonl", "unsent.json", "turns.sqlite", "turns.sqlite-wal", ".prompt_history"):
            decision = gate.decide("Write", {"file_path": str(root / name)})
            assert decision.verdict == "ask", (name, decision)
            assert f"{whose} conversation record ({name})" in decision.reason, decision
    for path in (role, isolated_home / "role-link.md"):  # the file and another name for it
        decision = gate.decide("Edit", {"file_path": str(path)})
        assert decision.verdict == "ask" and "the role doc" in decision.reason, decision
    assert gate.decide("Write", {"file_path": str(inst.root / "wiki" / "spool.jsonl")}).verdict == "allow"
    assert gate.decide("Write", {"file_path": str(isolated_home / "notes.md")}).verdict == "allow"
