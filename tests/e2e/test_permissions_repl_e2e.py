"""Scripted permission answers through `mnemara run` with a piped stdin (click's runner in this
process, the real CLI, the scripted Messages API): the answer is the next input line, end of input
denies, `a` survives the process and `s` does not."""
from __future__ import annotations

import json

import pytest

from mnemara.store.instance import Instance
from mnemara.testing.scripted_api import reply, tool_use
from tests.conftest import run_cli

pytestmark = pytest.mark.e2e


def run(script: str) -> tuple[str, str]:
    proc = run_cli("run", "--instance", "perm", "--no-tui", input=script, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout, proc.stderr


def bash(api, command: str, then: str = "done") -> None:
    api.push(reply(tool_use("Bash", {"command": command})), reply(then))


def test_answers_come_from_the_next_line_a_survives_the_process_s_and_the_sentinel_do_not(
        scripted_api, mnemara_home, isolated_home):
    """Two `mnemara run` processes on one instance (the sentinel on). The first answers `a`, an
    unrecognised line, then `s`, and polls until the sentinel halts; the second sees that `a`
    survived the process, that `s` did not, and that end of input at the question denies."""
    inst = Instance.create("perm")
    cfg = json.loads(inst.config_path.read_text())
    cfg["runtime_sentinel"] = True
    inst.config_path.write_text(json.dumps(cfg))
    counter, session_counter = isolated_home / "count.txt", isolated_home / "session.txt"
    marker, polls = isolated_home / "never.txt", isolated_home / "polls.txt"
    command, poll = f"echo x >> {counter}", f"echo poll >> {polls}"
    bash(scripted_api, command)
    bash(scripted_api, f"touch {marker}")
    bash(scripted_api, f"echo 1 >> {session_counter}")
    bash(scripted_api, f"echo 2 >> {session_counter}")
    for _ in range(4):
        scripted_api.push(reply(tool_use("Bash", {"command": poll})))
    scripted_api.push(reply("finished"))
    out, err = run("count\na\ntouch it\nsure, go ahead\none\ns\ntwo\npoll it\n")
    assert err.count("permission: allow Bash") == 3, err  # count, touch it, one; `s` covers two and the polls
    assert json.loads(inst.permissions_path.read_text())["allowed_patterns"]["Bash"], "`a` saved nothing"
    # an unrecognised answer denies and is not sent as a message
    assert not marker.exists(), "an unrecognised answer let the command run"
    assert not any("sure, go ahead" in r.user_text() for r in scripted_api.message_requests())
    assert session_counter.read_text() == "1\n2\n", "`s` must cover the next Bash call unasked"
    # the sentinel still stops the loop that `s` allowed, and the REPL shows the halt
    assert polls.read_text() == "poll\npoll\n"
    assert "SENTINEL HALT" in out and "trigger: polling" in out and poll in out
    scripted_api.clear()  # a reply the halted CLI left unasked must not answer the next process
    bash(scripted_api, command)
    bash(scripted_api, f"echo 3 >> {session_counter}", then="could not")
    _out, err = run("count again\nthree\n")
    assert err.count("permission: allow Bash") == 1 and "end of input: denied" in err, err
    assert counter.read_text() == "x\nx\n", "`a` did not survive the process"
    assert session_counter.read_text() == "1\n2\n", "`s` outlived its process or end of input allowed"
    [result] = scripted_api.message_requests()[-1].new_tool_results()
    assert result.get("is_error") is True


def test_run_reports_bad_permission_entries_at_start(mnemara_home):
    inst = Instance.create("perm")
    inst.permissions_path.write_text(json.dumps({"allowed_patterns": {"Bash": ["[unclosed"]}}))
    cfg = json.loads(inst.config_path.read_text())
    cfg["allowed_tools"][0]["allowed_patterns"] = ["(bad"]
    inst.config_path.write_text(json.dumps(cfg))
    _out, err = run("/quit\n")  # nothing is sent to any model
    lines = [line for line in err.splitlines() if line.startswith("warning:")]
    assert any("config.json" in line and "allowed_tools[0]" in line and "'(bad'" in line for line in lines)
    assert any("permissions.json" in line and "['Bash'][0]" in line and "'[unclosed'" in line for line in lines)
    assert json.loads(inst.permissions_path.read_text()) == {"allowed_patterns": {"Bash": ["[unclosed"]}}
