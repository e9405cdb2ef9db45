"""Opt-in native tools (issue 39): ``native_tools`` in config.json, and Grep/Glob/WebFetch under the gate."""
from __future__ import annotations

from pathlib import Path

import pytest

from mnemara.core.config import Config, ToolPolicy
from mnemara.core.errors import ConfigError
from mnemara.guard.gate import PermissionGate
from mnemara.store.instance import Instance


@pytest.mark.parametrize("value, why", [
    (["grep"], "did you mean 'Grep'?"),
    (["Bash", "Bash"], "'Bash' is listed twice"),
    (["Task"], "'Task' is not a Claude Code tool Mnemara offers; choose from Bash, Read, Write, Edit, Grep, Glob, WebFetch"),
    ({"Grep": True}, "a list of Claude Code tool names"),
])
def test_native_tools_refuses_what_it_cannot_offer(value, why):
    with pytest.raises(ConfigError) as refused:
        Config.from_dict({"native_tools": value})
    assert why in str(refused.value) and "native_tools" in str(refused.value)


def test_the_spec_four_are_the_default_and_the_others_are_opt_in():
    assert Config().native_tools == ["Bash", "Read", "Write", "Edit"]
    assert Config.from_dict({"native_tools": "Bash, Read, Grep"}).native_tools == ["Bash", "Read", "Grep"]


@pytest.fixture
def gate(mnemara_home: Path, isolated_home: Path):
    project = isolated_home / "proj"
    project.mkdir()

    def make(*policies: ToolPolicy) -> PermissionGate:
        inst = Instance.open("g") if (mnemara_home / "g").exists() else Instance.create("g")
        given = {p.tool for p in policies}
        kept = [p for p in Config().allowed_tools if p.tool not in given]
        return PermissionGate(Config(allowed_tools=[*kept, *policies]), inst, cwd=project)

    return make


def test_grep_and_glob_search_only_where_file_tools_may_read(gate, isolated_home: Path):
    g = gate()
    assert g.decide("Grep", {"pattern": "TODO"}).verdict == "allow"  # the session's folder, inside $HOME
    assert g.decide("Grep", {"pattern": "x", "path": str(isolated_home / "proj")}).verdict == "allow"
    outside = g.decide("Grep", {"pattern": "root", "path": "/etc"})
    assert outside.verdict == "deny" and "outside $HOME" in outside.reason
    assert g.decide("Glob", {"pattern": "**/*.py"}).verdict == "allow"
    for pattern in ("/etc/*", "../../*", "src/../../x", "~/../*"):
        refused = g.decide("Glob", {"pattern": pattern})
        assert refused.verdict == "deny" and "leaves the folder it searches" in refused.reason, pattern
    assert g.decide("Glob", {"pattern": "*", "path": "/proc/self"}).verdict == "deny"


def test_the_read_policy_governs_grep_and_glob(gate):
    g = gate(ToolPolicy(tool="Read", mode="deny", allowed_patterns=[]))
    for tool in ("Grep", "Glob"):
        decision = g.decide(tool, {"pattern": "x"})
        assert decision.verdict == "deny" and "Read=deny" in decision.reason
    assert gate(ToolPolicy(tool="Read", mode="ask", allowed_patterns=[])).decide("Grep", {"pattern": "x"}).verdict == "ask"


async def test_webfetch_asks_with_the_url_shown_whole(gate):
    asked = []
    g = gate()
    g.prompt = lambda request: asked.append(request) or "n"
    url = "https://example.com/a?next=\x1b[2K\u202eevil"
    assert g.decide("WebFetch", {"url": url, "prompt": "summarise"}).verdict == "ask"
    assert (await g.ask_decision("WebFetch", {"url": url, "prompt": "summarise"})).verdict == "deny"
    (request,) = asked
    assert request.target == url and request.describe() == "WebFetch: https://example.com/a?next=\\x1b[2K\\u202eevil"
    allowed = gate(ToolPolicy(tool="WebFetch", mode="ask", allowed_patterns=[r"^https://docs\.python\.org/"]))
    assert allowed.decide("WebFetch", {"url": "https://docs.python.org/3/", "prompt": "x"}).verdict == "allow"
    assert allowed.decide("WebFetch", {"url": "https://evil.example/docs.python.org/", "prompt": "x"}).verdict == "ask"
