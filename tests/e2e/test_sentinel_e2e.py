"""The generalised runtime sentinel end to end: our session -> the real SDK -> the real bundled
Claude Code CLI (which runs the real tools) -> the scripted Messages API. Each test is one
behaviour of issue 36: a polling loop whose arguments change is halted; a repeated call whose
output changes is not; an Edit the CLI rejects before any hook still counts.
Unit variants: tests/guard/test_sentinel.py; measured on traces: bench/bench_runaway.py."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from mnemara.core import events as ev
from mnemara.core.debuglog import read_events
from mnemara.testing.scripted_api import ScriptedAPI, reply, text, tool_use

pytestmark = pytest.mark.e2e

ALLOW_TOOLS = [{"tool": "Bash", "mode": "allow", "allowed_patterns": []},
               {"tool": "Edit", "mode": "allow", "allowed_patterns": []}]


@pytest.fixture
def session(session_factory, scripted_api: ScriptedAPI, isolated_home: Path):
    made = session_factory("sentinel", cwd=isolated_home, warm_spare=False)
    made.update_config(runtime_sentinel=True, allowed_tools=ALLOW_TOOLS)
    scripted_api.default = reply(text("Understood."))  # anything the CLI asks after a halt
    return made


def run_turn(api: ScriptedAPI, session, message: str, *replies) -> ev.TurnResult:
    api.clear()
    api.push(*replies)
    return session.turn(message)


def halts(result: ev.TurnResult) -> list[ev.Halt]:
    return [e for e in result.events if isinstance(e, ev.Halt)]


def test_a_polling_loop_whose_arguments_change_only_by_a_counter_is_halted(session, scripted_api, isolated_home):
    status, ran = isolated_home / "status.txt", isolated_home / "polls.txt"
    status.write_text("deploy: pending\n")
    commands = [f"sleep 0.1; echo check {n} >> {ran}; cat {status}" for n in range(1, 7)]
    result = run_turn(scripted_api, session, "wait for the deploy",
                      *(reply(text("Checking."), tool_use("Bash", {"command": c, "description": f"poll {n}"}))
                        for n, c in enumerate(commands, 1)), reply(text("deployed")))
    assert ran.read_text() == "check 1\ncheck 2\n", "calls 1 and 2 run; the third is refused"
    [halt] = halts(result)
    notice = halt.reason
    assert notice.startswith("SENTINEL HALT\ntrigger: polling\n"), notice
    assert f"turn: {result.done.user_row_id}" in notice
    assert commands[0] in notice and commands[2] in notice and "(refused by the sentinel)" in notice
    assert "varied only in what does not change its meaning" in notice and "proposed next step: " in notice
    row = session.store.get(result.done.assistant_row_id)
    assert row.blocks[-1] == {"type": "text", "text": notice} and row.meta.get("halted") == "sentinel"


def test_a_repeated_call_whose_output_changes_is_not_halted(session, scripted_api, isolated_home):
    """The same command four times (a batch job: each run migrates the next batch), then
    test -> fix -> test -> fix -> test: every call runs and the turns end with the model's answer."""
    script = isolated_home / "migrate.py"
    script.write_text("import json, pathlib, sys\n"
                      f"state = pathlib.Path({str(isolated_home / 'state.json')!r})\n"
                      "done = json.loads(state.read_text())['done'] if state.exists() else 0\n"
                      "end = done + int(sys.argv[-1])\n"
                      "state.write_text(json.dumps({'done': end}))\n"
                      "print(f'migrated rows {done + 1}-{end}; {400 - end} remaining')\n")
    batch = f"{sys.executable} {script} --batch 100"
    result = run_turn(scripted_api, session, "migrate all rows in batches",
                      *(reply(tool_use("Bash", {"command": batch})) for _ in range(4)), reply(text("all migrated")))
    assert not halts(result) and result.ok and result.text == "all migrated"
    assert (isolated_home / "state.json").read_text() == '{"done": 400}', "every run ran"

    calc = isolated_home / "calc.py"
    calc.write_text("def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a + b\n")
    (isolated_home / "test_calc.py").write_text(
        "import unittest\nfrom calc import add, mul\n\n\nclass T(unittest.TestCase):\n"
        "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\n"
        "    def test_mul(self):\n        self.assertEqual(mul(2, 3), 6)\n")
    test = f"cd {isolated_home} && {sys.executable} -m unittest -q test_calc 2>&1 | tail -1"
    result = run_turn(scripted_api, session, "fix calc.py",
                      reply(tool_use("Bash", {"command": test})),
                      reply(tool_use("Read", {"file_path": str(calc)})),
                      reply(tool_use("Edit", {"file_path": str(calc), "old_string": "return a - b",
                                              "new_string": "return a + b"})),
                      reply(tool_use("Bash", {"command": test})),
                      reply(tool_use("Edit", {"file_path": str(calc), "old_string": "def mul(a, b):\n    return a + b",
                                              "new_string": "def mul(a, b):\n    return a * b"})),
                      reply(tool_use("Bash", {"command": test})), reply(text("fixed")))
    assert not halts(result) and result.ok and result.text == "fixed"
    results = [e for e in result.events if isinstance(e, ev.ToolResult)]
    assert [r.is_error for r in results] == [False] * 6 and "return a * b" in calc.read_text()
    assert [r.text.strip()[:6] for r in results[::3]] == ["FAILED", "FAILED"] and results[-1].text.strip() == "OK"


def test_a_stale_edit_the_cli_rejects_before_any_hook_still_counts(session, scripted_api, isolated_home):
    target = isolated_home / "settings.py"
    target.write_text("DEBUG = False\n")
    stale = {"file_path": str(target), "old_string": "DEBUG = True", "new_string": "DEBUG = False"}
    result = run_turn(scripted_api, session, "turn debug off",
                      reply(tool_use("Read", {"file_path": str(target)})),
                      *(reply(text("Editing."), tool_use("Edit", dict(stale))) for _ in range(5)),
                      reply(text("done")))
    [halt] = halts(result)
    notice = halt.reason
    assert "trigger: same_error" in notice, notice
    assert notice.count("(rejected by the CLI)") == 3, notice
    assert f"Read {target} again" in notice
    assert target.read_text() == "DEBUG = False\n"
    results = [e for e in result.events if isinstance(e, ev.ToolResult)]
    assert [r.is_error for r in results] == [False, True, True, True], "the turn ends on the third rejection"
    assert all("String to replace not found" in r.text for r in results[1:])
    assert len(scripted_api.message_requests()) == 4, "the request carrying the third rejection never reached the API"
    hooked = [e.get("tool") for e in read_events(session.instance.debug_log_path) if e["event"] == "tool_call"]
    assert hooked == ["Read"], "the CLI rejected every Edit before any hook: only the stream saw them"


def test_three_turns_with_no_file_changed_and_the_same_outputs_are_halted_as_no_progress(session, scripted_api,
                                                                                         isolated_home):
    status, out = isolated_home / "status.txt", isolated_home / "out"
    status.write_text("build 1432: queued\n")
    out.mkdir()
    check = (reply(tool_use("Bash", {"command": f"cat {status}"})), reply(tool_use("Bash", {"command": f"ls {out}"})),
             reply(text("Still queued.")))
    for n in (1, 2):
        result = run_turn(scripted_api, session, f"is the build done? ({n})", *check)
        assert not halts(result) and result.text == "Still queued."
    result = run_turn(scripted_api, session, "is the build done? (3)", *check)
    [halt] = halts(result)
    assert halt.reason.startswith("SENTINEL HALT\ntrigger: no_progress\n"), halt.reason
    assert "3 turns in a row changed no file" in halt.reason and f"cat {status}" in halt.reason
    assert result.text != "Still queued.", "the turn ended at the halt, not with the model's answer"
    status.write_text("build 1432: done\n")  # something changed: the next turns run
    result = run_turn(scripted_api, session, "and now?", *check)
    assert not halts(result)
