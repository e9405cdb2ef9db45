"""The early start's records in the user's cache folder (launch inputs per config.json content, the SDK's
answers to a CLI's start-up messages, the wire-format check): read only when they are a regular file of
this user, for exactly their key; anything else (corrupt, a link, other bytes, another tool list) is no
record, and the early start then does what it does without one."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from mnemara.claude import launch_inputs, startup_answers
from mnemara.claude.launch_inputs import LaunchInputs

INPUTS = LaunchInputs("/roles/agent.md", "claude-sonnet-4-6", {"mnemara": {"type": "sdk", "name": "mnemara"}},
                      {"BASH_DEFAULT_TIMEOUT_MS": "120000"}, 0, ["Bash", "Read", "Write", "Edit"], False)


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path / "cache" / "mnemara"


def test_launch_inputs_are_recorded_per_exact_config_bytes(cache: Path) -> None:
    launch_inputs.record(b'{"model": "a"}', INPUTS)
    assert launch_inputs.recorded(b'{"model": "a"}') == INPUTS
    assert launch_inputs.recorded(b'{"model": "a" }') is None, "other bytes, no record"
    assert oct((cache / launch_inputs.FILE_NAME).stat().st_mode & 0o777) == "0o600"


def test_launch_inputs_depend_on_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    launch_inputs.record(b"{}", INPUTS)
    monkeypatch.setenv("HOME", str(tmp_path / "elsewhere"))
    assert launch_inputs.recorded(b"{}") is None


@pytest.mark.parametrize("content", ["not json", "[1, 2]", '{"%s": {"role_doc_path": 1}}'])
def test_a_corrupt_launch_record_is_no_record(cache: Path, content: str) -> None:
    launch_inputs.record(b"{}", INPUTS)
    key = next(iter(json.loads((cache / launch_inputs.FILE_NAME).read_text())))
    (cache / launch_inputs.FILE_NAME).write_text(content.replace("%s", key))
    assert launch_inputs.recorded(b"{}") is None
    launch_inputs.record(b"{}", INPUTS)  # and it is replaced by a good one
    assert launch_inputs.recorded(b"{}") == INPUTS


def test_records_behind_a_link_are_not_read(cache: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "planted.json"
    launch_inputs.record(b"{}", INPUTS)
    (cache / launch_inputs.FILE_NAME).rename(elsewhere)
    os.symlink(elsewhere, cache / launch_inputs.FILE_NAME)
    assert launch_inputs.recorded(b"{}") is None
    startup_answers.record("key", "request", {"jsonrpc": "2.0", "result": {}})
    (cache / startup_answers.FILE_NAME).rename(tmp_path / "answers.json")
    os.symlink(tmp_path / "answers.json", cache / startup_answers.FILE_NAME)
    assert startup_answers.load("key") == {}


def test_start_up_answers_are_kept_for_their_tools_key_only() -> None:
    assert startup_answers.record("tools-a", "tools/list", {"jsonrpc": "2.0", "id": 7, "result": {"tools": []}}) is False
    assert startup_answers.load("tools-a") == {"tools/list": {"jsonrpc": "2.0", "result": {"tools": []}}}, "no id kept"
    assert startup_answers.load("tools-b") == {}
    assert startup_answers.record("tools-a", "tools/list", {"jsonrpc": "2.0", "result": {"tools": [1]}}) is True
    assert startup_answers.record("tools-b", "initialize", {"result": {}}) is False
    assert startup_answers.load("tools-a") == {}, "one tool list at a time"


def test_the_wire_format_check_is_per_sdk_version() -> None:
    assert not startup_answers.verified("0.2.189")
    startup_answers.mark_verified("0.2.189")
    assert startup_answers.verified("0.2.189") and not startup_answers.verified("0.2.190")
    assert not startup_answers.verified("")
    startup_answers.forget_verified()
    assert not startup_answers.verified("0.2.189")


def test_the_versions_are_read_without_importing_the_packages() -> None:
    import sys

    had = {name: name in sys.modules for name in ("claude_agent_sdk", "mcp")}
    assert startup_answers.sdk_version() and startup_answers.mcp_version()
    assert {name: name in sys.modules for name in had} == had


RECORDED_START = """
import sys
from mnemara.claude.early import _inputs
from mnemara.store.instance import Instance
inputs = _inputs(Instance.open("early"))
print(inputs.role_doc_path, "pydantic" in sys.modules, "asyncio" in sys.modules)
"""


def test_a_recorded_launch_is_checked_without_pydantic_or_asyncio(cache: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The point of the record: the early CLI is spawned before pydantic (the config's validation, the tool
    modules) is imported, and asyncio (the session's) too. The first start validates and records; the next
    only checks the record."""
    import subprocess
    import sys

    from mnemara.core.config import update_config
    from mnemara.store.instance import Instance
    from tests.conftest import cli_env

    monkeypatch.setenv("MNEMARA_HOME", str(tmp_path / "home"))
    env = cli_env()  # this test's HOME, MNEMARA_HOME and cache folder
    inst = Instance.create("early")
    update_config(inst.config_path, role_doc_path=str(tmp_path / "role.md"))
    runs = [subprocess.run([sys.executable, "-c", RECORDED_START], capture_output=True, text=True, env=env, timeout=60)
            for _ in range(2)]
    assert [r.returncode for r in runs] == [0, 0], runs[-1].stderr
    role = str(tmp_path / "role.md")
    assert [r.stdout.split() for r in runs] == [[role, "True", "True"], [role, "False", "False"]]
