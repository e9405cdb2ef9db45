"""AgentSession: one instance, one turn at a time, on the real Claude Agent SDK.

A turn (:meth:`AgentSession._run_turn`) is: store the user's message -> reload
config.json and read the role doc from disk -> build the context (pinned slots,
rolling window, per-turn extras, the new message; :mod:`mnemara.context.transcript`) ->
stream it through a Claude Code CLI process -> store the answer (or what a
failed turn did) -> trim the window and run the after-turn hooks. This module
is that sequence; its parts live beside it, one job each:

* :mod:`mnemara.session.state`: the turn in flight (:attr:`AgentSession.running`), which owns its state;
* :mod:`mnemara.session.stream`: its message through a CLI process, the events streamed back;
* :mod:`mnemara.session.record`: its rows in turns.sqlite, or the spool when the store refuses them;
* :mod:`mnemara.session.overflow`: "prompt is too long": evict to fit and send once more;
* :mod:`mnemara.claude.options`: SDK options, and the hooks/callbacks the CLI calls
  (sentinel, permission gate, mid-turn role doc refresh);
* :mod:`mnemara.claude.pool`: the CLI processes (the one serving a turn, the one kept for the next);
* :mod:`mnemara.session.warm_start`: what starts ahead of need (the next CLI, the backends);
* :mod:`mnemara.core.live_config`: config.json and this session's overrides, the one config every holder reads;
* :mod:`mnemara.core.sync_runner`: the loop thread behind the synchronous API.

The window *is* the history. The role doc is read from disk at the start of
every turn and handed to the CLI as ``--system-prompt-file``
(:mod:`mnemara.claude.prompt_file`; never argv), so an edit applies from the next
turn. A process that ended a turn cleanly serves the next one too, while its
options are unchanged: it continues its own conversation while the window only
grew since (``cli_conversation: continue``; :mod:`mnemara.context.continuation`
decides), else it is rewound to an empty conversation and the whole window is sent.
``warm_spare`` (default on; ``MNEMARA_WARM_SPARE=0`` turns it off) starts a
process ahead of time; ``reuse_cli=False`` (or ``MNEMARA_REUSE_CLI=0``) ends
every process after its turn; with both off every turn starts its own CLI,
exactly like ``claude_agent_sdk.query()``.

Domain parts (context discipline, auto-recall, the peer inbox) take part in a
turn as :class:`~mnemara.core.turn_parts.TurnPart` objects added with
:meth:`AgentSession.add_part`. For embedders there are also plain lists to
append callables to (called after the parts):

* ``post_turn_hooks``: ``fn(session, assistant_row_id)`` after each persisted turn.
* ``system_prompt_extras``: ``fn(session) -> str``; non-empty outputs are appended
  to the role doc text in the system prompt.
* ``pre_turn_context``: ``fn(session, user_text) -> str``; non-empty outputs are
  sent as extra text blocks for this turn only (not stored).
* ``pre_tool_use_hooks``: ``async/sync fn(session, tool_name, tool_input) -> dict | None``;
  a non-empty dict is returned to the CLI instead of the permission decision
  (e.g. the runtime sentinel denying a polling loop).
* ``config_listeners``: ``fn(config)`` whenever the live config changes.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import os
import sys
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Coroutine, Iterator
from contextlib import aclosing
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mnemara.core import events as ev
from mnemara.claude.pool import CliPool
from mnemara.claude.process import (
    CliHandle,
    cli_failure,
    hard_kill,
    exception_message,
    has_credentials,
    new_message_id,
    no_key_message,
)
from mnemara.core.config import Config
from mnemara.core.debuglog import log_event
from mnemara.core.errors import MnemaraError, StoreUnavailable
from mnemara.store.instance import Instance
from mnemara.core.live_config import LiveConfig
from mnemara.session.overflow import evict_to_fit
from mnemara.guard.gate import PermissionGate
from mnemara.guard.request import PermissionRequest
from mnemara.claude.role_refresh import RoleDocWatch
from mnemara.core.roledoc import RoleDoc, read_role_doc
from mnemara.claude.options import CliLauncher, LaunchNeeds
from mnemara.guard.sentinel import SentinelSettings, SentinelWatch
from mnemara.store.rows import Window
from mnemara.store.turns import TRIM_BATCH, TurnStore
from mnemara.core.sync_runner import LoopThread, running_loop, schedule_on
from mnemara.tools import ToolContext
from mnemara.context.continuation import Conversation, continues, row_prints
from mnemara.context.transcript import build_user_content
from mnemara.core.tokens import estimate_blocks
from mnemara.context.window_leave import left_line
from mnemara.core.turn_parts import P, TurnPart, call_each
from mnemara.session.record import TurnRecorder, storable_text
from mnemara.session.state import RunningTurn, TurnFlight
from mnemara.session.spend import SessionSpend
from mnemara.session.stream import exchange
from mnemara.session.usage import StatsFile
from mnemara.session.warm_start import WarmNeeds, WarmStart

if TYPE_CHECKING:
    from mnemara.memory.autorecall import AutoRecall
    from mnemara.peer.inbox import PeerInbox

PermissionPrompt = Callable[[PermissionRequest], "Awaitable[str | None] | str | None"]

#: How long :meth:`AgentSession.close` waits for its CLI processes to end gracefully before it
#: kills them (a kept process is killed at once; this bounds a turn's process ending politely).
CLOSE_WAIT_SECONDS = 20.0


class AgentSession:
    """Drive turns on one instance. Not thread-safe: one turn at a time."""

    def __init__(self, instance: Instance, *, permission_prompt: PermissionPrompt | None = None,
                 cwd: str | Path | None = None, warm_spare: bool | None = None,
                 reuse_cli: bool | None = None) -> None:
        self.instance = instance
        self.live_config = LiveConfig(instance.config_path, self._config_changed)  # see mnemara.core.live_config
        self.session_overrides = self.live_config.overrides  # /swap --temp, /tokens --temp: this session only
        self.store = TurnStore(instance.turns_path)
        self.tool_context = ToolContext(instance=instance, live=self.live_config, store=self.store)
        self.permission_prompt = permission_prompt
        self.cwd = str(cwd or os.getcwd())
        self.tool_context.cwd = self.cwd
        if warm_spare is None:
            warm_spare = _env_flag("MNEMARA_WARM_SPARE")
        if reuse_cli is None:
            reuse_cli = _env_flag("MNEMARA_REUSE_CLI")
        self.pool = CliPool(instance.logger, reuse=reuse_cli)
        self.stats = self.pool.stats  # how each turn got its CLI process
        self.gate = PermissionGate(self.config, instance, permission_prompt, cwd=Path(self.cwd))
        self.gate.tool_context = self.tool_context  # the store a tool's ask check reads (unpin_row of your pin)
        self.running: RunningTurn | None = None  # the turn in flight; it owns its state (mnemara.session.state)
        self._sentinel: SentinelWatch | None = None  # the runtime sentinel: its memory of past turns spans turns
        self.launcher = CliLauncher(LaunchNeeds(self.live_config, self.cwd, self.tool_context, self.gate,
                                                instance.debug_log_path, lambda: self.running, self._tool_call_hooks))
        self._recording_env: dict[str, str] = {}
        self.spend = SessionSpend(instance.root, self.live_config, lambda: self.running, lambda: self._flight)
        self._record_requests(self.config)  # every CLI's API calls go through this instance's request recorder
        self.warm = WarmStart(WarmNeeds(self.live_config, instance, self.pool, self.launcher, self._next_prompt,
                                        lambda: self._closed, self._recall_elsewhere), enabled=warm_spare)
        self.recorder = TurnRecorder(instance, self.store)  # the turn's rows, or the spool
        #: Print warnings (e.g. a missing role doc) to stderr; UIs that render Notice events turn it off.
        self.warn_to_stderr = True
        self.busy = False
        self.shown_code_blocks: list[str] | None = None  # set by a UI that numbers code blocks (/copy N)
        self.post_turn_hooks: list[Callable[[AgentSession, int], None]] = []
        self.system_prompt_extras: list[Callable[[AgentSession], str]] = []
        self.pre_turn_context: list[Callable[[AgentSession, str], str]] = []
        self.pre_tool_use_hooks: list[Callable[[AgentSession, str, dict[str, Any]], Any]] = []
        self.config_listeners: list[Callable[[Config], None]] = []
        self.parts: list[TurnPart] = []  # domain parts of every turn (see mnemara.core.turn_parts)
        self.usage_stats = StatsFile(instance.root / "stats")  # tokens, cost, cache hits per session (/stats)
        self.peer_inbox: PeerInbox | None = None  # set by mnemara.peer.attach_inbox
        self._flight: TurnFlight | None = None  # the turn in flight from aturn's start to its end
        self._sync = LoopThread("mnemara-session")
        self._closed = False
        from mnemara.context.hooks import install as install_context_hooks

        install_context_hooks(self)  # read tracking, auto-eviction, the file-stat manifest (a TurnPart)
        from mnemara.memory.autorecall import install as install_auto_recall

        self.auto_recall: AutoRecall = install_auto_recall(self)  # a TurnPart; acts only when auto_recall is on

    def add_part(self, part: P) -> P:
        """Let a domain part take part in every turn from now on (once; returns it)."""
        if all(p is not part for p in self.parts):
            self.parts.append(part)
        return part

    @classmethod
    def open(cls, name: str, **kwargs: Any) -> AgentSession:
        """Open the instance called ``name`` under ``$MNEMARA_HOME``."""
        return cls(Instance.open(name), **kwargs)

    @classmethod
    def at(cls, folder: str | Path, *, config: Config | None = None, **kwargs: Any) -> AgentSession:
        """Embed: a session on an instance living in ``folder`` (created if missing).

        ``config``, when given, is saved to the folder's config.json first.
        """
        instance = Instance.at(Path(folder))
        if config is not None:
            config.save(instance.config_path)
        return cls(instance, **kwargs)

    @property
    def config(self) -> Config:
        """The live config (config.json, this session's overrides on top): read from the one
        :class:`~mnemara.core.live_config.LiveConfig`, never a copy."""
        return self.live_config.current

    @property
    def warm_spare(self) -> bool:
        """Whether the next turn's CLI is started ahead of need (:mod:`mnemara.session.warm_start`)."""
        return self.warm.enabled

    @warm_spare.setter
    def warm_spare(self, on: bool) -> None:
        self.warm.enabled = on

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` / :meth:`aclose` has run (no more turns)."""
        return self._closed

    def set_permission_prompt(self, prompt: PermissionPrompt | None) -> None:
        """Swap the UI callback that answers permission questions (y/n/a/s)."""
        self.permission_prompt = prompt
        self.gate.prompt = prompt

    # -- the live config -------------------------------------------------------------
    def reload_config(self) -> Config:
        """Re-read config.json (hand edits apply to the next call) and hand it to every holder;
        this session's temporary overrides (``/swap --temp``) stay on top."""
        return self.live_config.reload()

    def update_config(self, **changes: Any) -> Config:
        """Change fields of config.json: validated (nothing is saved when a value is refused,
        :class:`~mnemara.core.errors.ConfigError`), saved atomically, then live for every holder."""
        return self.live_config.update(**changes)

    def override_config(self, **changes: Any) -> Config:
        """Change fields for this session only (validated, never saved; config.json is untouched)."""
        return self.live_config.override(**changes)

    def apply_config(self, config: Config) -> Config:
        """Make ``config`` (already saved, e.g. by ``/import``) the live config."""
        return self.live_config.adopt(config)

    def _config_changed(self, config: Config) -> None:
        """The live config is now ``config``: what keeps state built from it (the permission gate's
        policy index, the request recorder, the parts, every ``config_listeners`` callback) adopts it;
        the tools, the launcher and the warm start read it when they need it."""
        self._record_requests(config)
        self.gate.set_config(config)
        call_each(self.instance.debug_log_path, "config_changed", self.parts, lambda part: part.config_changed(config))
        call_each(self.instance.debug_log_path, "config_listener", self.config_listeners, lambda listener: listener(config))

    def _record_requests(self, config: Config) -> None:
        """Point the launcher's CLIs at the request recorder (:mod:`mnemara.claude.recorder`), or at the API
        itself when ``request_log_calls`` is 0; through #30's seam, ``CliLauncher.env_overrides``."""
        from mnemara.claude.recorder import request_env

        overrides = self.launcher.env_overrides
        for key, value in self._recording_env.items():  # what this method set before
            if overrides.get(key) == value:
                del overrides[key]
        self._recording_env = request_env(self.instance.root, config.request_log_calls, gate=self.spend.gate,
                                          gate_needed=self.spend.needs_relay(config))
        overrides.update(self._recording_env)

    # -- per-turn inputs ------------------------------------------------------------
    def _sentinel_for_turn(self, cfg: Config) -> SentinelWatch | None:
        """The session's runtime sentinel when ``runtime_sentinel`` is on (the last turns' outputs
        span turns, for its ``no_progress`` trigger; new settings start a new sentinel)."""
        if not cfg.runtime_sentinel:
            self._sentinel = None
            return None
        settings = SentinelSettings.from_config(cfg)
        if self._sentinel is None or self._sentinel.settings != settings:
            self._sentinel = SentinelWatch(settings)
        self._sentinel.begin_turn()
        return self._sentinel

    async def _tool_call_hooks(self, name: str, tool_input: dict[str, Any]) -> dict[str, Any] | None:
        """The ``pre_tool_use_hooks``, in order, for one tool call: the first non-empty answer."""
        for hook in list(self.pre_tool_use_hooks):
            out = hook(self, name, tool_input)
            if inspect.isawaitable(out):
                out = await out
            if out:
                return out
        return None

    def _next_prompt(self) -> str:
        """The system prompt the next turn will likely send: config.json re-read, the role doc from disk."""
        cfg = self.reload_config()
        return self.system_prompt(read_role_doc(cfg.role_doc_path))

    def _recall_elsewhere(self) -> bool:
        """Whether a recall worker process holds the index (so this one need not load LanceDB)."""
        return getattr(getattr(self, "auto_recall", None), "worker", None) is not None

    def read_role(self) -> RoleDoc:
        """Read the role doc now; a missing/unreadable one warns on stderr and in debug.log."""
        role = read_role_doc(self.config.role_doc_path)
        if role.warning:
            if self.warn_to_stderr:
                print(f"warning: {role.warning}", file=sys.stderr)
            log_event(self.instance.debug_log_path, "role_doc_warning", level="warning", path=role.path, warning=role.warning)
        return role

    def system_prompt(self, role: RoleDoc) -> str:
        """The role doc text, then each part's and each ``system_prompt_extras`` text that is not empty."""
        log = self.instance.debug_log_path
        extras = [*call_each(log, "system_prompt_extra", self.parts, lambda part: part.system_prompt_extra(self)),
                  *call_each(log, "system_prompt_extra", self.system_prompt_extras, lambda extra: extra(self))]
        parts = [role.text, *(text for text in extras if text and text.strip())]
        return "\n\n".join(p for p in parts if p)

    def window(self) -> Window:
        """The rolling window under the current config's caps (pinned rows + live rows)."""
        return self.store.window_for(self.config)

    def context_blocks(self, text: str, exclude_ids: tuple[int, ...] = ()) -> list[dict[str, Any]]:
        """The content blocks of the user message this turn would send.

        The window is selected with the new user row already stored (so the caps
        count it) and that row is then left out of the history, as it is sent last.
        """
        return self._message(text, exclude_ids)[0]

    def _message(self, text: str, exclude_ids: tuple[int, ...],
                 turn: RunningTurn | None = None) -> tuple[list[dict[str, Any]], list[int], Window]:
        """:meth:`context_blocks`, the ids of the damaged rows its window left out, and that window.

        For a ``turn``, the message is only its own part (slots, per-turn blocks, the message) when
        it continues the kept CLI's conversation (:func:`~mnemara.context.continuation.continues`);
        the whole message is kept on the turn (``rebuilt``) in case the process cannot continue.
        """
        log = self.instance.debug_log_path
        extras = [*call_each(log, "pre_turn_context", self.parts, lambda part: part.turn_context(self, text) or ""),
                  *call_each(log, "pre_turn_context", self.pre_turn_context, lambda fn: fn(self, text) or "")]
        win = self.window()
        rows = [t for t in win.rows if t.id not in exclude_ids]
        cfg = self.config
        content = build_user_content(win.pinned, rows, text, extras, layout=cfg.request_layout, ttl=cfg.cache_ttl)
        if turn is not None:
            own = build_user_content(win.pinned, [], text, extras, layout=cfg.request_layout, ttl=cfg.cache_ttl)
            turn.sent_rows, turn.rebuilt, turn.part_tokens = rows, content, estimate_blocks(own[:-1])
            kept = self.pool.spare
            conversation = kept.conversation if kept is not None and kept.key == self.launcher.key(turn.system_prompt) else None
            why = "cli_conversation is rebuild" if cfg.cli_conversation == "rebuild" else continues(
                conversation, win, exclude_ids, layout=cfg.request_layout, max_tokens=cfg.max_window_tokens)
            if conversation is not None:
                log_event(log, "cli_conversation", continued=why is None, reason=why, turns=conversation.turns)
            if why is None:
                turn.continuing, content = conversation, own
        return content, [t.id for t in win.damaged], win

    def spooled_rows(self) -> int:
        """How many rows wait in spool.jsonl because turns.sqlite could not take them (the next turn
        stores them first); a UI says so when it opens, as they are not in the window yet."""
        try:
            return self.recorder.spool.count()
        except OSError:
            return 0

    # -- CLI processes ----------------------------------------------------------------
    async def _take_client(self, system_prompt: str, continuing: Conversation | None = None) -> CliHandle:
        """The spare process if it fits this turn (still holding ``continuing``, the conversation the
        turn continues, else emptied), else a freshly started one."""
        return await self.pool.take(self.launcher.key(system_prompt), lambda: self.launcher.launch(system_prompt),
                                    continuing.start_id if continuing is not None else None)

    def prewarm(self) -> None:
        """Start the first turn's CLI now, in the background, for the sync :meth:`turn` API.

        A UI calls this when it opens, so the user's first message does not wait
        for the SDK import and the CLI start-up. No-op without ``warm_spare``.
        Nothing else heavy is loaded at start (see :mod:`mnemara.session.warm_start`).
        """
        if self.warm.wanted():
            self._sync.call_soon(self.warm.next_cli)

    async def aprewarm(self) -> None:
        """:meth:`prewarm` for callers that drive :meth:`aturn` on their own event loop."""
        if self.warm.wanted():
            self.warm.next_cli()

    # -- the turn ----------------------------------------------------------------------------------
    async def aturn(self, text: str) -> AsyncGenerator[ev.Event, None]:
        """Run one turn, yielding events; the last one is always :class:`TurnDone`."""
        if self._closed:
            raise MnemaraError("this session is closed")
        if self.busy:
            raise MnemaraError("a turn is already running; /stop it first")
        if not isinstance(text, str):
            raise MnemaraError(f"a message is text (str), not {type(text).__name__}; nothing was sent or stored")
        if not text.strip():
            raise MnemaraError("refusing to send an empty message")
        self.busy = True
        self._flight = TurnFlight(asyncio.get_running_loop())
        try:
            async for event in self._run_turn(text):
                self.usage_stats.observe(event)
                yield event
        finally:
            self.spend.forget_turn()
            self.busy = False
            self.running = self._flight = None
            self.pool.active = None

    async def _run_turn(self, text: str) -> AsyncIterator[ev.Event]:
        """The steps of a turn; every way out ends with :class:`TurnDone`."""
        text, replaced = storable_text(text)
        if replaced:
            yield ev.Notice(f"{replaced} character(s) of your message were not valid UTF-8 (undecodable bytes); "
                            "each is kept and sent as \ufffd")
        user_id, events = self.recorder.user_message(text)  # stored first (or spooled): nothing typed is lost
        for event in events:
            yield event
        if user_id is None:
            return
        self.tool_context.state.turn_row = user_id  # the turn an agent's note came from (memory provenance)
        turn, events = self._open_turn(user_id)
        for event in events:
            yield event
        if turn is None:  # refused before any CLI was involved
            return
        for extra in call_each(self.instance.debug_log_path, "answer_meta", self.parts,
                               lambda part: part.answer_meta(self, text)):
            turn.answer_meta.update(extra or {})
        content, events = self._context_for(turn, text)
        for event in events:
            yield event
        if content is None:
            return
        async for event in self._stream(turn, content):
            yield event
        evicted = evict_to_fit(turn, text, self.store, self.instance.debug_log_path)
        if evicted is not None:  # "prompt is too long" and rows were evicted: send the turn once more
            yield evicted
            again, _ = self._open_turn(user_id)
            if again is not None:
                turn = again
                async for event in self._stream(turn, self.context_blocks(text, exclude_ids=(user_id,))):
                    yield event
        for event in self._finish(turn):
            yield event

    def _open_turn(self, user_id: int) -> tuple[RunningTurn | None, list[ev.Event]]:
        """Step 1: config, role doc, credentials, permission file problems. Returns the turn and
        notices, or (None, an error and :class:`TurnDone`) when the turn cannot run."""
        try:
            cfg = self.reload_config()
        except MnemaraError as exc:
            return None, self.recorder.refusal(exc.message, "config", user_id)
        role = self.read_role()
        notices: list[ev.Event] = [ev.Notice(role.warning)] if role.warning else []
        if not has_credentials():
            return None, [*notices, *self.recorder.refusal(no_key_message(), "no_api_key", user_id)]
        notices += [ev.Notice(problem) for problem in self.gate.new_problems()]
        turn = self.running = RunningTurn(user_id, cfg, role, self.system_prompt(role),
                                          watch=self._sentinel_for_turn(cfg), role_watch=RoleDocWatch(role.path, role.text))
        self.spend.begin(turn)  # its calls are counted, and capped, together (mnemara.session.spend)
        return turn, notices

    def _context_for(self, turn: RunningTurn, text: str) -> tuple[list[dict[str, Any]] | None, list[ev.Event]]:
        """Step 2: the message to send (window + extras + text) and notices of damaged rows left out;
        (None, an error and :class:`TurnDone`) when the window cannot be read."""
        try:
            content, turn.damaged, window = self._message(text, (turn.user_id,), turn)
            if window.passed:  # the rows this request no longer sends leave now, so the next one starts alike
                turn.left, turn.left_window = self.store.trim_ids(window), window
        except StoreUnavailable as exc:  # the message is stored; the window cannot be read
            return None, self.recorder.refusal(f"cannot read the window: {exc.message}", "store", turn.user_id)
        return content, self.recorder.damaged_notices(turn.damaged)

    async def _stream(self, turn: RunningTurn, content: list[dict[str, Any]]) -> AsyncIterator[ev.Event]:
        """Step 3: send the message through a CLI process and yield its events until the turn ends,
        the sentinel halts it or it is stopped (:mod:`mnemara.session.stream`); then judge how it ended."""
        message_id = new_message_id()
        if self.launcher.early is not None and self.pool.spare is None:  # the first turn of `mnemara run`
            self.launcher.presend(turn.system_prompt, content, message_id)  # sent now when the early CLI fits
        try:
            turn.handle = handle = self.pool.active = await self._take_client(turn.system_prompt, turn.continuing)
            if turn.continuing is not None and handle.conversation is not turn.continuing:
                turn.continuing, content = None, turn.rebuilt  # that process is gone: a fresh one gets it all
            self.tool_context.state.carried_tokens = turn.continuing.carried_tokens if turn.continuing else 0
            turn.collector.cost_base = handle.cost_so_far
            if not self._stopped():
                async with aclosing(exchange(turn, handle, content, message_id)) as events:
                    async for event in events:
                        yield event
            ended_early = (self._stopped() or (turn.watch and turn.watch.halt) or turn.collector.auth_rejected
                           or turn.capped)
            if turn.collector.result is None and not ended_early:
                turn.failure = ev.ErrorEvent(cli_failure(turn.stderr), "cli")
        except Exception as exc:
            if not self._stopped():
                turn.failure = ev.ErrorEvent(exception_message(exc, turn.stderr), "cli")
        finally:
            if turn.handle is not None:
                self._halt_spending(turn)
                self._release(turn, message_id)
            self.pool.active = None
        turn.judge(self._stopped())
        if turn.capped:  # the refused request is the cap's doing, not an API failure
            turn.failure = None

    def _halt_spending(self, turn: RunningTurn) -> None:
        """A halt (sentinel or cap) stops spending at once: the recorder refuses the turn's further
        requests and its CLI is killed now, as ``/stop`` does, not shut down politely meanwhile."""
        halt = turn.watch.halt if turn.watch is not None else None
        if halt is None and not turn.capped:
            return
        self.spend.halt(turn.capped or f"SENTINEL HALT (trigger: {halt.trigger if halt else ''})")
        if turn.handle is not None:
            hard_kill(turn.handle.client)

    def _stopped(self) -> bool:
        """Whether ``/stop`` was asked of the turn in flight."""
        return self._flight is not None and self._flight.stop_requested

    def _release(self, turn: RunningTurn, message_id: str) -> None:
        """Hand the turn's CLI back: kept for the next turn (rewound to an empty conversation) only
        when the turn ended cleanly: a result, no error, not stopped or halted, no background task."""
        assert turn.handle is not None
        result = turn.collector.result
        if result is not None and result.total_cost_usd is not None:
            turn.handle.cost_so_far = result.total_cost_usd  # the process's running total: the next turn's base
        clean = turn.ended_cleanly(self._stopped())
        self.pool.release(turn.handle, message_id if clean else None,
                          keep_conversation=clean and turn.cfg.cli_conversation == "continue")

    def _keep_conversation(self, turn: RunningTurn, done: ev.TurnDone) -> None:
        """The turn's answer is stored: say what its kept CLI's conversation now holds (the rows it
        was built from, then this turn's message and answer), or have it rewound when it holds what
        the window does not (the answer could not be stored)."""
        handle = turn.handle
        if handle is None or handle is not self.pool.spare or handle.open_since is None:
            return
        if done.error is not None or done.interrupted or done.assistant_row_id is None or done.user_row_id is None:
            self.pool.rewind_spare()
            return
        base = turn.continuing or Conversation(handle.open_since, row_prints(turn.sent_rows), turn.cfg.request_layout)
        try:
            rows = [self.store.get(done.user_row_id), self.store.get(done.assistant_row_id)]
        except MnemaraError:
            self.pool.rewind_spare()
            return
        handle.conversation = base.grown(rows, turn.part_tokens, continued=turn.continuing is not None,
                                         prompt_tokens=turn.collector.last_prompt_tokens)

    def _finish(self, turn: RunningTurn) -> Iterator[ev.Event]:
        """Step 4: store the answer, or say what failed and keep what it did (:mod:`mnemara.session.record`);
        the after-turn work runs just before :class:`TurnDone`."""
        record = self.recorder.failure if turn.failure is not None else self.recorder.answer
        for event in record(turn):
            if isinstance(event, ev.TurnDone):
                event = self.spend.finish(event)  # what its calls cost, from the ledger
                yield from self.spend.closing_notices(turn)
                self._keep_conversation(turn, event)
                yield from self._after_turn(event, turn)
            yield event

    def _after_turn(self, done: ev.TurnDone, turn: RunningTurn) -> list[ev.Event]:
        """Say which rows left the window (before the request, and now that the answer is stored: one
        line), trim it, run the parts' and the post-turn hooks for a stored answer.
        Every turn that reached a CLI: start the next one's process (and, once, the backends)."""
        answer_id = done.assistant_row_id if done.error is None else None
        notices: list[ev.Event] = []
        left, window = list(turn.left), turn.left_window
        if answer_id is not None:
            now = self.window()
            after = self.store.trim_ids(now)  # the live rows the caps now leave out: they just left the window
            if after:
                left, window = left + after, now
            if len(after) >= TRIM_BATCH:  # a bulk import left more: evict it while the user reads
                self.store.finish_trim_later(now)
        if left and window is not None:
            notices.append(ev.Notice(left_line(left, window, self.config), level="info"))
            log_event(self.instance.debug_log_path, "rows_left_window", row_ids=left)
        if answer_id is not None:
            self._run_post_turn_hooks(answer_id)
        self._rewind_if_changed()
        self.warm.next_cli()
        if answer_id is not None:
            self.warm.backends()
        return notices

    def _rewind_if_changed(self) -> None:
        """A trim or an after-turn hook changed the window already: empty the kept conversation now,
        while the user reads, rather than when the next turn takes the process."""
        kept = self.pool.spare
        if kept is None or kept.open_since is None:
            return
        cfg = self.config
        try:
            why = continues(kept.conversation, self.window(), (), layout=cfg.request_layout,
                            max_tokens=cfg.max_window_tokens)
        except StoreUnavailable:
            why = "the window cannot be read"
        if why is not None:
            self.pool.rewind_spare()

    def _run_post_turn_hooks(self, assistant_id: int) -> None:
        log = self.instance.debug_log_path
        call_each(log, "post_turn_hook", self.parts, lambda part: part.after_turn(self, assistant_id))
        call_each(log, "post_turn_hook", self.post_turn_hooks, lambda hook: hook(self, assistant_id))

    async def stop(self) -> bool:
        """Cancel the in-flight turn: its CLI process is ended, the turn is recorded as interrupted."""
        flight = self._flight
        if not self.busy or flight is None:
            return False
        flight.stop_requested = True
        self.spend.halt("stopped with /stop")
        handle = self.pool.kill_active()
        if handle is not None:
            try:
                await asyncio.wait_for(handle.client.disconnect(), 10)
            except BaseException:
                pass
        log_event(self.instance.debug_log_path, "turn_stop_requested")
        return True

    def request_stop(self) -> bool:
        """Thread-safe, non-blocking :meth:`stop` (e.g. from a signal handler or another thread)."""
        flight = self._flight
        if not self.busy or flight is None or flight.loop.is_closed():
            return False
        schedule_on(flight.loop, self.stop())
        return True

    # -- sync API ---------------------------------------------------------------------------------
    def turn(self, text: str, on_event: Callable[[ev.Event], None] | None = None) -> ev.TurnResult:
        """Run one turn synchronously; ``on_event`` sees each event as it arrives."""

        async def collect() -> ev.TurnResult:
            out: list[ev.Event] = []
            async for event in self.aturn(text):
                out.append(event)
                if on_event is not None:
                    on_event(event)
            return ev.TurnResult(out)

        return self._sync.run(collect())

    def run_coroutine(self, coro: Coroutine[Any, Any, Any]) -> concurrent.futures.Future[Any]:
        """Schedule ``coro`` on the loop that runs :meth:`turn` (for helpers that must share it,
        e.g. the REPL's peer inbox); returns a concurrent future."""
        return self._sync.submit(coro)

    # -- closing ------------------------------------------------------------------------------------
    async def aclose(self) -> None:
        """End every CLI process of this session, release the graph file and close the store."""
        if self._closed:
            return
        self._closed = True
        await self.pool.aclose()
        self._finish_close()

    def close(self) -> None:
        """Synchronous :meth:`aclose` (safe to call twice)."""
        if self._closed:
            return
        if running_loop() is not None:  # inside someone's loop: nothing to wait on, end the processes now
            self._closed = True
            self.pool.kill_all()
            self._finish_close()
        else:
            try:
                self._sync.run_to_end(self.aclose(), timeout=CLOSE_WAIT_SECONDS)
            except concurrent.futures.TimeoutError:  # a slow machine: closing never fails the caller
                log_event(self.instance.debug_log_path, "close_timeout", level="warning",
                          seconds=CLOSE_WAIT_SECONDS)
                self.pool.kill_all()
                self._finish_close()

    def _finish_close(self) -> None:
        from mnemara.claude.recorder import stop_recorders

        self._closed = True
        stop_recorders(self.instance.root)
        self.spend.ledger.close()
        self.tool_context.state.close()
        self.store.close()
        self._sync.stop()

    def __enter__(self) -> AgentSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> AgentSession:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _env_flag(name: str) -> bool:
    """An on/off environment switch, on unless set to 0/false/no/off."""
    return os.environ.get(name, "1").strip().lower() not in ("0", "false", "no", "off")

