"""The Claude CLI started before the imports: ``mnemara run`` spawns it first, the session adopts it.

Importing ``claude_agent_sdk`` costs about half a second to a second and a half
of CPU, and a Claude CLI about half a second to boot; done one after the other
they add up before the first request. :func:`start_early` spawns the CLI the
first turn will most likely need at the very start of ``mnemara run``, with no
SDK import (the command line is written here), so it boots while Python
imports the SDK, the session and the UI.

When the session launches its first process, :meth:`EarlyCli.adopt` compares
what the SDK would start for the session's options (its own command line, the
environment, the working directory, the system prompt's text) with what the
early process was started with. Equal: the SDK is handed the running process
through its documented custom transport (:class:`~mnemara.claude.adopted.AdoptedTransport`).
Any difference (an edited role doc, another model, tools, env or cwd), or an
early process that failed to start or has ended: it is killed, and the
session starts its CLI exactly as it does without this module. A wrong guess
here costs time, never correctness.
"""
from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mnemara.core.debuglog import log_event
from mnemara.claude.prompt_file import PromptFile

if TYPE_CHECKING:
    from mnemara.claude.adopted import AdoptedTransport
    from mnemara.store.instance import Instance

#: The variable the SDK sets so the CLI sends its session-state frames (``subprocess_cli.py``).
SDK_READS_SESSION_STATE_ENV = "CLAUDE_CODE_SDK_READS_SESSION_STATE"


@dataclass(frozen=True)
class LaunchSpec:
    """What a CLI process is started with: its command line, environment and working directory."""

    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    cwd: str

    def difference(self, other: LaunchSpec) -> str | None:
        """The first thing that differs from ``other``, named for the debug log (None when equal)."""
        if self.cwd != other.cwd:
            return "working directory"
        if self.argv != other.argv:  # flag names only: a value (an MCP server's env, say) may be a secret
            if self.argv[:1] != other.argv[:1]:
                return "command line: the CLI's path"
            mine_flags, theirs_flags = _flags(self.argv[1:]), _flags(other.argv[1:])
            names = sorted(k for k in mine_flags.keys() | theirs_flags.keys() if mine_flags.get(k) != theirs_flags.get(k))
            return "command line: " + (", ".join(names)[:300] or "the order of its arguments")
        if self.env != other.env:
            mine_env, theirs_env = dict(self.env), dict(other.env)
            names = sorted(k for k in mine_env.keys() | theirs_env.keys() if mine_env.get(k) != theirs_env.get(k))
            return "environment: " + ", ".join(names)[:300]  # names only: values may be secrets
        return None


def _flags(argv: tuple[str, ...]) -> dict[str, str]:
    """``--flag`` -> its value (``--flag=value`` or ``--flag value``; "" for a switch)."""
    out: dict[str, str] = {}
    for n, item in enumerate(argv):
        if not item.startswith("--"):
            continue
        name, eq, value = item.partition("=")
        if not eq and n + 1 < len(argv) and not argv[n + 1].startswith("--"):
            value = argv[n + 1]
        out[name] = value
    return out


def sdk_version() -> str:
    """The installed claude-agent-sdk's version, read without importing it."""
    import importlib.util

    spec = importlib.util.find_spec("claude_agent_sdk")
    if spec is not None and spec.submodule_search_locations:
        version_file = Path(next(iter(spec.submodule_search_locations))) / "_version.py"
        try:
            match = re.search(r"""__version__\s*=\s*["']([^"']+)["']""", version_file.read_text(encoding="utf-8"))
        except OSError:
            match = None
        if match:
            return match.group(1)
    return ""


def process_env(options_env: dict[str, str], cwd: str, version: str,
                environ: dict[str, str] | None = None) -> tuple[tuple[str, str], ...]:
    """The environment the SDK gives the CLI for ``ClaudeAgentOptions.env`` (its ``connect()``, for the
    options Mnemara sets: no ``client_app``, no OpenTelemetry span, no file checkpointing)."""
    base = dict(os.environ if environ is None else environ)
    env = {k: v for k, v in base.items() if k != "CLAUDECODE"}
    env["CLAUDE_CODE_ENTRYPOINT"] = "sdk-py"
    env.update(options_env)
    env["CLAUDE_AGENT_SDK_VERSION"] = version
    env.pop("CLAUDE_AGENT_SDK_CLIENT_APP", None)
    if not any(k.upper() == SDK_READS_SESSION_STATE_ENV for k in env):
        env[SDK_READS_SESSION_STATE_ENV] = "1"
    if cwd:
        env["PWD"] = cwd
    return tuple(sorted(env.items()))


def command_line(cli: str, prompt_path: str, model: str | None, servers: dict[str, Any],
                 tools: list[str], settings: str | None = None) -> tuple[str, ...]:
    """The command line the SDK builds for the options of :meth:`CliLauncher.options
    <mnemara.claude.options.CliLauncher.options>` (``_build_command``), written out without the SDK."""
    argv = [cli, "--output-format", "stream-json", "--verbose", "--system-prompt-file", prompt_path,
            "--tools", ",".join(tools) if tools else ""]
    if model:
        argv += ["--model", model]
    argv += ["--permission-prompt-tool", "stdio"]
    if settings:
        argv += ["--settings", settings]
    if servers:
        argv += ["--mcp-config", json.dumps({"mcpServers": servers})]
    argv += ["--include-partial-messages", "--setting-sources=", "--no-session-persistence",
             "--input-format", "stream-json"]
    return tuple(argv)


def sdk_spec(options: Any) -> LaunchSpec | None:
    """What the SDK would start for ``options`` (SDK imported); None when it cannot say."""
    from claude_agent_sdk import __version__

    from mnemara.claude._private import sdk_command

    if options.cli_path is None or options.user is not None or options.stderr is None:
        return None  # the SDK would search for the CLI, switch user, or not pipe stderr: not what started early
    cwd = str(options.cwd) if options.cwd else ""
    return LaunchSpec(tuple(sdk_command(options)), process_env(dict(options.env), cwd, __version__), cwd)


@dataclass
class EarlyCli:
    """A CLI process started before the session, waiting to be adopted by its first launch."""

    spec: LaunchSpec
    system_prompt: str
    prompt: PromptFile
    process: subprocess.Popen[bytes]
    log: logging.Logger  # the instance's logger (debug.log)
    started_at: float
    used: bool = False

    def adopt(self, system_prompt: str, options: Any) -> AdoptedTransport | None:
        """A transport over this process when ``options`` would start exactly it, else None (and it
        is ended). Called once: the second call always answers None."""
        if self.used:
            return None
        self.used = True
        why = self.mismatch(system_prompt, options)
        if why is not None:
            log_event(self.log, "early_cli_unused", reason=why)
            self.discard()
            return None
        from mnemara.claude.adopted import AdoptedTransport

        log_event(self.log, "early_cli_adopted", pid=self.process.pid,
                  age_seconds=round(time.monotonic() - self.started_at, 3))
        return AdoptedTransport(self.process, options)

    def mismatch(self, system_prompt: str, options: Any) -> str | None:
        """Why this process does not fit a launch for ``system_prompt`` with ``options`` (None: it fits)."""
        code = self.process.poll()
        if code is not None:
            return f"it ended (exit code {code})"
        if system_prompt != self.system_prompt:
            return "system prompt"
        try:
            wanted = sdk_spec(options)
        except Exception as exc:  # an SDK whose transport changed shape: start the usual way
            return f"the SDK's command line is unknown ({exc!r})"
        if wanted is None:
            return "options the early start does not make"
        return wanted.difference(self.spec)

    def discard(self) -> None:
        """Kill the process (if nobody adopted it) and remove its prompt file; idempotent."""
        self.used = True
        self.prompt.remove()
        if self.process.poll() is None:
            try:
                self.process.kill()
            except OSError:
                pass
        for pipe in (self.process.stdin, self.process.stdout, self.process.stderr):
            if pipe is not None:
                try:
                    pipe.close()
                except OSError:
                    pass
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass

    def release(self) -> None:
        """At session end: end the process unless it was adopted (then the session ends it)."""
        if not self.used:
            self.used = True
            log_event(self.log, "early_cli_unused", reason="no turn launched a CLI")
            self.discard()


def start_early(instance: Instance, cwd: str | None = None) -> EarlyCli | None:
    """Spawn the CLI the first turn of a session on ``instance`` will most likely need (None when
    there is nothing to start or it fails: the session then starts its CLI as usual)."""
    if os.environ.get("MNEMARA_WARM_SPARE", "1").strip().lower() in ("0", "false", "no", "off"):
        return None  # no process started ahead of need, as the session's warm_spare
    prompt: PromptFile | None = None
    try:
        from mnemara.claude.process import has_credentials
        from mnemara.core.config import Config
        from mnemara.core.roledoc import read_role_doc
        from mnemara.claude.additions import quiet_settings
        from mnemara.claude.options import BUILTIN_TOOLS, cli_servers, launch_env
        from mnemara.claude.child_guard import guarded_cli_path

        if not has_credentials():
            return None  # the turn refuses before it starts a CLI
        cli = guarded_cli_path()
        if cli is None:
            return None  # elsewhere than Linux the SDK finds the CLI itself: nothing to match
        cfg = Config.load(instance.config_path)
        role = read_role_doc(cfg.role_doc_path)
        cwd = cwd or os.getcwd()
        prompt = PromptFile(role.text)
        # Mnemara's tools are taken as on (the window tools always are): importing every tool module to
        # check would delay the start, and a wrong guess only means this CLI is not adopted
        argv = command_line(cli, str(prompt.path), cfg.model, cli_servers(cfg, with_tools=True), BUILTIN_TOOLS,
                            quiet_settings())
        from mnemara.claude.recorder import request_env

        recording = request_env(instance.root, cfg.request_log_calls)  # the session's CLIs go through it too
        env = process_env({**launch_env(cfg), **recording}, cwd, sdk_version())
        started = time.monotonic()
        process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   cwd=cwd, env=dict(env))
    except Exception as exc:  # no early CLI: the session starts one as usual
        if prompt is not None:
            prompt.remove()
        log_event(instance.debug_log_path, "early_cli_failed", level="warning", error=f"{type(exc).__name__}: {exc}")
        return None
    return EarlyCli(LaunchSpec(argv, env, cwd), role.text, prompt, process, instance.logger, started)
