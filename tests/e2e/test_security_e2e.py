"""Issue 13's attacks replayed end to end: scripted model -> real Claude CLI -> our hooks and tools.

Each test or step is one behaviour; variants live in the fast in-process tests named in its docstring.
"""
from __future__ import annotations

import json
import re

import pytest

from mnemara.core import events as ev
from mnemara.core.config import Config, ToolPolicy
from mnemara.testing.scripted_api import reply, tool_use
from tests.guard.test_policy_holes import _export_with_wide_permissions

pytestmark = pytest.mark.e2e
T = "mcp__mnemara__"


def tool_text(request) -> tuple[str, bool]:
    """The text and error flag of the newest tool_result a request carries."""
    block = request.tool_results()[-1]
    content = block.get("content")
    text = content if isinstance(content, str) else "".join(c.get("text", "") for c in content or [])
    return text, bool(block.get("is_error"))


def turn(api, session, message: str, *replies):
    """One turn of the shared session; the API forgets earlier turns, so request indexes count from
    this turn's first request."""
    api.clear()
    api.push(*replies)
    return session.turn(message)


def _graph_query_bypasses_of_the_old_filter_are_refused(api, session) -> None:
    """Variants and the hypothesis fuzz: tests/memory/test_cypher_guard.py."""
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
    result = turn(api, session, "query the graph", *[reply(tool_use(f"{T}graph_query", a)) for a in attacks],
                  reply(tool_use(f"{T}graph_query", {"cypher": "MATCH (n:Node) RETURN count(n) AS n"})),
                  reply("done"))
    assert result.ok, result.errors
    requests = api.message_requests()
    for index in range(1, len(attacks) + 1):
        text, is_error = tool_text(requests[index])
        assert is_error and "refused" in text, text
        assert "root:" not in text
    text, is_error = tool_text(requests[len(attacks) + 1])
    assert not is_error and json.loads(text[:text.rindex("}") + 1])["rows"] == [[0]], "a graph attack created a node"
    assert config.read_bytes() == before and Config.load(config), "a graph attack wrote config.json"
    assert not attach.exists()


def _read_of_a_per_process_path_is_refused_and_the_turn_ends(api, session, home) -> None:
    """Variants (/proc/thread-self, /proc/<pid>, /dev/fd, symlinks, pipes): tests/guard/test_policy_holes.py.

    The CLI itself refuses some spellings (/proc/self/fd/1); these two reach our hook."""
    link = home / "notes.txt"
    link.symlink_to("/proc/self/fd/1")
    result = turn(api, session, "read your own stdout", reply(tool_use("Read", {"file_path": "/dev/fd/3"})),
                  reply(tool_use("Read", {"file_path": str(link)})), reply("done"))
    assert result.ok and result.text == "done", result.errors
    for request in api.message_requests()[1:3]:
        text, is_error = tool_text(request)
        assert is_error and "per-process" in text, text


def _write_memory_refused_wiki_category_writes_no_note(api, session, outside) -> None:
    """Both or neither; variants: tests/guard/test_policy_holes.py::test_write_memory_with_a_refused_wiki_category_appends_no_note."""
    outside.write_text("kept\n")
    (session.instance.wiki_dir / "leak.md").symlink_to(outside)
    assert turn(api, session, "note it", reply(tool_use(f"{T}write_memory", {"text": "secret plan",
                                                                            "category": "wiki/leak"})),
                reply("done")).ok
    text, _ = tool_text(api.message_requests()[1])
    answer = json.loads(text[:text.rindex("}") + 1])
    assert answer["ok"] is False and "refused" in answer["error"]
    assert not any(session.instance.memory_dir.glob("*.md")) and outside.read_text() == "kept\n", \
        "a refused wiki category still wrote"


def _folder_pattern_does_not_write_through_a_symlink_out_of_the_folder(api, session, home) -> None:
    """Variants (both forms allowed, the prompt naming the file reached, `a`): tests/guard/test_symlink_patterns.py."""
    proj = home / "proj"
    proj.mkdir()
    (proj / "docs").symlink_to(home)
    config = Config.load(session.instance.config_path)
    config.allowed_tools = [*(p for p in config.allowed_tools if p.tool != "Write"),
                            ToolPolicy(tool="Write", mode="ask", allowed_patterns=[f"^{re.escape(str(proj))}/"])]
    config.save(session.instance.config_path)
    session.reload_config()
    result = turn(api, session, "add a note", reply(tool_use("Write", {"file_path": str(proj / "docs" / ".bashrc"),
                                                                     "content": "echo owned\n"})),
                  reply(tool_use("Write", {"file_path": str(proj / "notes.md"), "content": "fine\n"})), reply("done"))
    assert result.ok, result.errors
    text, is_error = tool_text(api.message_requests()[1])
    assert is_error and not (home / ".bashrc").exists(), "a folder pattern let a Write through a symlink out of it"
    assert (proj / "notes.md").read_text() == "fine\n", "a Write the pattern allows must still run unasked"


def _server_wide_deny_blocks_write_memory_through_the_cli(api, session) -> None:
    """Variants (every own tool, the per-tool override): tests/guard/test_policy_holes.py."""
    config = Config.load(session.instance.config_path)
    config.allowed_tools = [*config.allowed_tools, {"tool": "mcp__mnemara", "mode": "deny"}]
    config.save(session.instance.config_path)
    session.reload_config()
    result = turn(api, session, "remember", reply(tool_use(f"{T}write_memory", {"text": "exfiltrated",
                                                                                "category": "insight"})),
                  reply("done"))
    assert result.ok, result.errors
    text, is_error = tool_text(api.message_requests()[1])
    assert is_error and "denied" in text, "mcp__mnemara=deny did not outrank WriteMemory's default allow"
    assert not any(session.instance.memory_dir.glob("*.md"))


def _sentinel_halts_polls_that_differ_only_in_description(api, session, home) -> None:
    """Unit variant: tests/guard/test_policy_holes.py::test_sentinel_ignores_bash_description_but_not_the_command."""
    counter = home / "polls.txt"
    command = f"echo poll >> {counter}"
    config = Config.load(session.instance.config_path)
    config.runtime_sentinel = True
    config.allowed_tools = [{"tool": "Bash", "mode": "ask", "allowed_patterns": [f"^{re.escape(command)}$"]}]
    config.save(session.instance.config_path)
    session.reload_config()
    polls = [reply(tool_use("Bash", {"command": command, "description": f"check the build, try {n}"})) for n in range(4)]
    result = turn(api, session, "wait for the build", *polls, reply("finished"))
    assert counter.read_text() == "poll\npoll\n", "a reworded description dodged the sentinel"
    assert any(e.source == "sentinel" for e in result.events if isinstance(e, ev.Halt))


def test_attacks_through_one_cli_session(scripted_api, session_factory, isolated_home, tmp_path):
    """One session (one CLI process, reused turn after turn) replays the attacks in order: graph
    query bypasses, a per-process path read, a refused wiki category, then under changed policies a
    server-wide deny of write_memory and polls that differ only in their description (the sentinel
    halt ends the session's process, so it comes last). Each step is named after its behaviour."""
    session = session_factory()
    _graph_query_bypasses_of_the_old_filter_are_refused(scripted_api, session)
    _read_of_a_per_process_path_is_refused_and_the_turn_ends(scripted_api, session, isolated_home)
    _write_memory_refused_wiki_category_writes_no_note(scripted_api, session, tmp_path / "outside.md")
    _folder_pattern_does_not_write_through_a_symlink_out_of_the_folder(scripted_api, session, isolated_home)
    _server_wide_deny_blocks_write_memory_through_the_cli(scripted_api, session)
    _sentinel_halts_polls_that_differ_only_in_description(scripted_api, session, isolated_home)


def test_run_warns_about_a_loose_bash_pattern_at_start(cli, mnemara_home):
    """Probing details: tests/guard/test_policy_holes.py::test_loose_bash_patterns_are_found_by_probing."""
    assert cli("init", "--instance", "w", input="\n").returncode == 0
    path = mnemara_home / "w" / "config.json"
    data = json.loads(path.read_text())
    data["allowed_tools"][0]["allowed_patterns"] = ["^git status$", ".*"]
    path.write_text(json.dumps(data))
    done = cli("run", "-i", "w", "--no-tui", input="/quit\n")
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "'.*'" in warnings[0] and "allowed_tools[0]" in warnings[0], done.stderr


def test_import_in_the_repl_shows_permission_changes_and_imports_nothing(cli, session_factory, tmp_path):
    """In-process variants (--keep-permissions, --accept-permissions): tests/guard/test_policy_holes.py."""

    out = _export_with_wide_permissions(session_factory, tmp_path)
    dst = session_factory("dst")
    before = dst.instance.config_path.read_bytes()
    dst.close()
    done = cli("run", "-i", "dst", "--no-tui", input=f'/import "{out}"\n/quit\n')
    shown = done.stdout + done.stderr
    assert "would change what the agent may do" in shown and '"mode": "allow", "tool": "Bash"' in shown
    assert "Nothing was imported" in shown and "--accept-permissions" in shown
    assert dst.instance.config_path.read_bytes() == before


def test_second_run_on_the_same_instance_is_refused_clearly(cli, mnemara_home):
    """Two real `mnemara run` processes; the lock itself: tests/guard/test_policy_holes.py::test_run_lock_refuses_a_second_holder_and_frees_on_exit."""
    import subprocess
    import sys
    import time

    from tests.conftest import ROOT, cli_env

    assert cli("init", "--instance", "w", input="\n").returncode == 0
    lock = mnemara_home / "w" / ".run.lock"
    first = subprocess.Popen([sys.executable, "-m", "mnemara", "run", "-i", "w", "--no-tui"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cli_env(), cwd=str(ROOT))
    try:
        deadline = time.monotonic() + 60
        while not (lock.exists() and lock.read_text().strip() == str(first.pid)):
            assert time.monotonic() < deadline and first.poll() is None, "the first run never took the lock"
            time.sleep(0.1)
        second = cli("run", "-i", "w", "--no-tui", input="hello\n")
        assert second.returncode == 1
        assert f"already open in another `mnemara run` or `mnemara serve` (pid {first.pid})" in second.stderr
        assert len(second.stderr.strip().splitlines()) == 1
    finally:
        first.communicate("/quit\n", timeout=60)
    assert first.returncode == 0
    assert cli("run", "-i", "w", "--no-tui", input="/quit\n").returncode == 0  # free again


def _modes(root):
    """(relative path, mode) of every folder and file under ``root``, the root included."""
    import os

    found = [(".", os.stat(root).st_mode & 0o777)]
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(folder, name)
            found.append((os.path.relpath(path, root), os.lstat(path).st_mode & 0o777))
    return found


def test_instance_folders_and_files_are_private_after_a_real_session(cli, scripted_api, mnemara_home, tmp_path):
    """Creation alone: tests/guard/test_policy_holes.py::test_new_instance_is_private_whatever_the_umask."""
    assert cli("init", "--instance", "p", input="\n").returncode == 0
    assert cli("note", "-i", "p", "a first note").returncode == 0
    scripted_api.push(
        reply(tool_use(f"{T}write_memory", {"text": "lease renewals stall", "category": "wiki/ops/leases",
                                            "applies_to": ["Lease manager"]})),
        reply(tool_use(f"{T}propose_role_amendment", {"title": "t", "rationale": "r", "proposed_text": "p"})),
        reply("noted"))
    done = cli("run", "-i", "p", "--no-tui", input=f"remember it\n/export {tmp_path / 'x.md'}\n")
    assert done.returncode == 0 and "noted" in done.stdout, done.stderr
    root = mnemara_home / "p"
    modes = dict(_modes(root))
    assert {"wiki/ops/leases.md", "turns.sqlite", "config.json", "debug.log", "graph/graph.kuzu"} <= set(modes)
    assert (mnemara_home.stat().st_mode & 0o777) == 0o700 and modes["."] == 0o700
    # LanceDB (the chunks table and the per-model vector tables the default local embedder fills)
    # and Kuzu create their own files with the library's modes; they sit inside the 0700
    # instance folder, so no other user can reach them. Everything Mnemara writes itself is private.
    ours = {p: m for p, m in modes.items() if not (p.startswith("graph/") or (p.startswith("index/") and ".lance" in p))}
    loose = {p: oct(m) for p, m in ours.items() if m not in (0o700, 0o600)}
    assert not loose, loose
