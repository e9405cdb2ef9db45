"""Scripted permission answers through `mnemara run` with a piped stdin (a real subprocess, the real
CLI, the scripted Messages API): the answer is the next input line, end of input denies, `a` survives
the process and `s` does not."""
from __future__ import annotations

import json

import pytest

from mnemara.instance import Instance
from mnemara.testing import reply, tool_use
from tests.conftest import run_cli

pytestmark = pytest.mark.e2e


def run(script: str) -> tuple[str, str]:
    proc = run_cli("run", "--instance", "perm", "--no-tui", input=script, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout, proc.stderr


def bash(api, command: str, then: str = "done") -> None:
    api.push(reply(tool_use("Bash", {"command": command})), reply(then))


def test_end_of_input_at_the_question_denies(scripted_api, mnemara_home, isolated_home):
    Instance.create("perm")
    marker = isolated_home / "never.txt"
    bash(scripted_api, f"touch {marker}", then="could not")
    _out, err = run("touch it\n")
    assert "permission: allow Bash" in err and "end of input: denied" in err
    assert not marker.exists()
    [result] = [r for req in scripted_api.message_requests() for r in req.tool_results()]
    assert result.get("is_error") is True


def test_always_answer_survives_the_process(scripted_api, mnemara_home, isolated_home):
    inst = Instance.create("perm")
    counter = isolated_home / "count.txt"
    command = f"echo x >> {counter}"
    bash(scripted_api, command)
    _out, err = run("count\na\n")
    assert err.count("permission: allow Bash") == 1
    assert json.loads(inst.permissions_path.read_text())["allowed_patterns"]["Bash"]
    bash(scripted_api, command)
    _out, err = run("count again\n")  # no answer line given: it would be denied if asked
    assert "permission:" not in err
    assert counter.read_text() == "x\nx\n"


def test_session_answer_ends_with_the_process(scripted_api, mnemara_home, isolated_home):
    inst = Instance.create("perm")
    counter = isolated_home / "count.txt"
    bash(scripted_api, f"echo 1 >> {counter}")
    bash(scripted_api, f"echo 2 >> {counter}")
    _out, err = run("one\ns\ntwo\n")
    assert err.count("permission: allow Bash") == 1
    assert counter.read_text() == "1\n2\n"
    assert json.loads(inst.permissions_path.read_text())["allowed_patterns"] == {}
    bash(scripted_api, f"echo 3 >> {counter}")
    _out, err = run("three\n")
    assert "permission: allow Bash" in err and "end of input: denied" in err
    assert counter.read_text() == "1\n2\n"


def test_unrecognised_answer_denies_and_is_not_sent_as_a_message(scripted_api, mnemara_home, isolated_home):
    Instance.create("perm")
    marker = isolated_home / "never.txt"
    bash(scripted_api, f"touch {marker}")
    _out, err = run("touch it\nsure, go ahead\n")
    assert not marker.exists()
    assert not any("sure, go ahead" in r.user_text() for r in scripted_api.message_requests())


def test_run_reports_bad_permission_entries_at_start(mnemara_home):
    inst = Instance.create("perm")
    inst.permissions_path.write_text(json.dumps({"allowed_patterns": {"Bash": ["[unclosed"]}}))
    cfg = json.loads(inst.config_path.read_text())
    cfg["allowed_tools"][0]["allowed_patterns"] = ["(bad"]
    inst.config_path.write_text(json.dumps(cfg))
    _out, err = run("/quit\n")  # nothing is sent to any model
    lines = [l for l in err.splitlines() if l.startswith("warning:")]
    assert any("config.json" in l and "allowed_tools[0]" in l and "'(bad'" in l for l in lines)
    assert any("permissions.json" in l and "['Bash'][0]" in l and "'[unclosed'" in l for l in lines)
    assert json.loads(inst.permissions_path.read_text()) == {"allowed_patterns": {"Bash": ["[unclosed"]}}


def test_repl_shows_the_sentinel_halt(scripted_api, mnemara_home, isolated_home):
    inst = Instance.create("perm")
    cfg = json.loads(inst.config_path.read_text())
    cfg["runtime_sentinel"] = True
    inst.config_path.write_text(json.dumps(cfg))
    counter = isolated_home / "polls.txt"
    command = f"echo poll >> {counter}"
    for _ in range(4):
        scripted_api.push(reply(tool_use("Bash", {"command": command})))
    scripted_api.push(reply("finished"))
    out, err = run("poll it\ns\n")  # one 's' covers Bash; the sentinel still stops the loop
    assert counter.read_text() == "poll\npoll\n"
    assert "SENTINEL HALT" in out and "trigger: polling" in out and command in out
    assert err.count("permission: allow Bash") == 1
