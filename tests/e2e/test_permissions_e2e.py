"""Permissions and the runtime sentinel end to end: our session -> the real SDK -> the real bundled
Claude Code CLI -> the scripted Messages API. The CLI runs the real tools; we assert on files the
tools did or did not touch, on what the prompt was asked, and on what reached the model.

The gate decides inside Mnemara's hooks, so one CLI process proves many answers and policies in
consecutive turns of one session (the pool hands a clean turn's process to the next turn, and a
policy change through ``session.update_config`` does not need a new process). Each step is a
function named after the behaviour it proves, so a failure points at one behaviour. Variants of
each decision: tests/guard/test_permissions.py (in process, no CLI)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from mnemara.core import events as ev
from mnemara.core.config import Config, update_config
from mnemara.core.debuglog import read_events
from mnemara.store.instance import Instance
from mnemara.guard.gate import PermissionGate, PermissionRequest
from mnemara.session.agent import AgentSession
from mnemara.testing.scripted_api import ScriptedAPI, reply, text, tool_use

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


def turn(api: ScriptedAPI, session: AgentSession, message: str, *replies, prompt: Answers | None = None) -> ev.TurnResult:
    """One turn of a shared session with ``prompt`` answering its questions (None: no one to ask).
    The API forgets earlier turns first, so request indexes count from this turn's first request."""
    session.set_permission_prompt(prompt)
    api.clear()
    api.push(*replies)
    return session.turn(message)


def bash(command: str) -> tuple:
    """The replies of a turn that runs one Bash command, then says done."""
    return reply(tool_use("Bash", {"command": command})), reply(text("done"))


def tool_result_of(api: ScriptedAPI, request_index: int) -> dict:
    """The newest tool_result the model received in that request."""
    return api.message_requests()[request_index].tool_results()[-1]


def result_text(result: dict) -> str:
    content = result.get("content")
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return str(content)


def fresh_gate(inst: Instance) -> PermissionGate:
    """The gate a new session builds from config.json and permissions.json on disk: what it
    decides is what the next session's CLI would be told (no CLI needed to read two files)."""
    return PermissionGate(Config.load(inst.config_path), inst)


def _notes(inst: Instance) -> str:
    return "".join(p.read_text() for p in sorted(inst.memory_dir.glob("*.md")))


# -- the prompt's answers, under the default policies (Bash/Write/Edit ask, Read/WriteMemory allow) --------

def _y_runs_even_plain_echo(api, session, home: Path) -> None:
    marker = home / "ran.txt"
    prompt = Answers("y")
    result = turn(api, session, "say hi", *bash(f"echo hi > {marker}"), prompt=prompt)
    assert result.ok, result.errors
    assert [r.policy_name for r in prompt.requests] == ["Bash"], "Bash=ask must prompt even for echo"
    assert prompt.requests[0].target == f"echo hi > {marker}", "the prompt shows the whole command"
    assert marker.read_text() == "hi\n", "'y' runs the command"
    assert not tool_result_of(api, 1).get("is_error")


def _plain_echo_hi_is_not_auto_approved(api, session) -> None:
    prompt = Answers("n")
    turn(api, session, "echo", *bash("echo hi"), prompt=prompt)
    assert len(prompt.requests) == 1, "the CLI's own 'safe command' shortcut skipped our prompt"
    result = tool_result_of(api, 1)
    assert result.get("is_error") is True and "hi" != result_text(result).strip(), "'n' must refuse echo hi"


def _n_denies_and_the_model_gets_an_error(api, session, home: Path) -> None:
    marker = home / "never.txt"
    result = turn(api, session, "touch it", *bash(f"touch {marker}"), prompt=Answers("n"))
    assert not marker.exists(), "'n' let the command run"
    tr = tool_result_of(api, 1)
    assert tr.get("is_error") is True and "denied" in result_text(tr).lower(), "the model is told it was denied"
    assert result.done.assistant_row_id is not None, "the turn itself completes cleanly after a denial"


def _no_prompt_means_deny(api, session, home: Path) -> None:
    marker = home / "never-unasked.txt"
    turn(api, session, "touch it unasked", *bash(f"touch {marker}"), prompt=None)
    assert not marker.exists(), "with no one to ask, an 'ask' call ran"
    assert tool_result_of(api, 1).get("is_error") is True


def _a_persists_the_exact_command(api, session, inst: Instance, home: Path) -> None:
    counter = home / "count.txt"
    command = f"echo x >> {counter}"
    turn(api, session, "once", *bash(command), prompt=Answers("a"))
    saved = json.loads(inst.permissions_path.read_text())["allowed_patterns"]["Bash"]
    assert len(saved) == 1, "'a' saves one exact-command pattern to permissions.json"
    later = Answers()
    turn(api, session, "again", *bash(command), prompt=later)
    assert later.requests == [] and counter.read_text() == "x\nx\n", "the identical call must run unasked"
    assert fresh_gate(inst).decide("Bash", {"command": command}).verdict == "allow", \
        "a new session must allow the saved command without asking"
    turn(api, session, "different", *bash(command + " && echo y"), prompt=later)
    assert len(later.requests) == 1 and counter.read_text() == "x\nx\n", "'a' covers that exact command only"


def _write_and_edit_ask_by_default(api, session, home: Path) -> None:
    target = home / "plan.txt"
    prompt = Answers("y", "n")
    turn(api, session, "write then edit",
         reply(tool_use("Write", {"file_path": str(target), "content": "draft one\n"})),
         reply(tool_use("Edit", {"file_path": str(target), "old_string": "one", "new_string": "two"})),
         reply(text("done")), prompt=prompt)
    assert [(r.policy_name, r.target) for r in prompt.requests] == [("Write", str(target)), ("Edit", str(target))]
    assert target.read_text() == "draft one\n", "the allowed write ran, the refused edit did not"
    assert tool_result_of(api, 2).get("is_error") is True


def _write_memory_allowed_by_default(api, session, inst: Instance) -> None:
    prompt = Answers()
    turn(api, session, "remember",
         reply(tool_use("mcp__mnemara__write_memory", {"text": "remember the lease timeout"})), reply(text("ok")),
         prompt=prompt)
    assert prompt.requests == [], "WriteMemory is allow by default"
    assert "remember the lease timeout" in _notes(inst)


def _s_lasts_for_the_session_only(api, session, inst: Instance, home: Path) -> None:
    counter = home / "session-count.txt"
    persisted = json.loads(inst.permissions_path.read_text())
    prompt = Answers("s")
    turn(api, session, "one", *bash(f"echo 1 >> {counter}"), prompt=prompt)
    turn(api, session, "two", *bash(f"echo 2 >> {counter}"), prompt=prompt)  # a different command, next turn
    assert len(prompt.requests) == 1, "'s' allows Bash for the rest of the session"
    assert counter.read_text() == "1\n2\n"
    assert json.loads(inst.permissions_path.read_text()) == persisted, "'s' must not be saved"
    assert fresh_gate(inst).decide("Bash", {"command": f"echo 3 >> {counter}"}).verdict == "ask", \
        "a new session must ask again"


def test_prompt_answers_y_n_a_s_and_no_prompt_through_the_cli(api, inst, isolated_home):
    """y runs (even plain echo is asked), n and no prompt deny, a persists one exact command,
    Write/Edit ask and WriteMemory does not by default, s lasts for the session ('s' last: it
    allows Bash for the rest of the session)."""
    with open_session(inst, isolated_home) as session:
        _y_runs_even_plain_echo(api, session, isolated_home)
        _plain_echo_hi_is_not_auto_approved(api, session)
        _n_denies_and_the_model_gets_an_error(api, session, isolated_home)
        _no_prompt_means_deny(api, session, isolated_home)
        _a_persists_the_exact_command(api, session, inst, isolated_home)
        _write_and_edit_ask_by_default(api, session, isolated_home)
        _write_memory_allowed_by_default(api, session, inst)
        _s_lasts_for_the_session_only(api, session, inst, isolated_home)


# -- policies from config.json, and file_tool_home_only -------------------------------------------------

def _malformed_entries_are_reported_once_and_the_turn_still_runs(api, session, inst: Instance, home: Path) -> None:
    marker = home / "never.txt"
    prompt = Answers("n")
    result = turn(api, session, "touch it", *bash(f"touch {marker}"), prompt=prompt)
    notices = [e.message for e in result.events if isinstance(e, ev.Notice)]
    assert any("config.json" in n and "allowed_tools[0]" in n and "(unclosed" in n for n in notices), notices
    assert any("permissions.json" in n and "invalid JSON" in n for n in notices), notices
    assert len(prompt.requests) == 1 and not marker.exists(), "a truncated permissions.json must not allow all"
    assert result.done.assistant_row_id is not None and not result.errors
    again = turn(api, session, "again", *bash("true"), prompt=Answers("n"))
    assert not [e for e in again.events if isinstance(e, ev.Notice)], "reported once per session, not every turn"
    logged = [e["problem"] for e in read_events(inst.debug_log_path) if e.get("event") == "permission_config_problem"]
    assert len(logged) == 2, logged


def _deny_policy_never_prompts(api, session, home: Path) -> None:
    session.update_config(allowed_tools=[{"tool": "Bash", "mode": "deny", "allowed_patterns": []}])
    marker = home / "never-denied.txt"
    prompt = Answers("y")
    turn(api, session, "touch it", *bash(f"touch {marker}"), prompt=prompt)
    assert prompt.requests == [] and not marker.exists(), "Bash=deny asked or ran"
    tr = tool_result_of(api, 1)
    assert tr.get("is_error") is True and "denied" in result_text(tr).lower()


def _config_pattern_preseeds_allow(api, session, home: Path) -> None:
    session.update_config(allowed_tools=[{"tool": "Bash", "mode": "ask", "allowed_patterns": [r"^echo ok >> \S+$"]}])
    counter = home / "count.txt"
    prompt = Answers()
    turn(api, session, "go", *bash(f"echo ok >> {counter}"), prompt=prompt)
    assert prompt.requests == [] and counter.read_text() == "ok\n", "a matching config pattern must allow unasked"


def _write_memory_denied_by_spec_name(api, session, inst: Instance) -> None:
    session.update_config(allowed_tools=[{"tool": "WriteMemory", "mode": "deny", "allowed_patterns": []}])
    turn(api, session, "remember", reply(tool_use("mcp__mnemara__write_memory", {"text": "forbidden note"})),
         reply(text("ok")), prompt=Answers("y"))
    assert "forbidden note" not in _notes(inst), "WriteMemory=deny let the note through"
    tr = tool_result_of(api, 1)
    assert tr.get("is_error") is True and "WriteMemory" in result_text(tr)


def _write_memory_gated_by_model_facing_name(api, session, inst: Instance) -> None:
    session.update_config(allowed_tools=[{"tool": "mcp__mnemara__write_memory", "mode": "ask", "allowed_patterns": []}])
    prompt = Answers("n")
    turn(api, session, "remember", reply(tool_use("mcp__mnemara__write_memory", {"text": "asked note"})),
         reply(text("ok")), prompt=prompt)
    assert [r.policy_name for r in prompt.requests] == ["WriteMemory"], "a policy by model-facing name must ask"
    assert "asked note" not in _notes(inst)
    assert tool_result_of(api, 1).get("is_error") is True


def _read_refused(api, inst, session, prompt: Answers, path: str, resolved: str) -> None:
    turn(api, session, "read it", reply(tool_use("Read", {"file_path": path})), reply(text("done")), prompt=prompt)
    tr = tool_result_of(api, -1)
    assert tr.get("is_error") is True, path
    assert "outside $HOME" in result_text(tr), path
    assert "root:" not in result_text(tr), path
    logged = [e for e in read_events(inst.debug_log_path) if e.get("event") == "permission_home_only"]
    # the CLI may normalise the path before our hook sees it; what matters is where it resolves
    assert logged and logged[-1]["resolved"] == resolved, path


def _home_only_refuses_every_way_out_and_allows_inside(api, session, inst: Instance, home: Path, outside: Path) -> None:
    """'..', an absolute path, a symlink pointing out, a write outside: refused unasked; a read inside runs."""
    (outside / "secret.txt").write_text("root: top secret\n")
    (home / "innocent").symlink_to(outside / "secret.txt")
    target = outside / "dropped.txt"
    note = home / "note.txt"
    note.write_text("inside content\n")
    prompt = Answers("y", "y", "y", "y", "y", "y")  # would let anything through if asked
    _read_refused(api, inst, session, prompt, "../../../../../../etc/passwd", "/etc/passwd")
    _read_refused(api, inst, session, prompt, f"{home}/../../../../../../etc/passwd", "/etc/passwd")
    _read_refused(api, inst, session, prompt, "/etc/passwd", "/etc/passwd")
    _read_refused(api, inst, session, prompt, str(home / "innocent"), str((outside / "secret.txt").resolve()))
    turn(api, session, "write it", reply(tool_use("Write", {"file_path": str(target), "content": "x"})),
         reply(text("done")), prompt=prompt)
    assert not target.exists() and tool_result_of(api, -1).get("is_error") is True, "a write outside $HOME ran"
    assert prompt.requests == [], "a refusal outside $HOME must not ask"
    turn(api, session, "read inside", reply(tool_use("Read", {"file_path": str(note)})), reply(text("done")),
         prompt=prompt)
    inside = tool_result_of(api, -1)
    assert not inside.get("is_error") and "inside content" in result_text(inside), "a read inside $HOME was refused"


def test_config_policies_and_home_only_through_the_cli(api, inst, isolated_home, tmp_path_factory):
    """Malformed entries are reported once and allow nothing; then, changed live: a deny policy never
    prompts, a config pattern pre-approves, WriteMemory is governed by its spec name and by its
    model-facing name; file tools never leave $HOME, whatever the policy says."""
    update_config(inst.config_path, allowed_tools=[{"tool": "Bash", "mode": "ask", "allowed_patterns": ["(unclosed"]}])
    inst.permissions_path.write_text('{"allowed_patterns": {"Bash": [".*"]')  # truncated: must not allow all
    with open_session(inst, isolated_home) as session:
        _malformed_entries_are_reported_once_and_the_turn_still_runs(api, session, inst, isolated_home)
        _deny_policy_never_prompts(api, session, isolated_home)
        _config_pattern_preseeds_allow(api, session, isolated_home)
        _write_memory_denied_by_spec_name(api, session, inst)
        _write_memory_gated_by_model_facing_name(api, session, inst)
        _home_only_refuses_every_way_out_and_allows_inside(api, session, inst, isolated_home,
                                                           tmp_path_factory.mktemp("outside"))


# -- external MCP servers: allowed by namespace unless a more specific policy says otherwise ---------

STUB = Path(__file__).resolve().parents[1] / "mcp_stub_server.py"


def test_configured_mcp_server_is_allowed_a_specific_deny_holds_a_server_wide_ask_prompts_and_a_dead_one_is_named(
        api, inst, isolated_home, tmp_path):
    """A configured server's tools run unasked, a deny of one of them holds, a server-wide ask
    prompts (changed live: a policy needs no new CLI process), and a configured server that does
    not start is named to the user in a notice while the turn still runs."""
    import sys

    update_config(inst.config_path, mcp_servers=[{"name": "stub", "command": sys.executable, "args": [str(STUB)]},
                                                 {"name": "ghost", "command": str(tmp_path / "nope")}],
                  allowed_tools=[{"tool": "mcp__stub__shred", "mode": "deny", "allowed_patterns": []}])
    log = isolated_home / "stub.log"
    with open_session(inst, isolated_home) as session:
        prompt = Answers("y")
        result = turn(api, session, "stamp then shred", reply(tool_use("mcp__stub__stamp", {"path": str(log)})),
                      reply(tool_use("mcp__stub__shred", {"path": str(log)})), reply(text("done")), prompt=prompt)
        assert "mcp__stub__stamp" in api.message_requests()[0].tool_names()
        assert log.read_text() == "stamp\n" and prompt.requests == [], "a configured server's tool runs unasked"
        assert tool_result_of(api, 2).get("is_error") is True, "the specific deny of shred must hold"
        notices = [e.message for e in result.events if isinstance(e, ev.Notice)]
        assert any("'ghost' failed" in n and "config.json" in n for n in notices), notices
        assert not any("'mnemara'" in n or "'stub'" in n for n in notices), notices
        assert result.ok and result.text == "done", "a server that does not start must not stop the turn"
        session.update_config(allowed_tools=[{"tool": "mcp__stub", "mode": "ask", "allowed_patterns": []}])
        prompt = Answers("n")
        turn(api, session, "stamp", reply(tool_use("mcp__stub__stamp", {"path": str(log)})), reply(text("done")),
             prompt=prompt)
        assert [r.tool_name for r in prompt.requests] == ["mcp__stub__stamp"], "mcp__stub=ask must prompt"
        assert log.read_text() == "stamp\n", "the refused stamp ran"


# -- runtime sentinel ------------------------------------------------------------------------------

def _polls(command: str, polls: int) -> list:
    return [*(reply(text("Checking again."), tool_use("Bash", {"command": command})) for _ in range(polls)),
            reply(text("finished polling"))]


def test_sentinel_off_by_default_then_on_halts_the_third_identical_poll(api, inst, isolated_home):
    """One session with the sentinel role doc: the role doc reaches the model; with the sentinel off
    four identical polls run; switched on, the third is refused, the fourth never comes, and the
    halt is recorded, logged and seen by the model on the next turn."""
    from tests.conftest import ROOT

    assert Config.load(inst.config_path).runtime_sentinel is False
    update_config(inst.config_path, role_doc_path=str(ROOT / "examples" / "roles" / "sentinel.md"),
                  allowed_tools=[{"tool": "Bash", "mode": "ask", "allowed_patterns": [r"^echo poll >> "]}])
    free, watched = isolated_home / "free.txt", isolated_home / "polls.txt"
    with open_session(inst, isolated_home) as session:
        result = turn(api, session, "poll", *_polls(f"echo poll >> {free}", 4), prompt=Answers())
        system = api.message_requests()[0].system_text
        assert "### 2. Polling" in system and "SENTINEL HALT" in system, "the sentinel role doc did not reach the model"
        assert free.read_text() == "poll\n" * 4, "with the sentinel off every poll runs"
        assert not any(isinstance(e, ev.Halt) for e in result.events)

        session.update_config(runtime_sentinel=True)
        command = f"echo poll >> {watched}"
        result = turn(api, session, "wait for the build", *_polls(command, 5), prompt=Answers())
        assert watched.read_text() == "poll\npoll\n", "calls 1 and 2 run; 3 is refused; 4 never comes"
        halts = [e for e in result.events if isinstance(e, ev.Halt)]
        assert len(halts) == 1 and halts[0].source == "sentinel"
        notice = halts[0].reason
        assert notice.startswith("SENTINEL HALT") and "trigger: polling" in notice
        assert f"turn: {result.done.user_row_id}" in notice and command in notice
        assert not result.errors and result.done.assistant_row_id is not None
        row = session.store.get(result.done.assistant_row_id)
        assert row.blocks[-1] == {"type": "text", "text": notice}, "the halt notice is stored in the assistant turn"
        assert row.meta.get("halted") == "sentinel"
        logged = [e["event"] for e in read_events(inst.debug_log_path)]
        assert "sentinel_halt" in logged and "sentinel_halted_turn" in logged
        # the session stays usable and the model sees the halt in its context next turn
        # (the halted CLI may still send one request while it is shut down, so answer by default)
        api.default = reply(text("Understood, I will wait."))
        after = turn(api, session, "ok, stop polling", prompt=Answers())
        assert after.ok and "Understood" in after.text
        [next_turn] = [r for r in api.message_requests() if "ok, stop polling" in r.user_text()][:1]
        assert "SENTINEL HALT" in next_turn.user_text()
    assert watched.read_text() == "poll\npoll\n"
