"""Permissions and the runtime sentinel end to end: our session -> the real SDK -> the real bundled
Claude Code CLI -> the scripted Messages API. The CLI runs the real tools; we assert on files the
tools did or did not touch, on what the prompt was asked, and on what reached the model."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from mnemara import events as ev
from mnemara.config import ToolPolicy, update_config
from mnemara.debuglog import read_events
from mnemara.instance import Instance
from mnemara.permissions import PermissionRequest
from mnemara.session import AgentSession
from mnemara.testing import ScriptedAPI, reply, text, tool_use

pytestmark = pytest.mark.e2e


@pytest.fixture
def api(monkeypatch):
    with ScriptedAPI() as server:
        for key, value in server.env().items():
            monkeypatch.setenv(key, value)
        yield server


@pytest.fixture
def inst(mnemara_home) -> Instance:
    return Instance.create("perm")


class Answers:
    """A scripted permission prompt: records each request, answers from a list (then None)."""

    def __init__(self, *answers: str | None) -> None:
        self.answers = list(answers)
        self.requests: list[PermissionRequest] = []

    def __call__(self, request: PermissionRequest) -> str | None:
        self.requests.append(request)
        return self.answers.pop(0) if self.answers else None


def open_session(inst: Instance, home: Path, prompt=None) -> AgentSession:
    return AgentSession(inst, permission_prompt=prompt, cwd=home, warm_spare=False)


def tool_result_of(api: ScriptedAPI, request_index: int) -> dict:
    """The newest tool_result the model received in that request."""
    return api.message_requests()[request_index].tool_results()[-1]


def result_text(result: dict) -> str:
    content = result.get("content")
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return str(content)


def bash_then_done(api: ScriptedAPI, command: str) -> None:
    api.push(reply(tool_use("Bash", {"command": command})), reply(text("done")))


# -- Bash = ask -----------------------------------------------------------------------------

def test_ask_prompts_even_for_echo_and_y_runs_it(api, inst, isolated_home):
    marker = isolated_home / "ran.txt"
    bash_then_done(api, f"echo hi > {marker}")
    prompt = Answers("y")
    with open_session(inst, isolated_home, prompt) as session:
        result = session.turn("say hi")
    assert result.ok, result.errors
    assert [r.policy_name for r in prompt.requests] == ["Bash"]
    assert prompt.requests[0].target == f"echo hi > {marker}"
    assert marker.read_text() == "hi\n"
    assert not tool_result_of(api, 1).get("is_error")


def test_plain_echo_hi_is_not_auto_approved(api, inst, isolated_home):
    bash_then_done(api, "echo hi")
    prompt = Answers("n")
    with open_session(inst, isolated_home, prompt) as session:
        session.turn("say hi")
    assert len(prompt.requests) == 1  # the CLI's own "safe command" shortcut did not skip us
    result = tool_result_of(api, 1)
    assert result.get("is_error") is True and "hi" != result_text(result).strip()


def test_n_denies_and_model_gets_error(api, inst, isolated_home):
    marker = isolated_home / "never.txt"
    bash_then_done(api, f"touch {marker}")
    with open_session(inst, isolated_home, Answers("n")) as session:
        result = session.turn("touch it")
    assert not marker.exists()
    tr = tool_result_of(api, 1)
    assert tr.get("is_error") is True and "denied" in result_text(tr).lower()
    assert result.done.assistant_row_id is not None  # the turn itself completed cleanly


def test_no_prompt_means_deny(api, inst, isolated_home):
    marker = isolated_home / "never.txt"
    bash_then_done(api, f"touch {marker}")
    with open_session(inst, isolated_home, None) as session:
        session.turn("touch it")
    assert not marker.exists()
    assert tool_result_of(api, 1).get("is_error") is True


def test_deny_policy_never_prompts(api, inst, isolated_home):
    update_config(inst.config_path, allowed_tools=[{"tool": "Bash", "mode": "deny", "allowed_patterns": []}])
    marker = isolated_home / "never.txt"
    bash_then_done(api, f"touch {marker}")
    prompt = Answers("y")
    with open_session(inst, isolated_home, prompt) as session:
        session.turn("touch it")
    assert prompt.requests == [] and not marker.exists()
    tr = tool_result_of(api, 1)
    assert tr.get("is_error") is True and "denied" in result_text(tr).lower()


def test_a_persists_and_next_identical_call_runs_unprompted(api, inst, isolated_home):
    counter = isolated_home / "count.txt"
    command = f"echo x >> {counter}"
    bash_then_done(api, command)
    prompt = Answers("a")
    with open_session(inst, isolated_home, prompt) as session:
        session.turn("once")
    saved = json.loads(inst.permissions_path.read_text())["allowed_patterns"]["Bash"]
    assert len(saved) == 1
    # a new session (fresh process state) runs the identical command without asking ...
    bash_then_done(api, command)
    later = Answers()
    with open_session(inst, isolated_home, later) as session:
        session.turn("again")
    assert later.requests == []
    assert counter.read_text() == "x\nx\n"
    # ... but a different command still asks
    bash_then_done(api, command + " && echo y")
    with open_session(inst, isolated_home, later) as session:
        session.turn("different")
    assert len(later.requests) == 1 and counter.read_text() == "x\nx\n"


def test_s_lasts_for_the_session_only(api, inst, isolated_home):
    counter = isolated_home / "count.txt"
    prompt = Answers("s")
    with open_session(inst, isolated_home, prompt) as session:
        bash_then_done(api, f"echo 1 >> {counter}")
        session.turn("one")
        bash_then_done(api, f"echo 2 >> {counter}")  # a different command, next turn, same session
        session.turn("two")
    assert len(prompt.requests) == 1
    assert counter.read_text() == "1\n2\n"
    assert json.loads(inst.permissions_path.read_text())["allowed_patterns"] == {}
    fresh = Answers("n")
    bash_then_done(api, f"echo 3 >> {counter}")
    with open_session(inst, isolated_home, fresh) as session:
        session.turn("three")
    assert len(fresh.requests) == 1 and counter.read_text() == "1\n2\n"


def test_config_pattern_preseeds_allow(api, inst, isolated_home):
    update_config(inst.config_path, allowed_tools=[
        {"tool": "Bash", "mode": "ask", "allowed_patterns": [r"^echo ok >> \S+$"]}])
    counter = isolated_home / "count.txt"
    bash_then_done(api, f"echo ok >> {counter}")
    prompt = Answers()
    with open_session(inst, isolated_home, prompt) as session:
        session.turn("go")
    assert prompt.requests == [] and counter.read_text() == "ok\n"


# -- home only ----------------------------------------------------------------------------------

def _read_refused(api, inst, session, path: str, resolved: str) -> None:
    api.push(reply(tool_use("Read", {"file_path": path})), reply(text("done")))
    session.turn("read it")
    tr = tool_result_of(api, -1)
    assert tr.get("is_error") is True, path
    assert "outside $HOME" in result_text(tr)
    assert "root:" not in result_text(tr)
    logged = [e for e in read_events(inst.debug_log_path) if e.get("event") == "permission_home_only"]
    # the CLI may normalise the path before our hook sees it; what matters is where it resolves
    assert logged and logged[-1]["resolved"] == resolved


def test_home_only_refuses_every_way_out_and_allows_inside(api, inst, isolated_home, tmp_path_factory):
    """One session (one CLI) walks every way out of $HOME: '..', an absolute path, a symlink
    pointing out, a write outside; a read inside is allowed. None of them asks."""
    outside = tmp_path_factory.mktemp("outside")
    (outside / "secret.txt").write_text("root: top secret\n")
    (isolated_home / "innocent").symlink_to(outside / "secret.txt")
    target = outside / "dropped.txt"
    note = isolated_home / "note.txt"
    note.write_text("inside content\n")
    prompt = Answers("y", "y", "y", "y", "y")
    with open_session(inst, isolated_home, prompt) as session:
        _read_refused(api, inst, session, "../../../../../../etc/passwd", "/etc/passwd")
        _read_refused(api, inst, session, f"{isolated_home}/../../../../../../etc/passwd", "/etc/passwd")
        _read_refused(api, inst, session, "/etc/passwd", "/etc/passwd")
        _read_refused(api, inst, session, str(isolated_home / "innocent"), str((outside / "secret.txt").resolve()))
        api.push(reply(tool_use("Write", {"file_path": str(target), "content": "x"})), reply(text("done")))
        session.turn("write it")
        assert not target.exists() and tool_result_of(api, -1).get("is_error") is True
        api.push(reply(tool_use("Read", {"file_path": str(note)})), reply(text("done")))
        session.turn("read it")
        inside = tool_result_of(api, -1)
        assert not inside.get("is_error") and "inside content" in result_text(inside)
    assert prompt.requests == []


# -- runtime sentinel ------------------------------------------------------------------------------

def _script_polls(api: ScriptedAPI, command: str, polls: int) -> None:
    for _ in range(polls):
        api.push(reply(text("Checking again."), tool_use("Bash", {"command": command})))
    api.push(reply(text("finished polling")))


def _allow_bash(inst: Instance, pattern: str, sentinel: bool) -> None:
    update_config(inst.config_path, runtime_sentinel=sentinel,
                  allowed_tools=[{"tool": "Bash", "mode": "ask", "allowed_patterns": [pattern]}])


def test_sentinel_halts_third_identical_poll_and_fourth_never_runs(api, inst, isolated_home):
    counter = isolated_home / "polls.txt"
    command = f"echo poll >> {counter}"
    _allow_bash(inst, r"^echo poll >> ", sentinel=True)
    _script_polls(api, command, polls=5)
    with open_session(inst, isolated_home, Answers()) as session:
        result = session.turn("wait for the build")
        assert counter.read_text() == "poll\npoll\n"  # calls 1 and 2 ran; 3 was refused; 4 never came
        halts = [e for e in result.events if isinstance(e, ev.Halt)]
        assert len(halts) == 1 and halts[0].source == "sentinel"
        notice = halts[0].reason
        assert notice.startswith("SENTINEL HALT") and "trigger: polling" in notice
        assert f"turn: {result.done.user_row_id}" in notice and command in notice
        assert not result.errors and result.done.assistant_row_id is not None
        row = session.store.get(result.done.assistant_row_id)
        assert row.blocks[-1] == {"type": "text", "text": notice}
        assert row.meta.get("halted") == "sentinel"
        logged = [e["event"] for e in read_events(inst.debug_log_path)]
        assert "sentinel_halt" in logged and "sentinel_halted_turn" in logged
        # the session stays usable and the model sees the halt in its context next turn
        # (the halted CLI may still send one request while it is shut down, so answer by default)
        api.default = reply(text("Understood, I will wait."))
        api.clear()
        after = session.turn("ok, stop polling")
        assert after.ok and "Understood" in after.text
        [next_turn] = [r for r in api.message_requests() if "ok, stop polling" in r.user_text()][:1]
        assert "SENTINEL HALT" in next_turn.user_text()
    assert counter.read_text() == "poll\npoll\n"


def test_sentinel_off_by_default_lets_polls_run(api, inst, isolated_home):
    counter = isolated_home / "polls.txt"
    _allow_bash(inst, r"^echo poll >> ", sentinel=False)
    _script_polls(api, f"echo poll >> {counter}", polls=4)
    with open_session(inst, isolated_home, Answers()) as session:
        result = session.turn("poll")
    assert counter.read_text() == "poll\n" * 4
    assert not any(isinstance(e, ev.Halt) for e in result.events)


# -- hand-edited files with faults -------------------------------------------------------------------

def test_malformed_entries_are_reported_and_the_turn_still_runs(api, inst, isolated_home):
    update_config(inst.config_path, allowed_tools=[
        {"tool": "Bash", "mode": "ask", "allowed_patterns": ["(unclosed"]}])
    inst.permissions_path.write_text('{"allowed_patterns": {"Bash": [".*"]')  # truncated: must not allow all
    marker = isolated_home / "never.txt"
    bash_then_done(api, f"touch {marker}")
    prompt = Answers("n")
    with open_session(inst, isolated_home, prompt) as session:
        result = session.turn("touch it")
        notices = [e.message for e in result.events if isinstance(e, ev.Notice)]
        assert any("config.json" in n and "allowed_tools[0]" in n and "(unclosed" in n for n in notices)
        assert any("permissions.json" in n and "invalid JSON" in n for n in notices)
        assert len(prompt.requests) == 1 and not marker.exists()  # still asked: no "allow all"
        assert result.done.assistant_row_id is not None and not result.errors
        # reported once per session, not on every turn
        bash_then_done(api, "true")
        again = session.turn("again")
        assert not [e for e in again.events if isinstance(e, ev.Notice)]
    logged = [e for e in read_events(inst.debug_log_path) if e.get("event") == "permission_config_problem"]
    assert len(logged) == 2


# -- in-process tools by spec name and by model-facing name ----------------------------------------

def _notes(inst: Instance) -> str:
    return "".join(p.read_text() for p in sorted(inst.memory_dir.glob("*.md")))


def test_write_memory_allowed_by_default(api, inst, isolated_home):
    api.push(reply(tool_use("mcp__mnemara__write_memory", {"text": "remember the lease timeout"})), reply(text("ok")))
    prompt = Answers()
    with open_session(inst, isolated_home, prompt) as session:
        session.turn("remember")
    assert prompt.requests == [] and "remember the lease timeout" in _notes(inst)


def test_write_memory_denied_by_spec_name(api, inst, isolated_home):
    update_config(inst.config_path, allowed_tools=[{"tool": "WriteMemory", "mode": "deny", "allowed_patterns": []}])
    api.push(reply(tool_use("mcp__mnemara__write_memory", {"text": "forbidden note"})), reply(text("ok")))
    with open_session(inst, isolated_home, Answers("y")) as session:
        session.turn("remember")
    assert "forbidden note" not in _notes(inst)
    tr = tool_result_of(api, 1)
    assert tr.get("is_error") is True and "WriteMemory" in result_text(tr)


def test_write_memory_gated_by_model_facing_name(api, inst, isolated_home):
    update_config(inst.config_path, allowed_tools=[
        {"tool": "mcp__mnemara__write_memory", "mode": "ask", "allowed_patterns": []}])
    api.push(reply(tool_use("mcp__mnemara__write_memory", {"text": "asked note"})), reply(text("ok")))
    prompt = Answers("n")
    with open_session(inst, isolated_home, prompt) as session:
        session.turn("remember")
    assert [r.policy_name for r in prompt.requests] == ["WriteMemory"]
    assert "asked note" not in _notes(inst)
    assert tool_result_of(api, 1).get("is_error") is True


# -- external MCP servers: allowed by namespace unless a more specific policy says otherwise ---------

STUB = Path(__file__).with_name("mcp_stub_server.py")


def _with_stub_server(inst: Instance, policies: list[dict]) -> None:
    import sys

    update_config(inst.config_path, mcp_servers=[{"name": "stub", "command": sys.executable, "args": [str(STUB)]}],
                  allowed_tools=policies)


def test_configured_mcp_server_is_allowed_but_a_specific_deny_holds(api, inst, isolated_home):
    _with_stub_server(inst, [{"tool": "mcp__stub__shred", "mode": "deny", "allowed_patterns": []}])
    log = isolated_home / "stub.log"
    api.push(reply(tool_use("mcp__stub__stamp", {"path": str(log)})),
             reply(tool_use("mcp__stub__shred", {"path": str(log)})), reply(text("done")))
    prompt = Answers("y")
    with open_session(inst, isolated_home, prompt) as session:
        session.turn("stamp then shred")
    assert "mcp__stub__stamp" in api.message_requests()[0].tool_names()
    assert log.read_text() == "stamp\n" and prompt.requests == []
    assert tool_result_of(api, 2).get("is_error") is True


def test_server_wide_ask_policy_prompts(api, inst, isolated_home):
    _with_stub_server(inst, [{"tool": "mcp__stub", "mode": "ask", "allowed_patterns": []}])
    log = isolated_home / "stub.log"
    api.push(reply(tool_use("mcp__stub__stamp", {"path": str(log)})), reply(text("done")))
    prompt = Answers("n")
    with open_session(inst, isolated_home, prompt) as session:
        session.turn("stamp")
    assert [r.tool_name for r in prompt.requests] == ["mcp__stub__stamp"]
    assert not log.exists()


def test_sentinel_role_doc_reaches_the_model(api, inst, isolated_home):
    from tests.conftest import ROOT

    role = ROOT / "examples" / "roles" / "sentinel.md"
    update_config(inst.config_path, role_doc_path=str(role))
    api.push(reply(text("ok")))
    with open_session(inst, isolated_home, Answers()) as session:
        assert session.turn("hello").ok
    system = api.last.system_text
    assert "### 2. Polling" in system and "SENTINEL HALT" in system


def test_write_and_edit_ask_by_default(api, inst, isolated_home):
    target = isolated_home / "plan.txt"
    api.push(reply(tool_use("Write", {"file_path": str(target), "content": "draft one\n"})),
             reply(tool_use("Edit", {"file_path": str(target), "old_string": "one", "new_string": "two"})),
             reply(text("done")))
    prompt = Answers("y", "n")
    with open_session(inst, isolated_home, prompt) as session:
        session.turn("write then edit")
    assert [(r.policy_name, r.target) for r in prompt.requests] == [("Write", str(target)), ("Edit", str(target))]
    assert target.read_text() == "draft one\n"  # the write ran, the refused edit did not
    assert tool_result_of(api, 2).get("is_error") is True
