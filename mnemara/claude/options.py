"""How a session starts a Claude CLI: the SDK options and the callbacks the CLI calls back.

* :meth:`CliLauncher.launch` builds ``ClaudeAgentOptions`` for one system
  prompt (handed over as a private file, :mod:`mnemara.claude.prompt_file`) and starts
  connecting a ``ClaudeSDKClient``; :meth:`CliLauncher.key` says which options a
  process was started with, so a warm spare is only reused when they match.
  The first launch of a session is offered the CLI ``mnemara run`` started
  before its imports (:attr:`CliLauncher.early`, :mod:`mnemara.claude.early`);
  it is used only when it is exactly the process this launch would start.
* What a CLI is started with lives here once: :data:`BUILTIN_TOOLS`,
  :func:`launch_env`, :func:`cli_servers`; :attr:`CliLauncher.env_overrides`
  adds environment entries to every CLI of a session (the seam for pointing
  the CLI's ``ANTHROPIC_BASE_URL`` at a loopback request recorder).
* The ``PreToolUse`` hook asks, in order, the runtime sentinel, the session's
  ``pre_tool_use_hooks`` and the permission gate; ``"ask"`` makes the CLI call
  ``can_use_tool``, which asks the UI through the gate. The ``PostToolUse`` hook
  hands a role doc edited mid-turn to the model with the tool result.

The SDK is imported only when a process is launched.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, cast

from mnemara.claude.additions import BUILTIN_TOOLS as BUILTIN_TOOLS, CACHE_TTL_ENV as CACHE_TTL_ENV, QUIET_ENV, quiet_settings
from mnemara.claude.faults import retry_env
from mnemara.claude.child_guard import guard_env, guarded_cli_path
from mnemara.claude.process import CliHandle, env_fingerprint
from mnemara.core.debuglog import LogTarget, log_event
from mnemara.claude.prompt_file import PromptFile
from mnemara.claude.role_refresh import refresh_output
from mnemara.tools import SERVER_NAME, enabled_specs, enabled_tool_names

if TYPE_CHECKING:
    from claude_agent_sdk import ClaudeAgentOptions, HookContext, HookInput, PermissionResult, ToolPermissionContext
    from claude_agent_sdk.types import SyncHookJSONOutput, SystemPromptFile

    from mnemara.claude.early import EarlyCli
    from mnemara.claude.role_refresh import RoleDocWatch
    from mnemara.core.config import Config, ConfigSource
    from mnemara.guard.gate import PermissionGate, Verdict
    from mnemara.guard.sentinel import SentinelWatch
    from mnemara.tools import ToolContext



def launch_env(cfg: Config) -> dict[str, str]:
    """The environment entries a CLI is started with for ``cfg`` (before :attr:`CliLauncher.env_overrides`)."""
    timeout_ms = str(cfg.bash_timeout_seconds * 1000)
    # the CLI's own cache marks (system, last message) take cache_ttl too: the API refuses a 1-hour mark
    # (Mnemara's, on the last window row) after a 5-minute one
    return {"BASH_DEFAULT_TIMEOUT_MS": timeout_ms, "BASH_MAX_TIMEOUT_MS": timeout_ms,
            CACHE_TTL_ENV: cfg.cache_ttl,
            **retry_env(cfg.api_max_retries), **guard_env(), **QUIET_ENV}


def cli_servers(cfg: Config, with_tools: bool | None = None) -> dict[str, dict[str, Any]]:
    """The ``--mcp-config`` servers a CLI is started with for ``cfg`` (no SDK import): the configured
    stdio servers, and Mnemara's in-process one when any of its tools is enabled (``with_tools``:
    taken as given, without importing every tool module to find out)."""
    servers: dict[str, dict[str, Any]] = {
        s.name: {"type": "stdio", "command": s.command, "args": list(s.args), "env": dict(s.env)}
        for s in cfg.mcp_servers}
    if with_tools if with_tools is not None else enabled_specs(cfg):
        servers[SERVER_NAME] = {"type": "sdk", "name": SERVER_NAME}
    return servers


def _decision(verdict: Verdict, reason: str) -> SyncHookJSONOutput:
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": verdict,
                                   "permissionDecisionReason": reason}}


class TurnGuards(Protocol):
    """What the tool hooks read of the turn in flight (a session's running turn provides it)."""

    @property
    def watch(self) -> SentinelWatch | None: ...  # the runtime sentinel, when runtime_sentinel is on

    @property
    def role_watch(self) -> RoleDocWatch | None: ...  # the role doc as this turn's CLI was given it


#: An embedder's check of one tool call (the session's ``pre_tool_use_hooks``, in order): a non-empty
#: dict is returned to the CLI instead of the permission decision.
ToolCallHooks = Callable[[str, dict[str, Any]], Awaitable["dict[str, Any] | None"]]


@dataclass(frozen=True)
class LaunchNeeds:
    """What a :class:`CliLauncher` uses of its session, and nothing more."""

    config: ConfigSource  # the one live config: read at every key, launch and options
    cwd: str
    tool_context: ToolContext  # handed to Mnemara's in-process tools
    gate: PermissionGate
    log: LogTarget
    running_turn: Callable[[], TurnGuards | None]  # the turn in flight (None between turns)
    tool_call_hooks: ToolCallHooks


class CliLauncher:
    """Starts CLI processes for one session, with its config, tools, hooks and permission gate."""

    def __init__(self, needs: LaunchNeeds) -> None:
        self.needs = needs
        #: Entries added to the environment of every CLI this launcher starts, after its own (the
        #: seam for a loopback request recorder: ``{"ANTHROPIC_BASE_URL": "http://127.0.0.1:PORT"}``).
        #: Part of :meth:`key`: changing it retires the kept process, the next turn starts a new one.
        self.env_overrides: dict[str, str] = {}
        #: A CLI started before the session (:mod:`mnemara.early_cli`), offered to the first launch.
        self.early: EarlyCli | None = None

    def key(self, system_prompt: str) -> str:
        """A hash of everything a started process has fixed (prompt, model, tools, cwd, environment)."""
        cfg = self.needs.config.current
        material = {
            "system": system_prompt,
            "model": cfg.model,
            "mcp": [s.model_dump(mode="json") for s in cfg.mcp_servers],
            "tools": enabled_tool_names(cfg),  # the catalogue's: a key is taken 3 times a turn, specs cost 1 ms
            "native_tools": list(cfg.native_tools),
            "bash": cfg.bash_timeout_seconds,
            "retries": cfg.api_max_retries,
            "cache_ttl": cfg.cache_ttl,
            "cwd": self.needs.cwd,
            "env": env_fingerprint(),
            "env_overrides": self.env_overrides,
        }
        return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()

    def launch(self, system_prompt: str) -> CliHandle:
        """Start a CLI process for ``system_prompt`` on the running loop (``ready`` completes when connected)."""
        from claude_agent_sdk import ClaudeSDKClient

        stderr: list[str] = []
        loop = asyncio.get_running_loop()
        early, self.early = self.early, None
        if early is not None:
            options = self.options(early.prompt.sdk_value(), stderr)
            transport = early.adopt(system_prompt, options, self.tools_key())  # None (and ended) unless it fits
            if transport is not None:
                async def connect() -> None:
                    await self._connect_adopted(handle, early, system_prompt)

                handle = CliHandle(self.key(system_prompt), ClaudeSDKClient(options, transport=transport), loop,
                                   loop.create_task(connect()), stderr)
                return handle
        prompt = PromptFile(system_prompt)  # never argv: no 128 KiB limit, not visible in `ps`
        client = ClaudeSDKClient(self.options(prompt.sdk_value(), stderr))
        ready = loop.create_task(client.connect())
        ready.add_done_callback(prompt.remove_after)  # the CLI has read it once connected (or failed/cancelled)
        return CliHandle(self.key(system_prompt), client, loop, ready, stderr)

    async def _connect_adopted(self, handle: CliHandle, early: EarlyCli, system_prompt: str) -> None:
        """Connect the SDK to the early process; when that fails (it ended, or its ``initialize`` was not
        the SDK's), start a process of its own instead, as without an early start."""
        from claude_agent_sdk import ClaudeSDKClient

        try:
            await handle.client.connect()
            return
        except Exception as exc:
            log_event(self.needs.log, "early_cli_unused", level="warning",
                      reason=f"connecting failed: {type(exc).__name__}: {exc}"[:300])
            early.discard()
            try:
                await asyncio.wait_for(handle.client.disconnect(), 10)
            except Exception:
                pass
        finally:
            early.prompt.remove()  # read by the CLI once connected
        prompt = PromptFile(system_prompt)
        handle.client = ClaudeSDKClient(self.options(prompt.sdk_value(), handle.stderr))
        try:
            await handle.client.connect()
        finally:
            prompt.remove()

    def tools_key(self) -> str:
        """The key of the SDK's answers to a CLI's start-up MCP messages for the current tools
        (:mod:`mnemara.claude.startup_answers`)."""
        from mnemara.claude import startup_answers

        return startup_answers.tools_key(enabled_specs(self.needs.config.current), startup_answers.sdk_version(),
                                         startup_answers.mcp_version())

    def presend(self, system_prompt: str, content: list[dict[str, Any]], message_id: str) -> bool:
        """Send the first turn's message to the CLI started early, before the SDK is imported, when
        ``mnemara run`` reads piped messages and that process is exactly what this turn would launch
        (:meth:`EarlyCli.presend <mnemara.claude.early.EarlyCli.presend>`). True when sent."""
        early = self.early
        if early is None or not early.awaits_message:
            return False
        return early.presend(system_prompt, self.needs.config.current, self.env_overrides, self.needs.cwd, content,
                             message_id, self.tools_key())

    def options(self, system_prompt: str | SystemPromptFile, stderr_sink: list[str]) -> ClaudeAgentOptions:
        """``ClaudeAgentOptions`` for the session's current config; CLI stderr lines go to ``stderr_sink``."""
        from claude_agent_sdk import ClaudeAgentOptions, HookMatcher

        from mnemara.claude.bridge import mnemara_server

        needs = self.needs
        cfg = needs.config.current
        servers: dict[str, Any] = cli_servers(cfg)
        if SERVER_NAME in servers:  # the in-process server itself, where the CLI is told its name
            servers[SERVER_NAME] = mnemara_server(enabled_specs(cfg), needs.tool_context)

        def on_stderr(line: str) -> None:
            stderr_sink.append(line)
            del stderr_sink[:-50]

        return ClaudeAgentOptions(
            system_prompt=system_prompt,
            tools=list(cfg.native_tools),  # the spec's four unless config.json's native_tools says otherwise
            mcp_servers=servers,
            model=cfg.model,
            cwd=needs.cwd,
            setting_sources=[],
            settings=quiet_settings(),  # fewer hidden parts in every request (mnemara.claude.additions)
            include_partial_messages=True,
            verbatim_prompts=True,
            can_use_tool=self.can_use_tool,
            hooks={
                "PreToolUse": [HookMatcher(matcher=None, hooks=[self.pre_tool_use], on_failure="block")],
                "PostToolUse": [HookMatcher(matcher=None, hooks=[self.post_tool_use])],
            },
            env={**launch_env(cfg), **self.env_overrides},
            cli_path=guarded_cli_path(),  # the CLI dies with this process, even on kill -9 (Linux)
            stderr=on_stderr,
            # Mnemara's store is the history: no per-turn session transcripts piling up in ~/.claude/projects.
            extra_args={"no-session-persistence": None},
        )

    # -- callbacks (called by the CLI) ---------------------------------------------------
    async def pre_tool_use(self, input_data: HookInput, tool_use_id: str | None,
                           context: HookContext) -> SyncHookJSONOutput:
        """Every tool call: the sentinel, then ``pre_tool_use_hooks``, then the permission policy."""
        needs = self.needs
        name = str(input_data.get("tool_name", ""))
        given = input_data.get("tool_input")
        tool_input: dict[str, Any] = given if isinstance(given, dict) else {}
        turn = needs.running_turn()
        sentinel = turn.watch if turn is not None else None
        if sentinel is not None:
            refusal = sentinel.check(name, tool_input, tool_use_id)
            if refusal is not None:
                log_event(needs.log, "sentinel_halt", level="warning", tool=name,
                          tool_input=tool_input, tool_use_id=tool_use_id, reason=refusal)
                return _decision("deny", refusal)
        out = await needs.tool_call_hooks(name, tool_input)
        if out:
            return cast("SyncHookJSONOutput", out)  # an embedder's answer goes to the CLI as given
        decision = needs.gate.decide(name, tool_input)
        needs.tool_context.state.note_call(name, tool_input, tool_use_id)  # provenance of what the tool writes
        log_event(needs.log, "tool_call", tool=name, verdict=decision.verdict,
                  reason=decision.reason, tool_use_id=tool_use_id)
        return _decision(decision.verdict, decision.reason)

    async def post_tool_use(self, input_data: HookInput, tool_use_id: str | None,
                            context: HookContext) -> SyncHookJSONOutput:
        """Give the sentinel this result (before the next call's hook, however the stream lags);
        hand a role doc edited mid-turn to the model with this tool result."""
        turn = self.needs.running_turn()
        sentinel = turn.watch if turn is not None else None
        if sentinel is not None:
            sentinel.saw_hook_result(tool_use_id, input_data.get("tool_response"))
        watch = turn.role_watch if turn is not None else None
        text = watch.changed_text() if watch is not None else None
        if watch is None or text is None:
            return {}
        log_event(self.needs.log, "role_doc_refreshed_mid_turn", path=watch.path,
                  tool_use_id=tool_use_id)
        return refresh_output(text)

    async def can_use_tool(self, tool_name: str, tool_input: dict[str, Any],
                           context: ToolPermissionContext) -> PermissionResult:
        """The CLI asks (the hook said ``ask``): the gate asks the UI; allow or deny with the reason."""
        from claude_agent_sdk import PermissionResultAllow, PermissionResultDeny

        try:
            decision = await self.needs.gate.ask_decision(tool_name, tool_input)
        except Exception as exc:
            log_event(self.needs.log, "permission_prompt_error", level="error", error=repr(exc))
            return PermissionResultDeny(message=f"permission check failed: {exc}")
        if decision.verdict == "allow":
            return PermissionResultAllow()
        return PermissionResultDeny(message=decision.reason or f"{tool_name} was denied")
