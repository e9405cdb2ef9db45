"""Issue 28 item 6: every private name of the SDK we read is in mnemara.claude._private, and exists.

The checks run against the installed claude_agent_sdk (and the anyio/asyncio objects it runs
the CLI on), building real objects: an SDK upgrade that renames any of them fails here, instead
of silently turning off CLI reuse, ``/stop``'s kill or adopting the early CLI.
"""
from __future__ import annotations

import ast
import asyncio
import importlib
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import pytest
from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient

import mnemara
from mnemara.claude import _private
from mnemara.claude._private import (RELIED_ON, Reliance, asyncio_transport, cli_process, control_sender, sdk_command,
                                     transport_loop)
from mnemara.claude.process import bundled_cli_path, release_transport

PACKAGE = Path(mnemara.__file__).parent
PRIVATE = Path(_private.__file__)


def _owner(spec: str) -> Any:
    module_name, _, qualname = spec.partition(":")
    found: Any = importlib.import_module(module_name)
    for part in filter(None, qualname.split(".")):
        found = getattr(found, part)
    return found


async def _real_instances() -> dict[str, Any]:
    """One real object of every class RELIED_ON names an instance attribute of."""
    from claude_agent_sdk._internal.transport.subprocess_cli import SubprocessCLITransport

    process = await anyio.open_process([sys.executable, "-c", "import sys; sys.stdin.read()"])
    try:
        instances = {
            "claude_agent_sdk:ClaudeSDKClient": ClaudeSDKClient(ClaudeAgentOptions()),
            "claude_agent_sdk._internal.transport.subprocess_cli:SubprocessCLITransport":
                SubprocessCLITransport(prompt="", options=ClaudeAgentOptions(cli_path=bundled_cli_path())),
            "anyio._backends._asyncio:Process": process,
            "asyncio.base_subprocess:BaseSubprocessTransport": getattr(process, "_transport", None),
        }
        return instances
    finally:
        process.kill()
        await process.wait()
        release_transport(getattr(process, "_transport", None))


def _missing(relied_on: tuple[Reliance, ...], instances: dict[str, Any]) -> list[str]:
    missing = []
    for reliance in relied_on:
        owner = _owner(reliance.owner)
        if reliance.on == "instance":
            assert reliance.owner in instances, f"no real {reliance.owner} built to check {reliance.attribute} on"
            real = instances[reliance.owner]
            assert isinstance(real, owner), f"{reliance.owner}: built a {type(real).__name__}"
            holder = real
        else:
            holder = owner
        if not hasattr(holder, reliance.attribute):
            missing.append(f"{reliance.owner} has no {reliance.attribute} ({reliance.why})")
    return missing


def test_every_private_name_relied_on_exists_in_the_installed_packages():
    instances = asyncio.run(_real_instances())
    missing = _missing(RELIED_ON, instances)
    assert not missing, "the installed SDK renamed what mnemara.claude._private relies on: " + "; ".join(missing)
    renamed = tuple(replace(r, attribute=r.attribute + "_renamed") for r in RELIED_ON)
    assert len(_missing(renamed, instances)) == len(RELIED_ON), "the check would not notice a rename"


def _private_names_read(tree: ast.AST) -> set[str]:
    """Private names _private.py reads: getattr literals, ``x._name`` on others, imported ``_`` names/modules."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr":
            if len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and str(node.args[1].value).startswith("_"):
                names.add(str(node.args[1].value))
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            if not (isinstance(node.value, ast.Name) and node.value.id == "self"):
                names.add(node.attr)
        elif isinstance(node, ast.ImportFrom) and node.module and node.module != "__future__":
            names.update(alias.name for alias in node.names if alias.name.startswith("_"))
            if any(part.startswith("_") for part in node.module.split(".")):
                names.update(alias.name for alias in node.names)
    return names


def test_relied_on_lists_every_private_name_the_module_reads():
    read = _private_names_read(ast.parse(PRIVATE.read_text(encoding="utf-8")))
    listed = {r.attribute for r in RELIED_ON}
    assert read, "the scan found nothing: it is not looking at the right module"
    assert read == listed, f"read but not listed: {sorted(read - listed)}; listed but not read: {sorted(listed - read)}"


def _private_sdk_uses(path: Path) -> list[str]:
    """Private SDK imports in ``path``; in the packages SDK objects pass through (claude, session),
    also ``getattr(x, "_name")``."""
    sdk_objects_pass = path.parent.name in ("claude", "session")
    text = path.read_text(encoding="utf-8")
    if "claude_agent_sdk" not in text and not (sdk_objects_pass and "getattr" in text):
        return []  # nothing to look for: skip parsing it
    tree = ast.parse(text)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("claude_agent_sdk"):
            private = [a.name for a in node.names if a.name.startswith("_") and a.name != "__version__"]
            if private or any(part.startswith("_") for part in (node.module or "").split(".")):
                found.append(f"{path.name}:{node.lineno} imports {node.module} {private}")
        elif isinstance(node, ast.Import):
            found += [f"{path.name}:{node.lineno} imports {a.name}" for a in node.names
                      if a.name.startswith("claude_agent_sdk.") and "._" in a.name]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr":
            if sdk_objects_pass and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant):
                name = str(node.args[1].value)
                if name.startswith("_") and not name.startswith("__"):
                    found.append(f"{path.name}:{node.lineno} getattr(..., {name!r})")
    return found


def test_no_other_module_reads_the_sdks_private_names():
    offenders = [use for path in sorted(PACKAGE.rglob("*.py")) if path != PRIVATE for use in _private_sdk_uses(path)]
    assert offenders == []


def test_the_scan_sees_a_private_read_it_should_refuse(tmp_path):
    (tmp_path / "claude").mkdir()
    bad = tmp_path / "claude" / "bad.py"
    bad.write_text("from claude_agent_sdk.types import _configure_can_use_tool\n"
                   "def f(c):\n    return getattr(c, '_query', None)\n", encoding="utf-8")
    assert len(_private_sdk_uses(bad)) == 2


def test_an_unconnected_client_has_no_process_and_no_control_channel():
    client = ClaudeSDKClient(ClaudeAgentOptions())
    assert cli_process(client) is None
    assert control_sender(client) is None


def test_a_real_subprocess_gives_its_asyncio_transport_and_loop_and_is_released():
    async def run() -> tuple[Any, Any, Any, int | None]:
        process = await anyio.open_process([sys.executable, "-c", "import sys; sys.stdin.read()"])
        transport = asyncio_transport(process)
        loop = transport_loop(transport)
        release_transport(transport)  # closing the transport kills a process still running
        code = await process.wait()
        return transport, loop, asyncio.get_running_loop(), code

    transport, loop, running, code = asyncio.run(run())
    assert isinstance(transport, asyncio.SubprocessTransport)
    assert loop is running
    assert transport.is_closing() and code is not None


def test_a_transport_whose_loop_has_closed_is_ended_without_it(monkeypatch):
    """Turns run under an asyncio.run() that returned before the session was closed leave the CLI's
    transport on a dead loop: releasing it kills the process and marks it closed, so the garbage
    collector does not print "Event loop is closed" into whatever runs then."""
    import gc
    import os
    import time

    async def start() -> Any:
        return await anyio.open_process([sys.executable, "-c", "import sys; sys.stdin.read()"])

    process = asyncio.run(start())
    transport = asyncio_transport(process)
    assert transport is not None and transport_loop(transport).is_closed() and not transport.is_closing()
    seen: list[Any] = []
    monkeypatch.setattr(sys, "unraisablehook", seen.append)
    release_transport(transport)
    assert transport.is_closing()
    pid, deadline = process.pid, time.monotonic() + 10
    while Path(f"/proc/{pid}").exists() and "zombie" not in Path(f"/proc/{pid}/status").read_text().lower() \
            and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text().lower()
    del process, transport
    gc.collect()
    assert not [u for u in seen if "Event loop is closed" in str(u.exc_value)], seen
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def test_sdk_command_is_what_the_sdk_runs_for_the_options(tmp_path):
    cli = bundled_cli_path()
    argv = sdk_command(ClaudeAgentOptions(cli_path=cli, model="claude-test-model", cwd=str(tmp_path)))
    assert argv[0] == cli
    # either form the SDK has written: "--model=x" (0.2.190 on) or "--model", "x"
    joined = [item.partition("=")[2] for item in argv if item.startswith("--model=")]
    split = [argv[n + 1] for n, item in enumerate(argv[:-1]) if item == "--model"]
    assert joined + split == ["claude-test-model"]


def test_sdk_command_refuses_options_the_sdk_refuses():
    async def allow(*_: Any) -> Any:
        return None

    with pytest.raises(ValueError):
        sdk_command(ClaudeAgentOptions(cli_path=bundled_cli_path(), can_use_tool=allow,
                                       permission_prompt_tool_name="other"))
