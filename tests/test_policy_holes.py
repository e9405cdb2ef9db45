"""Fast tests of the permission holes of issue 13 (items 3, 9 and the mcp deny of 11).

The same behaviours are replayed through the real CLI in tests/test_security_e2e.py.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from mnemara.config import Config, ToolPolicy
from mnemara.instance import Instance
from mnemara.permissions import PermissionGate
from mnemara.policy_checks import loose_match, process_relative_path


@pytest.fixture
def inst(mnemara_home: Path) -> Instance:
    return Instance.create("holes")


# -- item 3: per-process paths ------------------------------------------------------------
@pytest.mark.parametrize("path", [
    "/proc/self/fd/1", "/proc/self/environ", "/proc/thread-self/fd/0", "/dev/fd/0", "/dev/fd/5", "/dev/stdin",
    "/dev/stdout", f"/proc/{os.getpid()}/fd/1", "/proc/1/environ", "/proc/self/../self/cwd/x", "/proc/self",
])
def test_per_process_paths_are_refused_for_every_file_tool(inst, path: str) -> None:
    gate = PermissionGate(Config(file_tool_home_only=False,
                                 allowed_tools=[ToolPolicy(tool=t, mode="allow") for t in ("Read", "Write", "Edit")]),
                          inst)
    for tool in ("Read", "Write", "Edit"):
        decision = gate.decide(tool, {"file_path": path})
        assert decision.verdict == "deny" and "per-process" in decision.reason, (tool, path, decision)


def test_symlink_in_home_to_a_per_process_path_is_refused(inst, isolated_home: Path) -> None:
    """Even when our own fd 1 is a file inside $HOME, so realpath() alone looks harmless."""
    inside = isolated_home / "out.log"
    with inside.open("w") as handle:
        link = isolated_home / "innocent.txt"
        link.symlink_to(f"/dev/fd/{handle.fileno()}")
        assert os.path.realpath(link) == str(inside)
        decision = PermissionGate(Config(), inst).decide("Read", {"file_path": str(link)})
    assert decision.verdict == "deny" and "per-process" in decision.reason
    hop = isolated_home / "hop"
    hop.symlink_to("/proc")
    assert PermissionGate(Config(), inst).decide("Read", {"file_path": str(hop / "self" / "environ")}).verdict == "deny"


def test_pipes_are_refused_and_ordinary_files_are_not(isolated_home: Path) -> None:
    fifo = isolated_home / "pipe"
    os.mkfifo(fifo)
    assert "not a regular file" in (process_relative_path(str(fifo)) or "")
    plain = isolated_home / "notes.txt"
    plain.write_text("x")
    assert process_relative_path(str(plain)) is None
    assert process_relative_path("notes.txt", str(isolated_home)) is None
    assert process_relative_path(str(isolated_home / "missing.txt")) is None
    assert process_relative_path(str(isolated_home / "proc" / "self")) is None


# -- item 9: Bash patterns that let a second command through ------------------------------
@pytest.mark.parametrize("pattern, loose", [
    ("^ls( |$)", True), ("^git status", True), ("ls", True), (".*", True), ("^echo .*$", True),
    ("^git status$", False), (r"\Agit\ status\Z", False), (r"^ls( [-\w./]+)*$", False), ("^make test$", False),
])
def test_loose_bash_patterns_are_found_by_probing(pattern: str, loose: bool) -> None:
    probe = loose_match(re.compile(pattern))
    assert (probe is not None) == loose, probe
    if probe is not None:
        assert re.search(pattern, probe) and any(c in probe for c in ";&|>$`\n")


def test_readme_example_pattern_is_tight() -> None:
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    block = readme.split('"allowed_tools": [', 1)[1].split("]\n```", 1)[0] + "]"
    policies = json.loads("[" + block)
    for policy in policies:
        for pattern in policy["allowed_patterns"]:
            assert loose_match(re.compile(pattern)) is None, pattern
    for allowed in ("ls", "ls -la", "ls -la src/app.py"):
        assert any(re.search(p, allowed) for pol in policies for p in pol["allowed_patterns"])
    for refused in ("ls; touch x", "ls $(touch x)", "ls `touch x`", "ls && touch x", "ls > x", "ls | sh"):
        assert not any(re.search(p, refused) for pol in policies for p in pol["allowed_patterns"])


def test_session_start_names_each_loose_entry(inst) -> None:
    inst.permissions_path.write_text(json.dumps({"allowed_patterns": {"Bash": ["^cat ", r"\Agit\ log\Z"]}}))
    gate = PermissionGate(Config(allowed_tools=[
        ToolPolicy(tool="Bash", mode="ask", allowed_patterns=["^git status$", "^ls( |$)"])]), inst)
    problems = gate.new_problems()
    assert len(problems) == 2, problems
    assert "allowed_tools[0] ('Bash')" in problems[0] and "'^ls( |$)'" in problems[0]
    assert "permissions.json" in problems[1] and "'^cat '" in problems[1]
    assert gate.new_problems() == []  # reported once


# -- item 11: a server-wide deny beats a tool's own allow ----------------------------------
def test_server_wide_deny_denies_every_own_tool_even_with_default_writememory_allow(inst) -> None:
    config = Config()
    config.allowed_tools = [*config.allowed_tools, ToolPolicy(tool="mcp__mnemara", mode="deny")]
    gate = PermissionGate(config, inst)
    for tool in ("mcp__mnemara__write_memory", "mcp__mnemara__wiki_write", "mcp__mnemara__graph_query",
                 "mcp__mnemara__rag_query", "mcp__mnemara__evict_turns"):
        assert gate.decide(tool, {}).verdict == "deny", tool
    config.allowed_tools = [*config.allowed_tools, ToolPolicy(tool="mcp__mnemara__rag_query", mode="allow")]
    gate.set_config(config)  # the exact model-facing name still overrides the server for one tool
    assert gate.decide("mcp__mnemara__rag_query", {}).verdict == "allow"
    assert gate.decide("mcp__mnemara__write_memory", {}).verdict == "deny"
