"""A turn owns its state; the launcher and the warm start get narrow objects, not the session.

No CLI is started: the launcher's tool hooks are called the way the CLI would call them.
"""
from __future__ import annotations

import asyncio
from dataclasses import dataclass

from mnemara.claude.options import CliLauncher, LaunchNeeds
from mnemara.claude.role_refresh import RoleDocWatch
from mnemara.core.config import Config
from mnemara.guard.gate import PermissionGate
from mnemara.guard.sentinel import SentinelWatch
from mnemara.core.live_config import LiveConfig
from mnemara.store.instance import Instance
from mnemara.store.turns import TurnStore
from mnemara.tools import ToolContext


@dataclass
class Guards:
    watch: SentinelWatch | None = None
    role_watch: RoleDocWatch | None = None


def _pre(launcher: CliLauncher, tool: str, tool_input: dict, tool_use_id: str) -> dict:
    return asyncio.run(launcher.pre_tool_use({"tool_name": tool, "tool_input": tool_input}, tool_use_id, None))


def _verdict(out: dict) -> str:
    return out["hookSpecificOutput"]["permissionDecision"]


def test_the_launcher_needs_only_its_narrow_object_and_reads_the_running_turn(tmp_path) -> None:
    instance = Instance.at(tmp_path / "i")
    store = TurnStore(instance.turns_path)
    live = LiveConfig(instance.config_path, lambda cfg: None)
    tools = ToolContext(instance=instance, live=live, store=store)
    gate = PermissionGate(live.current, instance, None, cwd=tmp_path)
    running: list[Guards] = []
    hooked: list[str] = []

    async def hooks(name: str, tool_input: dict) -> dict | None:
        hooked.append(name)
        return {"said": "by a hook"} if name == "Hooked" else None

    launcher = CliLauncher(LaunchNeeds(live, str(tmp_path), tools, gate, instance.debug_log_path,
                                       lambda: running[-1] if running else None, hooks))
    try:
        poll = {"command": "git status"}
        between = [_pre(launcher, "Bash", poll, f"b{i}") for i in range(3)]  # between turns: no sentinel
        assert all("SENTINEL" not in out["hookSpecificOutput"]["permissionDecisionReason"] for out in between)
        running.append(Guards(watch=SentinelWatch()))
        _pre(launcher, "Bash", poll, "t1")
        _pre(launcher, "Bash", poll, "t2")
        halted = _pre(launcher, "Bash", poll, "t3")
        assert _verdict(halted) == "deny" and "SENTINEL HALT" in halted["hookSpecificOutput"]["permissionDecisionReason"]
        assert hooked == ["Bash"] * 5  # the halted call never reached the hooks or the gate
        running.append(Guards())  # the next turn, the sentinel off: its halt was the last turn's
        assert _pre(launcher, "Hooked", {}, "t4") == {"said": "by a hook"}

        key = launcher.key("prompt")
        live.adopt(Config.from_dict({**live.current.to_dict(), "model": "claude-haiku-4-5"}))
        assert launcher.key("prompt") != key  # the launcher reads the live config, not a copy
    finally:
        store.close()


def test_a_mid_turn_role_doc_edit_is_read_from_the_running_turn(tmp_path) -> None:
    instance = Instance.at(tmp_path / "i")
    store = TurnStore(instance.turns_path)
    live = LiveConfig(instance.config_path, lambda cfg: None)
    role = tmp_path / "role.md"
    role.write_text("You are ROLE-BEFORE.\n", encoding="utf-8")
    running: list[Guards] = []

    async def no_hooks(name: str, tool_input: dict) -> dict | None:
        return None

    launcher = CliLauncher(LaunchNeeds(live, str(tmp_path), ToolContext(instance=instance, live=live, store=store),
                                       PermissionGate(live.current, instance, None, cwd=tmp_path),
                                       instance.debug_log_path, lambda: running[-1] if running else None, no_hooks))
    try:
        watch = RoleDocWatch(str(role), "You are ROLE-BEFORE.")  # as the turn began
        role.write_text("You are ROLE-AFTER, edited.\n", encoding="utf-8")
        assert asyncio.run(launcher.post_tool_use({}, "t1", None)) == {}  # no turn in flight: nothing to hand over
        running.append(Guards(role_watch=watch))
        out = asyncio.run(launcher.post_tool_use({}, "t2", None))
        assert "ROLE-AFTER" in out["hookSpecificOutput"]["additionalContext"]
    finally:
        store.close()


def test_per_turn_state_lives_on_the_turn_and_the_session_hooks_see_the_session(session_factory) -> None:
    session = session_factory("state", warm_spare=False)
    for gone in ("role_watch", "last_role_doc", "sentinel", "_damaged_now", "_stop_requested", "_turn_loop"):
        assert not hasattr(session, gone), gone
    assert session.running is None
    seen: list[object] = []

    def sync_hook(owner, name, tool_input):
        seen.append(owner)
        return None

    async def async_hook(owner, name, tool_input):
        seen.append(owner)
        return {"decided": name}

    session.pre_tool_use_hooks += [sync_hook, async_hook]
    out = asyncio.run(session.launcher.pre_tool_use({"tool_name": "Bash", "tool_input": {"command": "ls"}}, "x", None))
    assert out == {"decided": "Bash"} and seen == [session, session]
    session.warm_spare = True
    assert session.warm.enabled and session.warm_spare
