"""Opt-in native tools through the real CLI and the REPL (issue 39): offered only when ``native_tools``
lists them, run for real when the gate allows, refused by the gate outside the file roots."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from mnemara.core.config import update_config
from mnemara.store.instance import Instance
from mnemara.testing.scripted_api import reply, tool_use
from tests.conftest import run_cli

pytestmark = pytest.mark.e2e


def test_grep_and_glob_are_offered_when_configured_and_judged_by_the_gate(scripted_api, mnemara_home):
    home = Path(os.environ["HOME"])
    (home / "proj").mkdir()
    (home / "proj" / "lease.py").write_text("LEASE_SECONDS = 30\n", encoding="utf-8")
    inst = Instance.create("nt")
    scripted_api.push(reply("plain"))
    assert run_cli("run", "--instance", "nt", "--no-tui", input="hello\n", subprocess_only=True).returncode == 0
    offered = set(scripted_api.message_requests()[0].tool_names())
    assert {"Bash", "Read", "Write", "Edit"} <= offered and not offered & {"Grep", "Glob", "WebFetch"}

    update_config(inst.config_path, native_tools=["Bash", "Read", "Write", "Edit", "Grep", "Glob"])
    scripted_api.push(
        reply(tool_use("Grep", {"pattern": "LEASE_SECONDS", "path": str(home / "proj"), "output_mode": "content"})),
        reply(tool_use("Grep", {"pattern": "root", "path": "/etc"})),
        reply(tool_use("Glob", {"pattern": "/etc/*"})),
        reply("searched"))
    done = run_cli("run", "--instance", "nt", "--no-tui", input="find the lease\n", subprocess_only=True)
    assert done.returncode == 0, done.stderr
    requests = scripted_api.message_requests()[1:]
    assert {"Grep", "Glob"} <= set(requests[0].tool_names()) and "WebFetch" not in requests[0].tool_names()
    results = [json.dumps(r.tool_results()[-1]) for r in requests[1:4]]
    assert "LEASE_SECONDS = 30" in results[0]  # ran for real, inside $HOME
    assert "outside $HOME" in results[1] and "root:" not in results[1]
    assert "leaves the folder it searches" in results[2]
