"""The permission gate: which tool call may run, and asking the user when unsure.

Every tool call the model makes passes :meth:`PermissionGate.decide` (the session
calls it from a ``PreToolUse`` hook, which the CLI runs for *every* call, even the
ones it would auto-approve). The order of checks is fixed:

1. ``file_tool_home_only``: a file tool aimed outside ``$HOME`` and outside every
   folder of ``file_tool_roots`` (after resolving ``..`` and symlinks, see
   :mod:`mnemara.guard.file_roots`) is denied and logged to ``debug.log``; an in-process tool
   declaring ``file_args`` (``read_skeleton``) is a file tool too, governed by the
   Read policy as well as its own;
2. a ``deny`` policy denies;
3. a tool the user allowed for this session (answer ``s``) is allowed;
4. a regex of ``allowed_patterns`` (config.json and permissions.json) matching the
   call's *target* allows (the command for Bash, the path for file tools);
5. otherwise the tool's mode decides: ``allow``, ``ask`` or ``deny``.

``ask`` is resolved by :meth:`PermissionGate.ask` through a prompt callable the UI
supplies (REPL line, TUI modal, an embedder's callback). No prompt means deny.

Policies name tools as the spec does (``Bash``, ``Read``, ``WriteMemory``) or by the
model-facing name (``mcp__mnemara__write_memory``, ``mcp__fetch__fetch``); a policy
``mcp__<server>`` covers every tool of that server.
"""
from __future__ import annotations

import asyncio
import inspect
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Mapping
from typing import Any, Awaitable, Callable, Literal, Optional, Union

from mnemara.core import json_limits
from mnemara.core.config import Config
from mnemara.core.debuglog import log_event
from mnemara.core.fsutil import atomic_write_text, locked
from mnemara.store.instance import Instance
from mnemara.guard.file_roots import FileRoots, real_homes
from mnemara.guard.tool_catalogue import CATALOGUE, AskContext
from mnemara.guard.guarded_files import GuardedFiles
from mnemara.guard.bash_patterns import match_bash
from mnemara.guard.checks import loose_bash_patterns, process_relative_path
from mnemara.guard.request import FILE_TOOLS, PermissionRequest, stable_json
from mnemara.guard.target_text import show_target

Verdict = Literal["allow", "ask", "deny"]
MODES = ("allow", "ask", "deny")
MCP_PREFIX = "mcp__"
OWN_SERVER = "mnemara"

#: Built-in tools and their mode when config.json has no policy for them.
BUILTIN_DEFAULTS: dict[str, Verdict] = {"Bash": "ask", "Read": "allow", "Write": "ask", "Edit": "ask",
                                        "Grep": "allow", "Glob": "allow", "WebFetch": "ask"}
#: Opt-in built-ins that read the files under a folder (``path``, default the session's folder): file tools
#: whose folder the home-only rule and ``file_tool_roots`` judge, governed by the Read policy too.
SEARCH_TOOLS = ("Grep", "Glob")
#: File tools that only read: a guarded file (config.json, the role doc) is no reason to ask.
READING_TOOLS = ("Read", *SEARCH_TOOLS)
#: Built-ins that are governed by another tool's policy (they write files like Edit does).
POLICY_ALIASES = {"MultiEdit": "Edit", "NotebookEdit": "Edit"}
ANSWERS = {"y": "y", "yes": "y", "n": "n", "no": "n", "a": "a", "always": "a", "s": "s", "session": "s"}


@dataclass(frozen=True)
class Decision:
    """The gate's answer for one call and why (the reason reaches the model on deny)."""

    verdict: Verdict
    reason: str


PromptAnswer = Optional[str]
Prompt = Callable[[PermissionRequest], Union[PromptAnswer, Awaitable[PromptAnswer]]]


#: Mnemara 0.18 policy names that differ from ours -> the in-process tool each governs here.
LEGACY_POLICY_NAMES = {
    "GraphAddNode": "graph_add_node", "GraphAddEdge": "graph_add_edge", "GraphNeighbors": "graph_neighbors",
    "GraphMatch": "graph_match", "GraphShortestPath": "graph_shortest_path",
    "EvictThinking": "evict_thinking_blocks", "EvictToolUse": "evict_tool_use_blocks", "EvictWrites": "evict_write_pairs",
}
#: The spec's own policy names for in-process tools, even if a tool module forgets to declare them.
SPEC_POLICY_NAMES = {f"{MCP_PREFIX}{OWN_SERVER}__write_memory": "WriteMemory"}


def _own_policy_names() -> dict[str, str]:
    """Model-facing name -> policy name for in-process tools that declare one."""
    names = dict(SPEC_POLICY_NAMES)
    names.update({e.qualified_name: e.policy_name for e in CATALOGUE if e.policy_name})
    return names


def file_path_of(tool_input: dict[str, Any], keys: tuple[str, ...]) -> Any:
    """The file a file tool opens: the first of ``keys`` given a value (None if none is)."""
    return next((tool_input[key] for key in keys if tool_input.get(key)), None)


def target_of(tool_name: str, tool_input: dict[str, Any], file_args: tuple[str, ...] = ()) -> str:
    """What ``allowed_patterns`` match: Bash's command, a file tool's path, else the input as JSON.

    ``file_args`` names the path arguments of an in-process file tool (``ToolSpec.file_args``).
    """
    if tool_name == "Bash":
        command = tool_input.get("command")
        return command if isinstance(command, str) else stable_json(tool_input)
    if tool_name == "WebFetch":  # a network tool: the URL is what is asked and matched, shown whole
        url = tool_input.get("url")
        return url if isinstance(url, str) else stable_json(tool_input)
    key = FILE_TOOLS.get(tool_name)
    keys = (key,) if key is not None else file_args
    if keys:
        path = file_path_of(tool_input, keys)
        return path if isinstance(path, str) else ""
    return stable_json(tool_input)


def always_pattern(target: str) -> str:
    """The regex an ``a`` answer persists: exactly this target, nothing more."""
    return r"\A" + re.escape(target) + r"\Z"


_HOME_CACHE: dict[str, str] = {}


def _real_home() -> str:
    """``$HOME`` with symlinks resolved (cached per value of ``$HOME``)."""
    raw = os.path.expanduser("~")
    real = _HOME_CACHE.get(raw)
    if real is None:
        real = _HOME_CACHE[raw] = os.path.realpath(raw)
    return real


def is_inside_home(path: str, cwd: Path | None = None) -> tuple[bool, str]:
    """Whether ``path`` (``~`` expanded, relative to ``cwd``) resolves under ``$HOME``.

    Returns ``(inside, resolved)``. ``..`` and symlinks are resolved first, so a
    link inside home that points outside counts as outside.
    """
    home = _real_home()
    expanded = os.path.expanduser(path)
    if not os.path.isabs(expanded):
        expanded = os.path.join(str(cwd) if cwd is not None else os.getcwd(), expanded)
    resolved = os.path.realpath(expanded)
    inside = resolved == home or resolved.startswith(home.rstrip(os.sep) + os.sep)
    return inside, resolved


class PermissionGate:
    """Per-session permission state: policies, persisted allows, session allows, the prompt."""

    def __init__(self, config: Config, instance: Instance, prompt: Prompt | None = None,
                 cwd: Path | None = None) -> None:
        self.instance = instance
        self.prompt = prompt
        self.cwd = cwd
        self.session_allowed: set[str] = set()
        self._own_names = _own_policy_names()
        specs = CATALOGUE
        #: model-facing name -> the arguments naming the file it reads (in-process tools that read files)
        self._own_files: dict[str, tuple[str, ...]] = {s.qualified_name: tuple(s.file_args)
                                                       for s in specs if s.file_args}
        #: model-facing name -> the policy name of one call, from its input (see ToolSpec.call_policy)
        self._call_policies: dict[str, Callable[[Mapping[str, Any]], str]] = {
            s.qualified_name: s.call_policy for s in specs if s.call_policy is not None}
        #: model-facing name -> why one call needs the user's yes (see ToolSpec.asks), judged on ``tool_context``
        self._asks: dict[str, Callable[[AskContext, Mapping[str, Any]], str]] = {
            s.qualified_name: s.asks for s in specs if s.asks is not None}
        self.tool_context: AskContext | None = None  # the session's ToolContext, which the asks checks read
        self._perm_stamp: tuple[int, int] | None = None
        self._perm_path = str(instance.permissions_path)
        self._guarded = GuardedFiles(instance)
        self._keys_cache: dict[str, list[str]] = {}
        self._reported: set[str] = set()
        self._persisted: dict[str, list[re.Pattern[str]]] = {}
        self._perm_problems: list[str] = []
        self._ask_lock: asyncio.Lock | None = None
        self.set_config(config)

    # -- configuration ---------------------------------------------------------
    def set_config(self, config: Config) -> None:
        """Adopt a (new) config: rebuild the policy index and its compiled patterns."""
        self.config = config
        self._guarded.set_role_doc(config.role_doc_path)
        self._config_problems: list[str] = []
        self._modes: dict[str, Verdict] = {}
        self._config_patterns: dict[str, list[re.Pattern[str]]] = {}
        known = set(BUILTIN_DEFAULTS) | set(POLICY_ALIASES) | set(self._own_names.values()) | set(LEGACY_POLICY_NAMES)
        self._known = known
        source = self.instance.config_path.name
        for index, policy in enumerate(config.allowed_tools):
            entry = f"{source}: allowed_tools[{index}] ({policy.tool!r})"
            if policy.mode not in MODES:
                self._config_problems.append(f"{entry}: unknown mode {policy.mode!r}; the entry is ignored")
                continue
            if policy.tool in self._modes:
                self._config_problems.append(f"{entry}: a second policy for the same tool is ignored")
                continue
            if policy.tool in LEGACY_POLICY_NAMES:
                tool = f"{MCP_PREFIX}{OWN_SERVER}__{LEGACY_POLICY_NAMES[policy.tool]}"
                self._config_problems.append(f"{entry}: Mnemara 0.18 name, applied to {tool} "
                                             f"(policy name here: {self.policy_name(tool)})")
            elif policy.tool not in known and not policy.tool.startswith(MCP_PREFIX):
                self._config_problems.append(
                    f"{entry}: no such tool (known: {', '.join(sorted(known))}, or mcp__<server>__<tool>)")
            self._modes[policy.tool] = policy.mode
            compiled = []
            for pattern in policy.allowed_patterns:
                try:
                    compiled.append(re.compile(pattern))
                except (re.error, TypeError) as exc:
                    self._config_problems.append(f"{entry}: invalid regex {pattern!r} in allowed_patterns: {exc}")
            self._config_patterns[policy.tool] = compiled
            if policy.tool == "Bash":
                self._config_problems += loose_bash_patterns([(entry, p) for p in compiled])
        self._roots = FileRoots.from_entries(config.file_tool_roots, *real_homes(), source=f"{source}: file_tool_roots")
        self._config_problems += self._roots.problems
        self._configured_servers = {server.name for server in config.mcp_servers}
        self._keys_cache = {}  # which server a tool belongs to depends on the configured servers
        self._refresh_persisted()

    @property
    def startup_problems(self) -> list[str]:
        """Malformed entries of config.json / permissions.json, one line each naming file and entry."""
        self._refresh_persisted()
        return [*self._config_problems, *self._perm_problems]

    def new_problems(self) -> list[str]:
        """Problems not reported before (each logged to debug.log once); call at the start of a turn."""
        fresh = [p for p in self.startup_problems if p not in self._reported]
        for problem in fresh:
            self._reported.add(problem)
            self._log("permission_config_problem", "warning", problem=problem)
        return fresh

    # -- permissions.json --------------------------------------------------------
    def _refresh_persisted(self) -> None:
        """(Re)load permissions.json when it changed on disk; any fault means no persisted allows."""
        path = self._perm_path
        try:
            st = os.stat(path)
            stamp = (st.st_mtime_ns, st.st_size)
        except FileNotFoundError:
            stamp = (0, -1)
        except OSError:
            stamp = (-1, -1)
        if stamp == self._perm_stamp:
            return
        self._perm_stamp = stamp
        patterns, problems = load_permissions(Path(path))
        self._persisted = {tool: [re.compile(p) for p in pats] for tool, pats in patterns.items()}
        name = Path(path).name
        problems += loose_bash_patterns([(f"{name}: allowed_patterns['Bash']", p)
                                         for p in self._persisted.get("Bash", ())])
        for tool in patterns:
            if tool not in self._known and not tool.startswith(MCP_PREFIX):
                problems.append(f"{name}: allowed_patterns[{tool!r}]: no such tool, so these patterns never apply "
                                f"(known: {', '.join(sorted(self._known))}, or mcp__<server>__<tool>)")
        self._perm_problems = problems

    # -- naming ---------------------------------------------------------------
    def policy_name(self, tool_name: str) -> str:
        """How policies name ``tool_name``: ``WriteMemory`` for its mcp name, aliases resolved."""
        if tool_name in self._own_names:
            return self._own_names[tool_name]
        return POLICY_ALIASES.get(tool_name, tool_name)

    def _keys(self, tool_name: str) -> list[str]:
        """Policy keys that may govern ``tool_name``, most specific first."""
        keys = self._keys_cache.get(tool_name)
        if keys is None:
            keys = self._keys_cache[tool_name] = self._compute_keys(tool_name)
        return keys

    def _compute_keys(self, tool_name: str) -> list[str]:
        keys = [tool_name]  # the exact model-facing name is the most specific
        own = tool_name[len(f"{MCP_PREFIX}{OWN_SERVER}__"):] if tool_name.startswith(f"{MCP_PREFIX}{OWN_SERVER}__") else ""
        keys += [old for old, ours in LEGACY_POLICY_NAMES.items() if own and ours == own]  # 0.18's per-tool names
        policy = self.policy_name(tool_name)
        if policy != tool_name:
            keys.append(policy)
        if tool_name in self._own_files or tool_name in SEARCH_TOOLS:  # it reads files: the Read policy governs it too
            keys.append("Read")
        if tool_name.startswith(MCP_PREFIX):
            keys.append(f"{MCP_PREFIX}{self._server_of(tool_name)}")
        return keys

    def _server_of(self, tool_name: str) -> str:
        """The MCP server of ``mcp__<server>__<tool>``: the longest configured server name it starts
        with (a server may be named ``my__srv``), else the text up to the first ``__``."""
        rest = tool_name[len(MCP_PREFIX):]
        named = [s for s in (*self._configured_servers, OWN_SERVER) if rest.startswith(f"{s}__")]
        return max(named, key=len) if named else rest.split("__", 1)[0]

    def _call_policy(self, tool_name: str, tool_input: dict[str, Any]) -> str:
        """The policy name governing this one call ("" when it is the tool's own, see ToolSpec.call_policy)."""
        rule = self._call_policies.get(tool_name)
        return rule(tool_input) if rule is not None else ""

    def _call_keys(self, tool_name: str, call_policy: str) -> list[str]:
        """:meth:`_keys` with this call's own policy right after the exact model-facing name."""
        keys = self._keys(tool_name)
        if not call_policy:
            return keys
        return [keys[0], call_policy, *(key for key in keys[1:] if key != call_policy)]

    def _mode(self, tool_name: str, call_policy: str = "") -> tuple[Verdict, str]:
        """The configured or default mode. A policy for the exact model-facing name wins; otherwise
        a ``deny`` on any key that governs the tool (``mcp__<server>``, its policy name) wins, so a
        server-wide deny is never outranked by a tool's own allow (e.g. the default WriteMemory=allow)."""
        keys = [key for key in self._call_keys(tool_name, call_policy) if key in self._modes]
        if keys and keys[0] != tool_name:
            denied = [key for key in keys if self._modes[key] == "deny"]
            keys = denied[:1] or keys
        if keys:
            key = keys[0]
            return self._modes[key], f"policy {key}={self._modes[key]}"
        if tool_name in BUILTIN_DEFAULTS:
            return BUILTIN_DEFAULTS[tool_name], f"default {tool_name}={BUILTIN_DEFAULTS[tool_name]}"
        alias = POLICY_ALIASES.get(tool_name)
        if alias:
            return BUILTIN_DEFAULTS[alias], f"default {alias}={BUILTIN_DEFAULTS[alias]}"
        if tool_name.startswith(f"{MCP_PREFIX}{OWN_SERVER}__"):
            return "allow", "in-process mnemara tool (default allow)"
        if tool_name.startswith(MCP_PREFIX):
            server = self._server_of(tool_name)
            if server in self._configured_servers:
                return "allow", f"configured MCP server {server!r} (default allow)"
        return "ask", "unknown tool (default ask)"

    # -- the decision -------------------------------------------------------------
    def decide(self, tool_name: str, tool_input: dict[str, Any] | None) -> Decision:
        """The verdict for one call, without prompting anyone. Never raises."""
        tool_input = self._searched(tool_name, tool_input if isinstance(tool_input, dict) else {})
        try:
            if tool_name == "Glob":
                refusal = _glob_escape(tool_input.get("pattern"))
                if refusal:
                    return self._logged(tool_name, Decision("deny", refusal))
            return self._decide(tool_name, tool_input)
        except Exception as exc:  # a gate bug must fail closed, not crash the turn
            self._log("permission_error", "error", tool=tool_name, error=repr(exc))
            return Decision("deny", f"permission check failed: {exc}")

    def _searched(self, tool_name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
        """A Grep or Glob call's input with the folder it searches made explicit (the CLI's default: the
        session's folder), so the gate judges that folder; other calls as they are."""
        if tool_name not in SEARCH_TOOLS or tool_input.get("path"):
            return tool_input
        return {**tool_input, "path": str(self.cwd) if self.cwd is not None else os.getcwd()}

    def file_args(self, tool_name: str) -> tuple[str, ...]:
        """The arguments naming the file ``tool_name`` opens (empty for a tool that names none)."""
        key = FILE_TOOLS.get(tool_name)
        return (key,) if key is not None else self._own_files.get(tool_name, ())

    def target(self, tool_name: str, tool_input: dict[str, Any]) -> str:
        """:func:`target_of` for this gate's tools (an in-process file tool's target is its path)."""
        return target_of(tool_name, tool_input, self._own_files.get(tool_name, ()))

    def _decide(self, tool_name: str, tool_input: dict[str, Any]) -> Decision:
        resolved = None
        file_args = self.file_args(tool_name)
        if file_args:
            path = file_path_of(tool_input, file_args)
            if not isinstance(path, str) or not path:
                return self._logged(tool_name, Decision("deny", f"{tool_name} needs a file path"))
            special = process_relative_path(path, str(self.cwd) if self.cwd is not None else None)
            if special is not None:
                return self._logged(tool_name, Decision("deny", f"{tool_name} refused: {special}"))
            inside, resolved = is_inside_home(path, self.cwd)
            if self.config.file_tool_home_only and not inside and self._roots.holding(resolved) is None:
                return self._home_refusal(tool_name, path, resolved)
        call_policy = self._call_policy(tool_name, tool_input)
        mode, why = self._mode(tool_name, call_policy)
        policy = call_policy or self.policy_name(tool_name)
        if mode == "deny":
            return self._logged(tool_name, Decision("deny", f"{policy} is denied by {why}"))
        if resolved is not None and tool_name not in READING_TOOLS and tool_name not in self._own_files:
            what = self._guarded.what(resolved)
            if what:
                return Decision("ask", f"{tool_name} would change {what}")
        asked = self._ask_reason(tool_name, tool_input)
        if asked:
            return Decision("ask", asked)
        if mode == "allow":
            return Decision("allow", why)
        if policy in self.session_allowed:
            return Decision("allow", f"{policy} allowed for this session")
        self._refresh_persisted()
        patterns = [pattern for key in self._call_keys(tool_name, call_policy)
                    for pattern in (*self._config_patterns.get(key, ()), *self._persisted.get(key, ()))]
        if not patterns:
            return Decision(mode, why)
        if tool_name == "Bash":
            return self._bash_decision(tool_input, patterns, mode, why)
        # A file tool's path and the file it reaches must both be allowed: a pattern for a project
        # folder must not let proj/docs/.bashrc through when proj/docs is a symlink to $HOME.
        forms = _forms(self.target(tool_name, tool_input), resolved)
        matched = [next((pattern for pattern in patterns if pattern.search(form)), None) for form in forms]
        if all(matched):
            return Decision("allow", f"{policy} target matches allowed pattern "
                                     f"{' and '.join(dict.fromkeys(repr(m.pattern) for m in matched if m))}")
        if any(matched):
            missing = " and ".join(form for form, m in zip(forms, matched) if m is None)
            return Decision(mode, f"{why}; {forms[0]} reaches {resolved}: no allowed pattern matches {missing}")
        return Decision(mode, why)

    @staticmethod
    def _bash_decision(tool_input: dict[str, Any], patterns: list[re.Pattern[str]], mode: Verdict,
                       why: str) -> Decision:
        """Bash patterns are matched command by command (:mod:`mnemara.guard.bash_patterns`); a line the
        user approved exactly with ``a`` (its ``\\A...\\Z`` pattern) is allowed as a whole."""
        command = tool_input.get("command")
        if not isinstance(command, str):
            return Decision(mode, why)
        exact = always_pattern(command)
        if any(pattern.pattern == exact for pattern in patterns):
            return Decision("allow", f"Bash command allowed exactly by pattern {exact!r}")
        found = match_bash(command, patterns)
        if found.allowed:
            return Decision("allow", f"Bash: {found.reason}")
        return Decision(mode, f"{why}; {found.reason}")

    def _ask_reason(self, tool_name: str, tool_input: dict[str, Any]) -> str:
        """Why this call of an in-process tool needs the user's yes whatever its policy ("" when it does not)."""
        check = self._asks.get(tool_name)
        if check is None or self.tool_context is None:
            return ""
        try:
            return str(check(self.tool_context, tool_input) or "")
        except Exception as exc:  # the check itself failed: asking is the safe answer
            return f"{tool_name}: could not tell whether it touches something of yours ({exc})"

    def resolved_path(self, tool_name: str, tool_input: dict[str, Any]) -> str | None:
        """The file a file tool's path reaches once ``~``, ``..`` and symlinks are resolved (None if not a file tool)."""
        path = file_path_of(tool_input, self.file_args(tool_name)) if self.file_args(tool_name) else None
        if not isinstance(path, str) or not path:
            return None
        try:
            return is_inside_home(path, self.cwd)[1]
        except (OSError, ValueError):
            return None

    def _home_refusal(self, tool_name: str, path: str, resolved: str) -> Decision:
        self._log("permission_home_only", "warning", tool=tool_name, target=path, resolved=resolved)
        return Decision(
            "deny",
            f"{tool_name} refused: {path} resolves to {resolved}, outside $HOME"
            f"{' and file_tool_roots' if self._roots.roots else ''} (file_tool_home_only is on)",
        )

    # -- asking -------------------------------------------------------------------
    async def ask(self, tool_name: str, tool_input: dict[str, Any] | None) -> bool:
        """Resolve an ``ask`` through the prompt; True means run the call."""
        return (await self.ask_decision(tool_name, tool_input)).verdict == "allow"

    async def ask_decision(self, tool_name: str, tool_input: dict[str, Any] | None) -> Decision:
        """Like :meth:`ask` but with the reason (handed to the model when denied)."""
        tool_input = self._searched(tool_name, tool_input if isinstance(tool_input, dict) else {})
        if self._ask_lock is None:
            self._ask_lock = asyncio.Lock()
        async with self._ask_lock:  # one prompt at a time, even for parallel tool calls
            current = self.decide(tool_name, tool_input)
            if current.verdict != "ask":  # e.g. an earlier 's' or 'a' already covers this call
                return current
            policy = self._call_policy(tool_name, tool_input) or self.policy_name(tool_name)
            target = self.target(tool_name, tool_input)
            resolved = self.resolved_path(tool_name, tool_input)
            from mnemara.guard.change_preview import EDIT_TOOLS, preview_change  # difflib: only when asking

            change = (await asyncio.to_thread(preview_change, tool_name, tool_input, resolved, target)
                      if tool_name in EDIT_TOOLS else None)  # reads the file: off the session's loop
            request = PermissionRequest(tool_name, policy, target, tool_input, file_args=self.file_args(tool_name),
                                        resolved=resolved if resolved is not None and resolved != target else "",
                                        change=change)
            answer = await self._prompt(request)
            decision = self._apply_answer(request, answer)
            shown = request.shown
            self._log("permission_answer", "info", tool=tool_name, answer=answer, verdict=decision.verdict,
                      target=shown.text, target_lines=shown.lines, target_chars=shown.chars)
            return decision

    async def _prompt(self, request: PermissionRequest) -> str | None:
        if self.prompt is None:
            return None
        try:
            answer = self.prompt(request)
            if inspect.isawaitable(answer):
                answer = await answer
        except (EOFError, KeyboardInterrupt):
            return None
        except Exception as exc:
            self._log("permission_prompt_error", "error", tool=request.tool_name, error=repr(exc))
            return None
        if not isinstance(answer, str):
            return None
        return ANSWERS.get(answer.strip().lower())

    def _apply_answer(self, request: PermissionRequest, answer: str | None) -> Decision:
        if answer == "y":
            return Decision("allow", "allowed once by the user")
        if answer == "s":
            self.session_allowed.add(request.policy_name)
            return Decision("allow", f"{request.policy_name} allowed by the user for this session")
        if answer == "a":
            saved = self.persist_always(request.policy_name, request.target, request.resolved)
            if saved is None:
                return Decision("allow", f"always-allow saved to {self.instance.permissions_path.name}")
            return Decision("allow", f"allowed once; could not save always-allow: {saved}")
        if answer == "n":
            return Decision("deny", "denied by the user")
        if self.prompt is None:
            return Decision("deny", f"{request.policy_name} needs approval and no one can be asked")
        return Decision("deny", "no approval given (denied)")

    def persist_always(self, policy_name: str, target: str, resolved: str = "") -> str | None:
        """Add the exact-target regex to permissions.json; return a problem string or None.

        ``resolved``: the file a file tool's path reaches when that differs from the path as
        given; it is saved too (both forms must match, see :meth:`decide`).
        The file is re-read under a lock so concurrent writers do not lose entries; a
        malformed file is left untouched (nothing of the user's is overwritten).
        """
        path = self.instance.permissions_path
        added = [always_pattern(form) for form in _forms(target, resolved or None)]
        with locked(path.with_name(".permissions.lock")):
            data, problem = _read_permissions_doc(path)
            if problem is not None:
                self._log("permission_persist_refused", "warning", file=str(path), problem=problem)
                return problem
            table = data.setdefault("allowed_patterns", {})
            entries = table.setdefault(policy_name, [])
            entries += [pattern for pattern in added if pattern not in entries]
            atomic_write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
        self._perm_stamp = None
        self._refresh_persisted()
        for pattern in added:
            self._log("permission_always", "info", tool=policy_name, pattern=pattern)
        return None

    # -- logging ----------------------------------------------------------------
    def _logged(self, tool_name: str, decision: Decision) -> Decision:
        self._log("permission_denied", "info", tool=tool_name, reason=decision.reason)
        return decision

    def _log(self, event: str, level: str, **fields: Any) -> None:
        log_event(self.instance.debug_log_path, event, level, **fields)


def _glob_escape(pattern: object) -> str:
    """Why a Glob ``pattern`` would reach past the folder the gate judged ("" when it stays inside it): an
    absolute pattern or one with a ``..`` part names files elsewhere, whatever ``path`` says."""
    if not isinstance(pattern, str) or not pattern:
        return "Glob needs a pattern"
    if pattern.startswith(("/", "~")) or ".." in pattern.replace("\\", "/").split("/"):
        return (f"Glob refused: the pattern {show_target(pattern).text} leaves the folder it searches (absolute, "
                "~ or ..); give the folder as path and a relative pattern")
    return ""


def _forms(target: str, resolved: str | None) -> list[str]:
    """The forms of a target that patterns must all allow: the target, and the file it resolves to if different."""
    return [target] if resolved is None or resolved == target else [target, resolved]


def _read_permissions_doc(path: Path) -> tuple[dict[str, Any], str | None]:
    """The raw permissions.json object, or ``({}, problem)``. A missing file is an empty doc.

    A link is refused: a planted ``permissions.json`` -> a file someone else writes would grant allows.
    """
    if path.is_symlink():
        return {}, f"{path.name}: is a symbolic link; its patterns are ignored and nothing is saved through it"
    try:
        text = json_limits.read_text(path)
    except FileNotFoundError:
        return {"allowed_patterns": {}}, None
    except json_limits.JSONRefused as exc:
        return {}, f"{path.name}: refused: {exc}"
    except (OSError, UnicodeDecodeError) as exc:
        return {}, f"{path.name}: cannot read: {exc}"
    if not text.strip():
        return {"allowed_patterns": {}}, None
    try:
        data = json_limits.loads(text)
    except json.JSONDecodeError as exc:
        return {}, f"{path.name}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
    except json_limits.JSONRefused as exc:
        return {}, f"{path.name}: refused: {exc}"
    if not isinstance(data, dict):
        return {}, f"{path.name}: top level must be a JSON object"
    from mnemara.guard.legacy_perms import fold_legacy

    data = fold_legacy(data)  # Mnemara 0.18's {"Bash": {"allowed_patterns": [...]}} is read too
    table = data.get("allowed_patterns", {})
    if not isinstance(table, dict):
        return {}, f"{path.name}: 'allowed_patterns' must be an object of tool -> list of regexes"
    return data, None


def load_permissions(path: Path) -> tuple[dict[str, list[str]], list[str]]:
    """Valid persisted patterns per tool, and one problem line per bad entry.

    A file that cannot be read or parsed yields no patterns at all (never "allow all").
    """
    data, problem = _read_permissions_doc(Path(path))
    if problem is not None:
        return {}, [f"{problem}; no persisted allows are used"]
    out: dict[str, list[str]] = {}
    problems: list[str] = []
    for tool, patterns in data.get("allowed_patterns", {}).items():
        if not isinstance(patterns, list):
            problems.append(f"{Path(path).name}: allowed_patterns[{tool!r}] must be a list of regexes; ignored")
            continue
        good: list[str] = []
        for index, pattern in enumerate(patterns):
            if not isinstance(pattern, str):
                problems.append(f"{Path(path).name}: allowed_patterns[{tool!r}][{index}] is not a string; ignored")
                continue
            try:
                re.compile(pattern)
            except re.error as exc:
                problems.append(
                    f"{Path(path).name}: allowed_patterns[{tool!r}][{index}] invalid regex {pattern!r}: {exc}; ignored")
                continue
            good.append(pattern)
        out[tool] = good
    return out, problems
