"""The CLI that ``mnemara run`` starts before its imports serves the first turn only when it is exactly
the process the session would start (role doc, model, tools, env, cwd); otherwise it is killed unused
and the session starts its own, as it does without an early start. The same when it fails to start."""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest

from mnemara.claude import early as early_mod
from mnemara.claude.adopted import AdoptedTransport
from mnemara.claude.child_guard import TREE_ENV
from mnemara.claude.early import process_env, start_early
from mnemara.core.config import update_config
from mnemara.claude._private import cli_process
from mnemara.store.instance import Instance
from mnemara.session.agent import AgentSession
from mnemara.testing.scripted_api import reply

pytestmark = pytest.mark.e2e

ROLE = "You are the early-start test agent."


@pytest.fixture
def inst(mnemara_home: Path, isolated_home: Path, scripted_api: Any, monkeypatch: pytest.MonkeyPatch) -> Instance:
    monkeypatch.setenv("MNEMARA_WARM_SPARE", "1")  # `mnemara run` as users run it: processes started ahead
    monkeypatch.chdir(isolated_home)
    role = isolated_home / "role.md"
    role.write_text(ROLE, encoding="utf-8")
    instance = Instance.create("early")
    update_config(instance.config_path, role_doc_path=str(role))
    return instance


def events(instance: Instance, name: str) -> list[dict[str, Any]]:
    lines = instance.debug_log_path.read_text(encoding="utf-8").splitlines() if instance.debug_log_path.exists() else []
    return [json.loads(line) for line in lines if f'"{name}"' in line]


def first_turn(instance: Instance, early: Any, api: Any, **session_args: Any) -> tuple[AgentSession, Any]:
    """One turn on a session that is offered ``early``; returns the session (open) and the handle that
    served the turn (kept for the next one)."""
    api.push(reply("hello back"))
    session = AgentSession(instance, **session_args)
    session.launcher.early = early
    result = session.turn("hello")
    assert result.ok, result.errors
    assert session.pool.spare is not None, "the process that served the turn is kept"
    return session, session.pool.spare


def test_an_early_cli_with_the_sessions_key_serves_the_first_turn(inst: Instance, scripted_api: Any) -> None:
    early = start_early(inst)
    assert early is not None and early.process.poll() is None, "an early CLI is running"
    session, handle = first_turn(inst, early, scripted_api)
    try:
        transport = handle.client._transport
        assert isinstance(transport, AdoptedTransport) and transport.popen.pid == early.process.pid, \
            "the first turn ran on the process started early"
        assert [e["pid"] for e in events(inst, "early_cli_adopted")] == [early.process.pid]
        assert ROLE in scripted_api.message_requests()[0].system_text
        assert not early.prompt.path.exists(), "the system prompt file is gone once the CLI has read it"
    finally:
        session.close()
    assert early.process.poll() is not None, "closing the session ends the adopted process"


def _edit_role(instance: Instance, home: Path, session_args: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> str:
    (home / "role.md").write_text("You are the EDITED agent.", encoding="utf-8")
    return "You are the EDITED agent."


def _swap_model(instance: Instance, home: Path, session_args: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> str:
    update_config(instance.config_path, model="claude-opus-4-1")
    return "claude-opus-4-1"


def _new_env(instance: Instance, home: Path, session_args: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("CLAUDE_CODE_MAX_OUTPUT_TOKENS", "1234")
    return "environment: CLAUDE_CODE_MAX_OUTPUT_TOKENS"


def _other_cwd(instance: Instance, home: Path, session_args: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> str:
    other = home / "elsewhere"
    other.mkdir()
    session_args["cwd"] = str(other)
    return "working directory"


@pytest.mark.parametrize("change", [_edit_role, _swap_model, _new_env, _other_cwd])
def test_an_early_cli_whose_key_no_longer_matches_is_never_used(
        change: Any, inst: Instance, scripted_api: Any, isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    early = start_early(inst)
    assert early is not None
    session_args: dict[str, Any] = {}
    expected = change(inst, isolated_home, session_args, monkeypatch)
    session, handle = first_turn(inst, early, scripted_api, **session_args)
    try:
        assert early.process.poll() is not None, "the early process was killed, not kept"
        assert not isinstance(handle.client._transport, AdoptedTransport), "the turn ran on a CLI of its own"
        assert cli_process(handle.client).pid != early.process.pid
        assert not events(inst, "early_cli_adopted")
        reasons = [e["reason"] for e in events(inst, "early_cli_unused")]
        assert len(reasons) == 1, reasons
        request = scripted_api.message_requests()[0]
        if change is _edit_role:
            assert reasons == ["system prompt"] and expected in request.system_text and ROLE not in request.system_text
        elif change is _swap_model:
            assert reasons[0] == "command line: --model" and expected not in reasons[0], "flag names, never values"
        else:
            assert reasons[0].startswith(expected)
    finally:
        session.close()


def test_the_seam_for_a_request_recorder_retires_a_mismatched_early_cli(inst: Instance, scripted_api: Any) -> None:
    """``CliLauncher.env_overrides`` (e.g. a loopback recorder's ANTHROPIC_BASE_URL) is part of the key."""
    early = start_early(inst)
    assert early is not None
    scripted_api.push(reply("recorded"))
    session = AgentSession(inst)
    session.launcher.early = early
    session.launcher.env_overrides["MNEMARA_TEST_RECORDER"] = "on"
    try:
        assert session.turn("hello").ok
        assert early.process.poll() is not None
        assert [e["reason"] for e in events(inst, "early_cli_unused")] == ["environment: MNEMARA_TEST_RECORDER"]
    finally:
        session.close()


def test_a_cli_that_cannot_start_early_leaves_the_session_as_it_was(
        inst: Instance, scripted_api: Any, isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    missing = isolated_home / "no-such-claude"
    real = early_mod.command_line
    monkeypatch.setattr(early_mod, "command_line", lambda cli, *rest, **kw: real(str(missing), *rest, **kw))
    temp = isolated_home / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    assert start_early(inst) is None
    failures = events(inst, "early_cli_failed")
    assert len(failures) == 1 and "no-such-claude" in failures[0]["error"]
    assert not list(temp.glob("mnemara-system-*")), "its system prompt file was removed"
    session, handle = first_turn(inst, None, scripted_api)
    session.close()
    assert ROLE in scripted_api.message_requests()[0].system_text


def test_an_early_cli_that_ended_before_the_session_is_replaced(inst: Instance, scripted_api: Any) -> None:
    early = start_early(inst)
    assert early is not None
    early.process.kill()
    early.process.wait()
    session, handle = first_turn(inst, early, scripted_api)
    session.close()
    assert [e["reason"] for e in events(inst, "early_cli_unused")] == [f"it ended (exit code {early.process.returncode})"]
    assert ROLE in scripted_api.message_requests()[0].system_text


def test_process_env_is_the_environment_the_sdk_gives_its_cli(inst: Instance, scripted_api: Any) -> None:
    """The early start writes the CLI's environment itself; it must be what the SDK's own start gives."""
    from claude_agent_sdk import __version__

    session, handle = first_turn(inst, None, scripted_api)
    try:
        pid = cli_process(handle.client).pid
        raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        actual = dict(item.decode().split("=", 1) for item in raw if b"=" in item)
        assert actual.pop(TREE_ENV).startswith(f"{pid}-")  # the launcher's own mark, added after the SDK's env
        options = session.launcher.options({"type": "file", "path": "unused"}, [])
        assert actual == dict(process_env(dict(options.env), session.cwd, __version__))
    finally:
        session.close()


def test_mnemara_run_hands_its_early_cli_to_the_first_turn(inst: Instance, scripted_api: Any, cli: Any) -> None:
    """The whole command, as a user runs it: the CLI started at its start serves the piped message."""
    scripted_api.push(reply("piped answer"))
    done = cli("run", "--instance", "early", input="hello from the pipe\n", subprocess_only=True,
               env={"MNEMARA_WARM_SPARE": "1"})
    assert done.returncode == 0, done.stderr
    assert "piped answer" in done.stdout
    adopted = events(inst, "early_cli_adopted")
    assert len(adopted) == 1 and not events(inst, "early_cli_unused"), inst.debug_log_path.read_text()
    assert "hello from the pipe" in scripted_api.message_requests()[0].user_text()


def test_every_cli_runs_in_a_session_of_its_own(inst: Instance, scripted_api: Any) -> None:
    """The guard launcher's ``setsid``: no terminal signal reaches the CLI, and it has its own CPU share."""
    early = start_early(inst)
    assert early is not None
    session, handle = first_turn(inst, early, scripted_api, cwd=str(inst.root))  # not adopted: a fresh CLI
    try:
        pids = {"early": early.process.pid, "fresh": cli_process(handle.client).pid}
        assert early.process.poll() is not None and pids["early"] != pids["fresh"]
        stat = Path(f"/proc/{pids['fresh']}/stat").read_text()
        fields = stat[stat.rindex(")") + 2:].split()  # state ppid pgrp session ...
        assert int(fields[3]) == pids["fresh"] != os.getsid(0), "the CLI leads a session of its own"
    finally:
        session.close()


@pytest.mark.parametrize(("version", "joined"), [
    ("0.2.189", False), ("0.2.180", False), ("0.1.81", False),
    ("0.2.190", True), ("0.2.201", True), ("1.0.0", True),
    ("", True), ("0.2", True), ("0.2.190rc1", True), ("dev", True),  # unreadable: the newest form
])
def test_the_sdk_version_says_how_option_values_are_written(version: str, joined: bool) -> None:
    assert early_mod.joins_values(version) is joined


def test_the_command_line_is_written_in_the_form_the_installed_sdk_writes() -> None:
    split = early_mod.command_line("cli", "/p", "m", {}, [], joined=False)
    assert split[4:8] == ("--system-prompt-file", "/p", "--tools", "")
    joined = early_mod.command_line("cli", "/p", "m", {"s": {"type": "stdio"}}, ["Read"], "{}", joined=True)
    assert joined[4:9] == ("--system-prompt-file=/p", "--tools=Read", "--model=m", "--permission-prompt-tool=stdio",
                           "--settings")  # --settings and --mcp-config keep their values apart in both
    assert joined[joined.index("--mcp-config") + 1] == '{"mcpServers": {"s": {"type": "stdio"}}}'
