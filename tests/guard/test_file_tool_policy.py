"""An in-process tool that reads files is a file tool to the permission gate (audit 4: tools and permissions).

``read_skeleton`` names a file; before this it was judged like any in-process tool (allowed by default,
its whole input as the target), so ``Read: deny``, Read's path patterns, home-only and the per-process
checks of the gate never applied to it, and a relative path was read from Mnemara's own working folder,
not the session's one the gate judges.
"""
from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from mnemara.core.live_config import LiveConfig
from mnemara.core.config import Config, ToolPolicy
from mnemara.store.instance import Instance
from mnemara.guard.gate import PermissionGate, PermissionRequest
from mnemara.store.turns import TurnStore
from mnemara.tools import ToolContext, context_tools

SKELETON = "mcp__mnemara__read_skeleton"


@pytest.fixture
def inst(mnemara_home: Path) -> Instance:
    return Instance.create("files")


@pytest.fixture
def source(isolated_home: Path) -> Path:
    project = isolated_home / "proj"
    project.mkdir()
    path = project / "mod.py"
    path.write_text('"""A module."""\n\ndef f(x: int) -> int:\n    return x\n', encoding="utf-8")
    return path


def _gate(inst: Instance, *policies: ToolPolicy, cwd: Path | None = None, **config) -> PermissionGate:
    return PermissionGate(Config(read_skeleton_enabled=True, allowed_tools=list(policies), **config), inst, cwd=cwd)


def test_read_deny_denies_read_skeleton(inst, source) -> None:
    gate = _gate(inst, ToolPolicy(tool="Read", mode="deny"))
    for args in ({"file_path": str(source)}, {"path": str(source)}):
        decision = gate.decide(SKELETON, args)
        assert decision.verdict == "deny" and "Read" in decision.reason, decision
    assert _gate(inst, ToolPolicy(tool="mcp__mnemara", mode="deny")).decide(
        SKELETON, {"file_path": str(source)}).verdict == "deny"


def test_read_ask_patterns_match_the_path_read_skeleton_opens(inst, source, isolated_home) -> None:
    """Read's patterns are path patterns: they see the path the tool opens, never a decoy argument."""
    outside = isolated_home / "secrets" / "keys.py"
    gate = _gate(inst, ToolPolicy(tool="Read", mode="ask", allowed_patterns=[f"^{source.parent}/"]))
    assert gate.decide(SKELETON, {"file_path": str(source)}).verdict == "allow"
    assert gate.decide(SKELETON, {"path": str(source)}).verdict == "allow"
    # file_path is the one opened; a `path` inside the pattern's folder must not vouch for it
    decoy = {"file_path": str(outside), "path": str(source)}
    assert gate.decide(SKELETON, decoy).verdict == "ask"
    assert gate.target(SKELETON, decoy) == str(outside)
    assert context_tools.SkeletonArgs.model_validate(decoy).target == str(outside)


def test_an_explicit_read_skeleton_policy_still_wins_over_a_read_ask(inst, source) -> None:
    gate = _gate(inst, ToolPolicy(tool="Read", mode="ask"), ToolPolicy(tool="ReadSkeleton", mode="allow"))
    assert gate.decide(SKELETON, {"file_path": str(source)}).verdict == "allow"
    gate = _gate(inst, ToolPolicy(tool="Read", mode="deny"), ToolPolicy(tool="ReadSkeleton", mode="allow"))
    assert gate.decide(SKELETON, {"file_path": str(source)}).verdict == "deny"  # a deny on any key wins


@pytest.mark.parametrize("path", ["/etc/os-release", "/proc/self/environ", "/dev/fd/0", "../../../../etc/x.py"])
def test_home_only_and_per_process_paths_are_refused_by_the_gate(inst, source, path) -> None:
    decision = _gate(inst, cwd=source.parent).decide(SKELETON, {"file_path": path})
    assert decision.verdict == "deny" and ("outside $HOME" in decision.reason or "per-process" in decision.reason)


def test_per_process_paths_are_refused_even_with_home_only_off(inst, source) -> None:
    gate = _gate(inst, file_tool_home_only=False)
    assert gate.decide(SKELETON, {"file_path": "/proc/self/cwd/mod.py"}).verdict == "deny"
    fifo = source.parent / "pipe.py"
    os.mkfifo(fifo)
    assert gate.decide(SKELETON, {"file_path": str(fifo)}).verdict == "deny"
    assert gate.decide(SKELETON, {"file_path": ""}).verdict == "deny"
    assert gate.decide(SKELETON, {"file_path": 5}).verdict == "deny"


def test_always_answer_saves_the_path_under_read_skeleton(inst, source) -> None:
    gate = PermissionGate(Config(read_skeleton_enabled=True,
                                 allowed_tools=[ToolPolicy(tool="Read", mode="ask")]), inst,
                          prompt=lambda request: "a")
    seen: list[PermissionRequest] = []
    gate.prompt = lambda request: seen.append(request) or "a"
    assert asyncio.run(gate.ask(SKELETON, {"file_path": str(source)}))
    assert seen[0].target == str(source) and seen[0].target_key == "file_path" and seen[0].details == ""
    saved = json.loads(inst.permissions_path.read_text())["allowed_patterns"]
    assert list(saved) == ["ReadSkeleton"] and len(saved["ReadSkeleton"]) == 1
    assert gate.decide(SKELETON, {"file_path": str(source)}).verdict == "allow"
    assert gate.decide(SKELETON, {"file_path": str(source) + "x"}).verdict == "ask"


def test_a_relative_path_is_read_from_the_sessions_folder_the_gate_judged(inst, source, tmp_path,
                                                                         monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # Mnemara's own working folder is elsewhere
    store = TurnStore(inst.turns_path)
    try:
        ctx = ToolContext(instance=inst, live=LiveConfig(inst.config_path, current=Config(read_skeleton_enabled=True)), store=store,
                          cwd=str(source.parent))
        tool = {s.name: s.handler for s in context_tools.specs()}["read_skeleton"]
        answer = tool(ctx, {"file_path": "mod.py"})
    finally:
        store.close()
    assert answer["ok"], answer
    assert answer["path"] == str(source) and "def f(x: int) -> int" in answer["skeleton"]
    assert _gate(inst, cwd=source.parent).decide(SKELETON, {"file_path": "mod.py"}).verdict == "allow"
