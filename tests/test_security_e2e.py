"""Issue 13's attacks replayed end to end: scripted model -> real Claude CLI -> our hooks and tools.

Each test is one behaviour; variants live in the fast in-process tests named in its docstring.
"""
from __future__ import annotations

import json

import pytest

from mnemara.config import Config
from mnemara.testing import reply, tool_use

pytestmark = pytest.mark.e2e
T = "mcp__mnemara__"


def tool_text(request) -> tuple[str, bool]:
    """The text and error flag of the newest tool_result a request carries."""
    block = request.tool_results()[-1]
    content = block.get("content")
    text = content if isinstance(content, str) else "".join(c.get("text", "") for c in content or [])
    return text, bool(block.get("is_error"))


def test_graph_query_bypasses_of_the_old_filter_are_refused(scripted_api, session_factory):
    """Variants and the hypothesis fuzz: tests/test_cypher_guard.py."""
    session = session_factory()
    config = session.instance.config_path
    before = config.read_bytes()
    attach = session.instance.root / "other.kuzu"
    attacks = [
        {"cypher": "// '\nLOAD FROM '/etc/passwd' (file_format='csv', header=false, delim='|') RETURN *"},
        {"cypher": f"// '\nCOPY (RETURN 1 AS x) TO '{config}'"},
        {"cypher": "// '\nCOMMIT; CREATE (n:Node {id: 'evil', label: 'x', properties: '{}', created_at: ''})"},
        {"cypher": f"ATTACH '{attach}' AS o (dbtype kuzu)"},
        {"cypher": "CREATE NODE TABLE Evil(id STRING, PRIMARY KEY(id))", "write": True},
    ]
    scripted_api.push(*[reply(tool_use(f"{T}graph_query", a)) for a in attacks],
                      reply(tool_use(f"{T}graph_query", {"cypher": "MATCH (n:Node) RETURN count(n) AS n"})),
                      reply("done"))
    result = session.turn("query the graph")
    assert result.ok, result.errors
    requests = scripted_api.message_requests()
    for index in range(1, len(attacks) + 1):
        text, is_error = tool_text(requests[index])
        assert is_error and "refused" in text, text
        assert "root:" not in text
    text, is_error = tool_text(requests[len(attacks) + 1])
    assert not is_error and json.loads(text[:text.rindex("}") + 1])["rows"] == [[0]]  # nothing was created
    assert config.read_bytes() == before and Config.load(config)
    assert not attach.exists()


def test_read_of_a_per_process_path_is_refused_and_the_turn_ends(scripted_api, session_factory, isolated_home):
    """Variants (/proc/thread-self, /proc/<pid>, /dev/fd, symlinks, pipes): tests/test_policy_holes.py.

    The CLI itself refuses some spellings (/proc/self/fd/1); these two reach our hook."""
    session = session_factory()
    link = isolated_home / "notes.txt"
    link.symlink_to("/proc/self/fd/1")
    scripted_api.push(reply(tool_use("Read", {"file_path": "/dev/fd/3"})),
                      reply(tool_use("Read", {"file_path": str(link)})), reply("done"))
    result = session.turn("read your own stdout")
    assert result.ok and result.text == "done", result.errors
    for request in scripted_api.message_requests()[1:3]:
        text, is_error = tool_text(request)
        assert is_error and "per-process" in text, text


def test_server_wide_deny_blocks_write_memory_through_the_cli(scripted_api, session_factory):
    """Variants (every own tool, the per-tool override): tests/test_policy_holes.py."""
    session = session_factory()
    config = Config.load(session.instance.config_path)
    config.allowed_tools = [*config.allowed_tools, {"tool": "mcp__mnemara", "mode": "deny"}]
    config.save(session.instance.config_path)
    session.reload_config()
    scripted_api.push(reply(tool_use(f"{T}write_memory", {"text": "exfiltrated", "category": "insight"})),
                      reply("done"))
    result = session.turn("remember")
    assert result.ok, result.errors
    text, is_error = tool_text(scripted_api.message_requests()[1])
    assert is_error and "denied" in text
    assert not any(session.instance.memory_dir.glob("*.md"))


def test_run_warns_about_a_loose_bash_pattern_at_start(cli, mnemara_home):
    """Probing details: tests/test_policy_holes.py::test_loose_bash_patterns_are_found_by_probing."""
    assert cli("init", "--instance", "w", input="\n").returncode == 0
    path = mnemara_home / "w" / "config.json"
    data = json.loads(path.read_text())
    data["allowed_tools"][0]["allowed_patterns"] = ["^git status$", "^ls( |$)"]
    path.write_text(json.dumps(data))
    done = cli("run", "-i", "w", "--no-tui", input="/quit\n")
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "'^ls( |$)'" in warnings[0] and "allowed_tools[0]" in warnings[0], done.stderr
