"""AgentSession: one instance, one turn at a time, on the real Claude Agent SDK.

A turn is: write the user row -> reload config.json -> read the role doc from
disk -> build the context (pinned slots, rolling window, per-turn extras, the
new message; see :mod:`mnemara.transcript`) -> run it through a fresh Claude
Code CLI process -> stream events -> persist the assistant row -> trim the
window -> run post-turn hooks.

Every turn is a new CLI conversation (the window *is* the history), so a CLI
process serves exactly one turn. The role doc is read from disk at the start
of every turn and handed to the CLI as ``--system-prompt-file`` (see
:mod:`mnemara.prompt_file`; never argv); the CLI reads that file once per process, so the API calls of one turn's tool
loop share that text and an edit applies from the next turn. To hide the CLI's start-up time a spare
process is started after each turn with the options the next turn will most
likely need; the next turn uses it only if the role doc text (re-read from
disk), the system prompt extras, the model, the tools and the environment
are all unchanged, and otherwise starts a fresh one.

``warm_spare=False`` (or ``MNEMARA_WARM_SPARE=0``) turns the spare off: every
turn then starts its own CLI, exactly like ``claude_agent_sdk.query()``.

Extension points (plain lists, append to them):

* ``post_turn_hooks``: ``fn(session, assistant_row_id)`` after each persisted turn.
* ``system_prompt_extras``: ``fn(session) -> str``; non-empty outputs are appended
  to the role doc text in the system prompt.
* ``pre_turn_context``: ``fn(session, user_text) -> str``; non-empty outputs are
  sent as extra text blocks for this turn only (not stored).
* ``pre_tool_use_hooks``: ``async/sync fn(session, tool_name, tool_input) -> dict | None``;
  a non-empty dict is returned to the CLI instead of the permission decision
  (e.g. the runtime sentinel denying a polling loop).
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import inspect
import json
import os
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, AsyncIterator, Awaitable, Callable

from mnemara import events as ev
from mnemara.cli_process import (
    CliHandle,
    alive,
    cli_failure,
    env_fingerprint,
    exception_message,
    hard_kill,
    has_credentials,
    no_key_message,
    one_message,
)
from mnemara.backend_loader import preload_backend
from mnemara.config import Config, update_config
from mnemara.debuglog import log_event
from mnemara.errors import MnemaraError
from mnemara.instance import Instance
from mnemara.permissions import PermissionGate, PermissionRequest
from mnemara.prompt_file import PromptFile
from mnemara.role_refresh import RoleDocWatch, refresh_output
from mnemara.roledoc import RoleDoc, read_role_doc
from mnemara.sentinel import SentinelWatch
from mnemara.store import TurnStore
from mnemara.tools import SERVER_NAME, ToolContext, enabled_specs
from mnemara.transcript import build_user_content

if TYPE_CHECKING:
    from mnemara.peer.inbox import PeerInbox

PermissionPrompt = Callable[[PermissionRequest], "Awaitable[str | None] | str | None"]
SPARE_WAIT_SECONDS = 60.0


class AgentSession:
    """Drive turns on one instance. Not thread-safe: one turn at a time."""

    def __init__(self, instance: Instance, *, permission_prompt: PermissionPrompt | None = None,
                 cwd: str | Path | None = None, warm_spare: bool | None = None) -> None:
        self.instance = instance
        self.config = Config.load(instance.config_path)
        self.store = TurnStore(instance.turns_path)
        self.tool_context = ToolContext(instance=instance, config=self.config, store=self.store)
        self.permission_prompt = permission_prompt
        self.cwd = str(cwd or os.getcwd())
        if warm_spare is None:
            warm_spare = os.environ.get("MNEMARA_WARM_SPARE", "1").strip().lower() not in ("0", "false", "no", "off")
        self.warm_spare = warm_spare
        self.stats = {"spare_used": 0, "fresh_started": 0}  # how each turn got its CLI process
        #: Print warnings (e.g. a missing role doc) to stderr; UIs that render Notice events turn it off.
        self.warn_to_stderr = True
        self.busy = False
        self.post_turn_hooks: list[Callable[["AgentSession", int], None]] = []
        self.system_prompt_extras: list[Callable[["AgentSession"], str]] = []
        self.pre_turn_context: list[Callable[["AgentSession", str], str]] = []
        self.pre_tool_use_hooks: list[Callable[["AgentSession", str, dict[str, Any]], Any]] = []
        self.config_listeners: list[Callable[[Config], None]] = []
        self.peer_inbox: PeerInbox | None = None  # set by mnemara.peer.attach_inbox
        self.gate = PermissionGate(self.config, instance, permission_prompt, cwd=Path(self.cwd))
        self.sentinel: SentinelWatch | None = None  # created when config.runtime_sentinel is on
        self.last_role_doc: RoleDoc | None = None
        self._role_watch: RoleDocWatch | None = None
        self._spare: CliHandle | None = None
        self._active: CliHandle | None = None
        self._stop_requested = False
        self._turn_loop: asyncio.AbstractEventLoop | None = None
        self._sync_loop: asyncio.AbstractEventLoop | None = None
        self._sync_thread: threading.Thread | None = None
        self._closed = False
        self._tasks: set[asyncio.Task[Any]] = set()
        from mnemara.context.hooks import install as install_context_hooks

        install_context_hooks(self)  # read tracking, auto-eviction, the file-stat manifest
        from mnemara.memory.autorecall import install as install_auto_recall

        install_auto_recall(self)  # notes matching the message join the turn (only when auto_recall is on)

    @classmethod
    def open(cls, name: str, **kwargs: Any) -> "AgentSession":
        """Open the instance called ``name`` under ``$MNEMARA_HOME``."""
        return cls(Instance.open(name), **kwargs)

    @classmethod
    def at(cls, folder: str | Path, *, config: Config | None = None, **kwargs: Any) -> "AgentSession":
        """Embed: a session on an instance living in ``folder`` (created if missing).

        ``config``, when given, is saved to the folder's config.json first.
        """
        instance = Instance.at(Path(folder))
        if config is not None:
            config.save(instance.config_path)
        return cls(instance, **kwargs)

    def set_permission_prompt(self, prompt: PermissionPrompt | None) -> None:
        """Swap the UI callback that answers permission questions (y/n/a/s)."""
        self.permission_prompt = prompt
        self.gate.prompt = prompt

    # -- per-turn inputs ------------------------------------------------------------
    def reload_config(self) -> Config:
        """Re-read config.json (hand edits apply to the next call) and hand it to every holder."""
        return self.apply_config(Config.load(self.instance.config_path))

    def update_config(self, **changes: Any) -> Config:
        """Change fields of config.json: validated (nothing is saved when a value is refused,
        :class:`~mnemara.errors.ConfigError`), saved atomically, then live for every holder."""
        return self.apply_config(update_config(self.instance.config_path, **changes))

    def apply_config(self, config: Config) -> Config:
        """Make ``config`` the live config: the session, its tools, the permission gate, the peer
        inbox and every ``config_listeners`` callback see the same object from now on."""
        self.config = config
        self.tool_context.config = config
        self.gate.set_config(config)
        if self.peer_inbox is not None:
            self.peer_inbox.apply_config(config)
        for listener in list(self.config_listeners):
            try:
                listener(config)
            except Exception as exc:
                log_event(self.instance.debug_log_path, "config_listener_error", level="error", error=repr(exc))
        return config

    def _sentinel_for_turn(self, cfg: Config) -> SentinelWatch | None:
        """The session's runtime sentinel when ``runtime_sentinel`` is on (its memory spans turns)."""
        if not cfg.runtime_sentinel:
            self.sentinel = None
            return None
        if self.sentinel is None:
            self.sentinel = SentinelWatch()
        self.sentinel.begin_turn()
        return self.sentinel

    def read_role(self) -> RoleDoc:
        """Read the role doc now; a missing/unreadable one warns on stderr and in debug.log."""
        role = read_role_doc(self.config.role_doc_path)
        if role.warning:
            if self.warn_to_stderr:
                print(f"warning: {role.warning}", file=sys.stderr)
            log_event(self.instance.debug_log_path, "role_doc_warning", level="warning", path=role.path, warning=role.warning)
        self.last_role_doc = role
        self._role_watch = RoleDocWatch(role.path, role.text)
        return role

    def system_prompt(self, role: RoleDoc) -> str:
        parts = [role.text]
        for extra in self.system_prompt_extras:
            try:
                text = extra(self)
            except Exception as exc:
                log_event(self.instance.debug_log_path, "system_prompt_extra_error", level="error", error=repr(exc))
                continue
            if text and text.strip():
                parts.append(text)
        return "\n\n".join(p for p in parts if p)

    def window(self) -> Any:
        """The rolling window under the current config's caps (pinned rows + live rows)."""
        return self.store.window_for(self.config)

    def context_blocks(self, text: str, exclude_ids: tuple[int, ...] = ()) -> list[dict[str, Any]]:
        """The content blocks of the user message this turn would send.

        The window is selected with the new user row already stored (so the caps
        count it) and that row is then left out of the history, as it is sent last.
        """
        extras: list[str] = []
        for fn in self.pre_turn_context:
            try:
                extras.append(fn(self, text) or "")
            except Exception as exc:
                log_event(self.instance.debug_log_path, "pre_turn_context_error", level="error", error=repr(exc))
        win = self.window()
        rows = [t for t in win.rows if t.id not in exclude_ids]
        return build_user_content(win.pinned, rows, text, extras)

    # -- SDK options ------------------------------------------------------------------
    def _options(self, system_prompt: Any, stderr_sink: list[str]) -> Any:
        from claude_agent_sdk import ClaudeAgentOptions, HookMatcher

        from mnemara.sdk_bridge import BUILTIN_TOOLS, mcp_server_configs, mnemara_server

        cfg = self.config
        servers: dict[str, Any] = mcp_server_configs(cfg)
        specs = enabled_specs(cfg)
        if specs:
            servers[SERVER_NAME] = mnemara_server(specs, self.tool_context)
        timeout_ms = str(cfg.bash_timeout_seconds * 1000)

        def on_stderr(line: str) -> None:
            stderr_sink.append(line)
            del stderr_sink[:-50]

        return ClaudeAgentOptions(
            system_prompt=system_prompt,
            tools=list(BUILTIN_TOOLS),
            mcp_servers=servers,
            model=cfg.model,
            cwd=self.cwd,
            setting_sources=[],
            include_partial_messages=True,
            verbatim_prompts=True,
            can_use_tool=self._can_use_tool,
            hooks={
                "PreToolUse": [HookMatcher(matcher=None, hooks=[self._pre_tool_use], on_failure="block")],
                "PostToolUse": [HookMatcher(matcher=None, hooks=[self._post_tool_use])],
            },
            env={"BASH_DEFAULT_TIMEOUT_MS": timeout_ms, "BASH_MAX_TIMEOUT_MS": timeout_ms},
            stderr=on_stderr,
            # Mnemara's store is the history: no per-turn session transcripts piling up in ~/.claude/projects.
            extra_args={"no-session-persistence": None},
        )

    def _client_key(self, system_prompt: str) -> str:
        cfg = self.config
        material = {
            "system": system_prompt,
            "model": cfg.model,
            "mcp": [s.model_dump(mode="json") for s in cfg.mcp_servers],
            "tools": [s.name for s in enabled_specs(cfg)],
            "bash": cfg.bash_timeout_seconds,
            "cwd": self.cwd,
            "env": env_fingerprint(),
        }
        return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()

    def _spawn(self, system_prompt: str) -> CliHandle:
        from claude_agent_sdk import ClaudeSDKClient

        stderr: list[str] = []
        prompt = PromptFile(system_prompt)  # never argv: no 128 KiB limit, not visible in `ps`
        client = ClaudeSDKClient(self._options(prompt.sdk_value(), stderr))
        loop = asyncio.get_running_loop()
        ready = loop.create_task(client.connect())
        ready.add_done_callback(prompt.remove_after)  # the CLI has read it once connected (or failed/cancelled)
        return CliHandle(self._client_key(system_prompt), client, loop, ready, stderr)

    async def _take_client(self, system_prompt: str) -> CliHandle:
        """The spare process if it fits this turn, else a freshly started one."""
        key = self._client_key(system_prompt)
        spare, self._spare = self._spare, None
        if spare is not None:
            if spare.key == key and spare.loop is asyncio.get_running_loop():
                try:
                    await asyncio.wait_for(asyncio.shield(spare.ready), SPARE_WAIT_SECONDS)
                    if alive(spare.client):
                        self.stats["spare_used"] += 1
                        return spare
                    log_event(self.instance.debug_log_path, "spare_failed", level="warning", error="spare CLI exited")
                except Exception as exc:
                    log_event(self.instance.debug_log_path, "spare_failed", level="warning", error=repr(exc))
            await self._discard(spare)
        fresh = self._spawn(system_prompt)
        self.stats["fresh_started"] += 1
        try:
            await fresh.ready
        except BaseException:
            await self._discard(fresh)
            raise
        return fresh

    def _prepare_spare(self) -> None:
        """Start the next turn's CLI process now, with the options it will likely need."""
        if not self.warm_spare or self._closed:
            return
        try:
            self.reload_config()
            role = read_role_doc(self.config.role_doc_path)
            self._spare = self._spawn(self.system_prompt(role))
        except Exception as exc:
            log_event(self.instance.debug_log_path, "spare_failed", level="warning", error=repr(exc))

    def _background(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def prewarm(self) -> None:
        """Start the first turn's CLI now, in the background, for the sync :meth:`turn` API.

        A UI calls this when it opens, so the user's first message does not wait
        for the SDK import and the CLI start-up. No-op without ``warm_spare``.
        """
        if self.warm_spare and not self._closed and self._spare is None:
            self._ensure_sync_loop().call_soon_threadsafe(self._prepare_spare)
        self._preload_backends()

    async def aprewarm(self) -> None:
        """:meth:`prewarm` for callers that drive :meth:`aturn` on their own event loop."""
        if self.warm_spare and not self._closed and self._spare is None:
            self._prepare_spare()
        self._preload_backends()

    def _preload_backends(self) -> None:
        """Import LanceDB in a daemon thread so the first memory write does not pay 1-3 s for it."""
        if self.config.rag_enabled:
            preload_backend("lancedb")

    async def _discard(self, handle: CliHandle | None) -> None:
        """End a CLI process (on the loop it lives on)."""
        if handle is None:
            return
        try:
            current = asyncio.get_running_loop()
        except RuntimeError:
            current = None
        if handle.loop is current:
            if not handle.ready.done():
                handle.ready.cancel()
            try:
                await asyncio.wait_for(handle.client.disconnect(), 10)
            except BaseException:
                hard_kill(handle.client)
        elif handle.loop.is_running() and not handle.loop.is_closed():
            fut = asyncio.run_coroutine_threadsafe(self._discard(handle), handle.loop)
            try:
                await asyncio.wrap_future(fut)
            except BaseException:
                hard_kill(handle.client)
        else:
            hard_kill(handle.client)

    # -- permissions (called by the CLI) ---------------------------------------------------
    async def _pre_tool_use(self, input_data: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        name = str(input_data.get("tool_name", ""))
        tool_input = input_data.get("tool_input") or {}
        if self.sentinel is not None:
            refusal = self.sentinel.check(name, tool_input, tool_use_id)
            if refusal is not None:
                log_event(self.instance.debug_log_path, "sentinel_halt", level="warning", tool=name,
                          tool_input=tool_input, tool_use_id=tool_use_id, reason=refusal)
                return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                               "permissionDecisionReason": refusal}}
        for hook in list(self.pre_tool_use_hooks):
            out = hook(self, name, tool_input)
            if inspect.isawaitable(out):
                out = await out
            if out:
                return out
        decision = self.gate.decide(name, tool_input)
        log_event(self.instance.debug_log_path, "tool_call", tool=name, verdict=decision.verdict, reason=decision.reason,
                  tool_use_id=tool_use_id)
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": decision.verdict,
                                       "permissionDecisionReason": decision.reason}}

    async def _post_tool_use(self, input_data: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        """Hand a role doc edited mid-turn to the model with this tool result."""
        watch = self._role_watch
        text = watch.changed_text() if watch is not None else None
        if text is None:
            return {}
        log_event(self.instance.debug_log_path, "role_doc_refreshed_mid_turn", path=watch.path, tool_use_id=tool_use_id)
        return refresh_output(text)

    async def _can_use_tool(self, tool_name: str, tool_input: dict[str, Any], context: Any) -> Any:
        from claude_agent_sdk import PermissionResultAllow, PermissionResultDeny

        try:
            decision = await self.gate.ask_decision(tool_name, tool_input)
        except Exception as exc:
            log_event(self.instance.debug_log_path, "permission_prompt_error", level="error", error=repr(exc))
            return PermissionResultDeny(message=f"permission check failed: {exc}")
        if decision.verdict == "allow":
            return PermissionResultAllow()
        return PermissionResultDeny(message=decision.reason or f"{tool_name} was denied")

    # -- the turn ----------------------------------------------------------------------------------
    async def aturn(self, text: str) -> AsyncIterator[ev.Event]:
        """Run one turn, yielding events; the last one is always :class:`TurnDone`."""
        if self._closed:
            raise MnemaraError("this session is closed")
        if self.busy:
            raise MnemaraError("a turn is already running; /stop it first")
        if not isinstance(text, str) or not text.strip():
            raise MnemaraError("refusing to send an empty message")
        self.busy = True
        self._stop_requested = False
        self._turn_loop = asyncio.get_running_loop()
        try:
            async for event in self._run_turn(text):
                yield event
        finally:
            self.busy = False
            self._active = None

    async def _run_turn(self, text: str) -> AsyncIterator[ev.Event]:
        from mnemara.sdk_bridge import TurnCollector, classify_failure

        log = self.instance.debug_log_path
        user_id = self.store.append("user", text)
        try:
            cfg = self.reload_config()
        except MnemaraError as exc:
            yield self._error(exc.message, "config", user_id)
            yield ev.TurnDone(user_row_id=user_id, error=exc.message)
            return
        role = self.read_role()
        if role.warning:
            yield ev.Notice(role.warning)
        if not has_credentials():
            msg = no_key_message()
            yield self._error(msg, "no_api_key", user_id)
            yield ev.TurnDone(user_row_id=user_id, error=msg)
            return
        for problem in self.gate.new_problems():
            yield ev.Notice(problem)
        content = self.context_blocks(text, exclude_ids=(user_id,))
        watch = self._sentinel_for_turn(cfg)
        collector = TurnCollector(stream=cfg.stream)
        handle: CliHandle | None = None
        failure: ev.ErrorEvent | None = None
        try:
            handle = await self._take_client(self.system_prompt(role))
            self._active = handle
            if not self._stop_requested:
                await handle.client.query(one_message(content))
                async for message in handle.client.receive_response():
                    halted = False
                    for event in collector.feed(message):
                        yield event
                        if watch is not None and isinstance(event, ev.ToolResult):
                            halted = halted or watch.stop_after_tool_result(event.tool_use_id)
                    if halted:  # the sentinel refused a call: stop consuming, end the turn cleanly
                        break
            if collector.result is None and not self._stop_requested and not (watch and watch.halt):
                failure = ev.ErrorEvent(cli_failure(handle.stderr), "cli")
        except Exception as exc:
            if not self._stop_requested:
                failure = ev.ErrorEvent(exception_message(exc, handle.stderr if handle else []), "cli")
        finally:
            self._active = None
            if handle is not None:
                self._background(self._discard(handle))
        interrupted = self._stop_requested or (
            collector.result is not None and (collector.result.terminal_reason or "").startswith("aborted"))
        if failure is None and not interrupted:
            failure = classify_failure(collector)
        if failure is not None:
            yield self._error(failure.message, failure.kind, user_id, stderr=handle.stderr[-5:] if handle else [])
            partial_id = None
            if collector.blocks:  # tools already ran: keep what happened before the failure
                partial_id = self.store.append("assistant", collector.final_blocks(False), {
                    "usage": collector.usage, "cost_usd": collector.cost_usd, "model": cfg.model,
                    "user_row_id": user_id, "error": failure.message, "error_kind": failure.kind})
            self._prepare_spare()
            yield ev.TurnDone(usage=collector.usage, cost_usd=collector.cost_usd, user_row_id=user_id,
                              assistant_row_id=partial_id, error=failure.message)
            return
        meta = {"usage": collector.usage, "cost_usd": collector.cost_usd, "model": cfg.model,
                "interrupted": interrupted, "user_row_id": user_id}
        if watch is not None and watch.halt is not None:
            notice = watch.halt.notice(user_id)
            collector.blocks.append({"type": "text", "text": notice})
            meta["halted"] = "sentinel"
            log_event(log, "sentinel_halted_turn", level="warning", user_row_id=user_id, trigger=watch.halt.trigger,
                      call=watch.halt.call, count=watch.halt.count)
            yield ev.Halt(notice)
        if collector.result is not None:
            meta.update(duration_ms=collector.result.duration_ms, num_api_calls=collector.result.num_turns)
        assistant_id = self.store.append("assistant", collector.final_blocks(interrupted), meta)
        self.store.trim(self.window())
        if interrupted:
            log_event(log, "turn_interrupted", user_row_id=user_id, assistant_row_id=assistant_id)
        for hook in list(self.post_turn_hooks):
            try:
                hook(self, assistant_id)
            except Exception as exc:
                log_event(log, "post_turn_hook_error", level="error", hook=getattr(hook, "__name__", repr(hook)), error=repr(exc))
        self._prepare_spare()
        yield ev.TurnDone(usage=collector.usage, cost_usd=collector.cost_usd, interrupted=interrupted,
                          assistant_row_id=assistant_id, user_row_id=user_id)

    def _error(self, message: str, kind: str, user_id: int, **fields: Any) -> ev.ErrorEvent:
        log_event(self.instance.debug_log_path, "turn_error", level="error", kind=kind, message=message,
                  user_row_id=user_id, **fields)
        try:
            self.store.update_meta(user_id, error=message, error_kind=kind)
        except MnemaraError:
            pass
        return ev.ErrorEvent(message, kind)

    async def stop(self) -> bool:
        """Cancel the in-flight turn: its CLI process is ended, the turn is recorded as interrupted."""
        if not self.busy:
            return False
        self._stop_requested = True
        handle = self._active
        if handle is not None:
            hard_kill(handle.client)
            try:
                await asyncio.wait_for(handle.client.disconnect(), 10)
            except BaseException:
                pass
        log_event(self.instance.debug_log_path, "turn_stop_requested")
        return True

    def request_stop(self) -> bool:
        """Thread-safe, non-blocking :meth:`stop` (e.g. from a signal handler or another thread)."""
        loop = self._turn_loop
        if not self.busy or loop is None or loop.is_closed():
            return False
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            loop.create_task(self.stop())
        else:
            asyncio.run_coroutine_threadsafe(self.stop(), loop)
        return True

    # -- sync API ---------------------------------------------------------------------------------
    def _ensure_sync_loop(self) -> asyncio.AbstractEventLoop:
        if self._sync_loop is None:
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name="mnemara-session", daemon=True)
            thread.start()
            self._sync_loop, self._sync_thread = loop, thread
        return self._sync_loop

    def turn(self, text: str, on_event: Callable[[ev.Event], None] | None = None) -> ev.TurnResult:
        """Run one turn synchronously; ``on_event`` sees each event as it arrives."""

        async def collect() -> ev.TurnResult:
            out: list[ev.Event] = []
            async for event in self.aturn(text):
                out.append(event)
                if on_event is not None:
                    on_event(event)
            return ev.TurnResult(out)

        return asyncio.run_coroutine_threadsafe(collect(), self._ensure_sync_loop()).result()

    def run_coroutine(self, coro: Any) -> concurrent.futures.Future:
        """Schedule ``coro`` on the loop that runs :meth:`turn` (for helpers that must share it,
        e.g. the REPL's peer inbox); returns a concurrent future."""
        return asyncio.run_coroutine_threadsafe(coro, self._ensure_sync_loop())

    # -- closing ------------------------------------------------------------------------------------
    async def aclose(self) -> None:
        """End every CLI process of this session and close the store."""
        if self._closed:
            return
        self._closed = True
        for handle in (self._active, self._spare):
            await self._discard(handle)
        self._spare = self._active = None
        pending = [t for t in self._tasks if t.get_loop() is asyncio.get_running_loop()]
        if pending:
            await asyncio.wait(pending, timeout=15)
        self._finish_close()

    def close(self) -> None:
        """Synchronous :meth:`aclose` (safe to call twice)."""
        if self._closed:
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is None:
            loop = self._sync_loop or asyncio.new_event_loop()
            if loop is self._sync_loop:
                asyncio.run_coroutine_threadsafe(self.aclose(), loop).result(timeout=20)
            else:
                try:
                    loop.run_until_complete(self.aclose())
                finally:
                    loop.close()
        else:
            self._closed = True
            for handle in (self._active, self._spare):
                if handle is not None:
                    hard_kill(handle.client)
            self._finish_close()

    def _finish_close(self) -> None:
        self._closed = True
        self.store.close()
        if self._sync_loop is not None:
            self._sync_loop.call_soon_threadsafe(self._sync_loop.stop)
            self._sync_loop = None

    def __enter__(self) -> "AgentSession":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> "AgentSession":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

