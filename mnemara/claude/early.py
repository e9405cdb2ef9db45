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

From its spawn the process is served by an
:class:`~mnemara.claude.early_channel.EarlyChannel` (it writes the SDK's
``initialize`` at once). When messages are piped in, the first turn may
:meth:`EarlyCli.presend` its user message before the SDK is imported: only when
the system prompt and the launch spec Mnemara computes for the live config are
still those the process was started with, and only for an SDK version whose
wire format the early copies were found exact for on this machine
(:mod:`mnemara.claude.startup_answers`). Then the CLI asks the API while Python
imports the SDK; the adopting transport does not write the message again.
"""
from __future__ import annotations

import json
import logging
import os
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mnemara.core import json_limits
from mnemara.core.debuglog import log_event
from mnemara.claude import startup_answers
from mnemara.claude.startup_answers import sdk_version
from mnemara.claude.early_channel import EarlyChannel, user_message_line
from mnemara.claude.prompt_file import PromptFile

if TYPE_CHECKING:
    from mnemara.claude.adopted import AdoptedTransport
    from mnemara.claude.launch_inputs import LaunchInputs
    from mnemara.core.config import Config
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


#: The first claude-agent-sdk release that writes an option's value into its flag (``--model=x``, its
#: ``_flag_with_value``); earlier ones write two arguments (``--model x``). Both keep ``--settings`` and
#: ``--mcp-config`` apart from their values.
JOINED_VALUES_SINCE = (0, 2, 190)


def joins_values(version: str) -> bool:
    """Whether the SDK ``version`` writes ``--flag=value`` (True for a version it cannot read: the newest
    form is the likelier one, and a wrong guess only loses the early start)."""
    parts = version.split(".")[:3]
    if len(parts) < 3 or not all(part.isdigit() for part in parts):
        return True
    return tuple(int(part) for part in parts) >= JOINED_VALUES_SINCE


def command_line(cli: str, prompt_path: str, model: str | None, servers: dict[str, Any],
                 tools: list[str], settings: str | None = None, *, joined: bool = True) -> tuple[str, ...]:
    """The command line the SDK builds for the options of :meth:`CliLauncher.options
    <mnemara.claude.options.CliLauncher.options>` (``_build_command``), written out without the SDK;
    ``joined`` for an SDK that writes ``--flag=value`` (:func:`joins_values`)."""
    def option(flag: str, value: str) -> list[str]:
        return [f"{flag}={value}"] if joined else [flag, value]

    argv = [cli, "--output-format", "stream-json", "--verbose", *option("--system-prompt-file", prompt_path),
            *option("--tools", ",".join(tools))]
    if model:
        argv += option("--model", model)
    argv += option("--permission-prompt-tool", "stdio")
    if settings:
        argv += ["--settings", settings]
    if servers:
        argv += ["--mcp-config", json.dumps({"mcpServers": servers})]
    argv += ["--include-partial-messages", "--setting-sources=", "--no-session-persistence",
             "--input-format", "stream-json"]
    return tuple(argv)


def session_spec(cli: str, prompt_path: str, inputs: LaunchInputs, env_overrides: dict[str, str], cwd: str,
                 version: str) -> LaunchSpec:
    """What a session's launcher starts for a config's ``inputs`` (:func:`command_line`, :func:`process_env`
    and ``cwd``), computed without the SDK (nor pydantic, nor asyncio)."""
    from mnemara.claude.additions import quiet_settings
    from mnemara.claude.child_guard import guard_env

    argv = command_line(cli, prompt_path, inputs.model, inputs.servers, inputs.native_tools, quiet_settings(),
                        joined=joins_values(version))
    env = {**inputs.env, **guard_env(), **env_overrides}  # this process's pid, not the recorded one's
    return LaunchSpec(argv, process_env(env, cwd, version), cwd)


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
    channel: EarlyChannel
    log: logging.Logger  # the instance's logger (debug.log)
    started_at: float
    used: bool = False
    #: ``mnemara run`` reads messages from a pipe: the first may be sent before the SDK is imported, so
    #: nothing launches (and imports the SDK) before the first turn.
    awaits_message: bool = False
    presented: bool = False
    #: Called once when the process is adopted or ended (``mnemara run`` turns the garbage collector back on:
    #: the SDK's import, then after the first message, runs with it off as the other start-up imports do).
    on_settled: Callable[[], object] | None = None

    def _settled(self) -> None:
        hook, self.on_settled = self.on_settled, None
        if hook is not None:
            hook()

    def presend(self, system_prompt: str, cfg: Config, env_overrides: dict[str, str], cwd: str,
                content: list[dict[str, Any]], message_id: str, tools_key: str) -> bool:
        """Write the first turn's user message to this process now, before the SDK is imported, when it is
        exactly the process the turn will launch (:func:`session_spec` for the live ``cfg``, the launcher's
        ``env_overrides`` and ``cwd``). True when written; the adopting transport then does not write it again."""
        from mnemara.claude.child_guard import guarded_cli_path

        version, cli = sdk_version(), guarded_cli_path()
        if cli is None:
            return False
        from mnemara.claude.launch_inputs import of

        spec = session_spec(cli, str(self.prompt.path), of(cfg), env_overrides, cwd, version)
        why = self.presend_refusal(system_prompt, spec, version)
        if why is not None:
            log_event(self.log, "early_presend_skipped", reason=why)
            return False
        answers = startup_answers.load(tools_key) if tools_key else {}
        if answers:
            from mnemara.tools import enabled_specs

            misfit = startup_answers.misfit(answers, enabled_specs(cfg))
            if misfit is not None:  # checked before the first request, which would carry the tool list
                log_event(self.log, "early_startup_answers_dropped", level="warning", reason=misfit)
                startup_answers.drop_answers()
                answers = {}
        self.channel.provide_answers(answers)
        line = user_message_line(content, message_id)
        self.channel.present = line
        self.channel.write(line)
        self.presented = True
        log_event(self.log, "early_presend", pid=self.process.pid, startup_answers=len(answers),
                  age_seconds=round(time.monotonic() - self.started_at, 3))
        return True

    def presend_refusal(self, system_prompt: str, spec: LaunchSpec, version: str) -> str | None:
        """Why the first message may not go to this process before the SDK is imported (None: it may)."""
        if self.used or self.presented:
            return "the process is taken"
        code = self.process.poll()
        if code is not None or self.channel.ended.is_set():
            return f"it ended (exit code {code})"
        if system_prompt != self.system_prompt:
            return "system prompt"
        why = spec.difference(self.spec)
        if why is not None:
            return why
        if not startup_answers.verified(version):
            return f"the early wire format is not yet checked against claude-agent-sdk {version or '(unknown)'}"
        return None

    def adopt(self, system_prompt: str, options: Any, tools_key: str = "") -> AdoptedTransport | None:
        """A transport over this process when ``options`` would start exactly it, else None (and it
        is ended). Called once: the second call always answers None."""
        if self.used:
            return None
        self.used = True
        self._settled()
        ended = self.process.poll() is not None or self.channel.ended.is_set()
        why = self.mismatch(system_prompt, options)
        if why is not None:
            copy_wrong = self.presented and not ended  # Mnemara's copy of the launch spec was not the SDK's
            log_event(self.log, "early_cli_unused", level="error" if copy_wrong else "info", reason=why,
                      presented=self.presented or None)
            if copy_wrong:  # no message goes early again until an adoption checks the copies
                startup_answers.forget_verified()
            self.discard()
            return None
        from claude_agent_sdk import __version__

        from mnemara.claude.adopted import AdoptedTransport

        log_event(self.log, "early_cli_adopted", pid=self.process.pid,
                  age_seconds=round(time.monotonic() - self.started_at, 3))
        return AdoptedTransport(self.channel, options, tools_key, __version__)

    def mismatch(self, system_prompt: str, options: Any) -> str | None:
        """Why this process does not fit a launch for ``system_prompt`` with ``options`` (None: it fits)."""
        code = self.process.poll()
        if code is not None or self.channel.ended.is_set():
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
        self._settled()
        self.prompt.remove()
        if self.process.poll() is None:
            try:
                self.process.kill()
            except OSError:
                pass
        self.channel.end_input()  # its threads end with the process's pipes
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
        from mnemara.claude.locate import has_credentials
        from mnemara.core.roledoc import read_role_doc
        from mnemara.claude.child_guard import guarded_cli_path

        if not has_credentials():
            return None  # the turn refuses before it starts a CLI
        cli = guarded_cli_path()
        if cli is None:
            return None  # elsewhere than Linux the SDK finds the CLI itself: nothing to match
        inputs = _inputs(instance)
        role = read_role_doc(inputs.role_doc_path)
        cwd = cwd or os.getcwd()
        prompt = PromptFile(role.text)
        from mnemara.claude.recorder import request_env

        recording = request_env(instance.root, inputs.request_log_calls,  # the session's CLIs go through it too
                                gate_needed=inputs.spend_capped)  # a cap: through the gate, even unrecorded
        spec = session_spec(cli, str(prompt.path), inputs, recording, cwd, sdk_version())
        started = time.monotonic()
        process = subprocess.Popen(spec.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   cwd=cwd, env=dict(spec.env))
    except Exception as exc:  # no early CLI: the session starts one as usual
        if prompt is not None:
            prompt.remove()
        log_event(instance.debug_log_path, "early_cli_failed", level="warning", error=f"{type(exc).__name__}: {exc}")
        return None
    channel = EarlyChannel(process, instance.logger)  # writes the SDK's initialize now
    return EarlyCli(spec, role.text, prompt, process, channel, instance.logger, started)


def _inputs(instance: Instance) -> LaunchInputs:
    """The launch inputs of the instance's config.json: recorded for these bytes, else validated (and recorded).
    Mnemara's tools are taken as on (the window tools always are): importing every tool module to check
    would delay the start, and a wrong guess only means this CLI is not adopted."""
    from mnemara.claude import launch_inputs

    raw = instance.config_path.read_bytes()
    inputs = launch_inputs.recorded(raw)
    if inputs is not None:
        why = launch_inputs.fits(inputs, launch_inputs.parse_config(raw))
        if why is not None:  # a record that is not what config.json launches: dropped, never run
            log_event(instance.debug_log_path, "early_launch_record_dropped", level="warning", reason=why)
            launch_inputs.drop(raw)
            inputs = None
    if inputs is None:
        from mnemara.core.config import Config

        cfg = Config.from_dict(json_limits.loads(raw.decode("utf-8")), source=str(instance.config_path))
        inputs = launch_inputs.of(cfg, with_tools=True)
        launch_inputs.record(raw, inputs)
    return inputs
