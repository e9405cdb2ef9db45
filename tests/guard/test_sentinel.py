"""Unit tests of the runtime sentinel's pure logic: each trigger, what is progress, the notice."""
from __future__ import annotations

import pytest

from mnemara.guard.sentinel import RuntimeSentinel, SentinelHalt, SentinelSettings, SentinelWatch


class Turns:
    """Feeds calls the way a turn does: the hook's check, then the stream's tool_use and result."""

    def __init__(self, **settings: int) -> None:
        self.watch = SentinelWatch(SentinelSettings(**settings))
        self.watch.begin_turn()
        self.n = 0

    def call(self, tool: str, tool_input: dict, output: str = "", is_error: bool = False,
             rejected: bool = False) -> SentinelHalt | None:
        """One call; the halt it caused (refused before running, or after its result)."""
        self.n += 1
        use_id = f"toolu_{self.n}"
        self.watch.saw_tool_use(use_id, tool, tool_input)
        if not rejected and self.watch.check(tool, tool_input, use_id) is not None:
            return self.watch.halt
        self.watch.saw_result(use_id, output, is_error)
        return self.watch.halt if self.watch.stop_after_tool_result(use_id) else None

    def bash(self, command: str, output: str = "", is_error: bool = False) -> SentinelHalt | None:
        return self.call("Bash", {"command": command}, output, is_error)

    def next_turn(self) -> None:
        self.watch.begin_turn()


def first_halt(feed: Turns, calls: list) -> tuple[int, SentinelHalt] | None:
    for i, args in enumerate(calls):
        halt = feed.call(*args)
        if halt is not None:
            return i, halt
    return None


# -- polling -------------------------------------------------------------------------------------

def test_the_third_identical_call_with_the_same_output_is_refused():
    t = Turns()
    assert t.bash("npm run build", "building...") is None
    assert t.bash("npm run build", "building...") is None
    halt = t.bash("npm run build")
    assert halt is not None and (halt.trigger, halt.tool_name, halt.count) == ("polling", "Bash", 3)
    assert halt.calls[-1].note == "refused by the sentinel"


def test_polling_whose_arguments_change_only_by_a_counter_is_halted():
    t = Turns()
    halts = [t.bash(f"curl -s 'http://127.0.0.1:8765/health?t={i}'", '{"status":"starting"}') for i in range(1, 6)]
    assert halts[:2] == [None, None] and halts[2] is not None and halts[2].trigger == "polling"
    assert "varied only in what does not change its meaning" in halts[2].context


def test_varied_calls_whose_outputs_are_not_known_yet_are_not_repeats():
    """Parallel calls in one message reach the hook before any result: three pages of one file
    are not a loop; three exact copies still are."""
    w = SentinelWatch()
    w.begin_turn()
    assert all(w.check("Read", {"file_path": "/big.py", "offset": o, "limit": 100}, f"p{o}") is None
               for o in (1, 101, 201, 301))
    assert w.check("Bash", {"command": "make"}, "m1") is None and w.check("Bash", {"command": "make"}, "m2") is None
    assert w.check("Bash", {"command": "make"}, "m3") is not None


def test_a_repeat_whose_output_changed_is_progress():
    t = Turns()
    for done in range(1, 7):  # a batch job: same call, each run migrates the next batch
        assert t.bash("python3 migrate.py --batch 100", f"migrated {done * 100} of 600") is None


def test_test_fix_test_is_not_halted_and_a_file_edit_breaks_a_run():
    t = Turns()
    assert t.bash("pytest -q", "1 failed, 2 passed", True) is None
    assert t.call("Edit", {"file_path": "/a.py", "old_string": "-", "new_string": "+"}, "The file /a.py has been updated.") is None
    assert t.bash("pytest -q", "1 failed, 2 passed", True) is None  # same output, but a file changed between
    assert t.call("Edit", {"file_path": "/a.py", "old_string": "*", "new_string": "/"}, "The file /a.py has been updated.") is None
    assert t.bash("pytest -q", "3 passed") is None


def test_rereading_a_file_after_each_edit_is_not_halted():
    t = Turns()
    for i in range(4):
        assert t.call("Read", {"file_path": "/c.ini"}, f"     1\u2192port = {8000 + i}") is None
        assert t.call("Edit", {"file_path": "/c.ini", "old_string": f"{8000 + i}", "new_string": f"{8001 + i}"},
                      "The file /c.ini has been updated.") is None


def test_paging_a_big_file_is_not_halted():
    t = Turns()
    for page in range(8):
        lines = "\n".join(f"{page * 100 + n:>6}\u2192def handler_{page * 100 + n}(): pass" for n in range(1, 4))
        assert t.call("Read", {"file_path": "/big.py", "offset": page * 100 + 1, "limit": 100}, lines) is None


def test_a_repeat_spread_across_other_calls_is_halted_within_the_window():
    t = Turns()
    calls = []
    for i in range(4):
        calls += [("Bash", {"command": "cat status.txt"}, "waiting for lock"),
                  ("Bash", {"command": f"ls dir{i}"}, f"file{i}"), ("Read", {"file_path": f"/n{i}"}, f"note {i}x")]
    at, halt = first_halt(t, calls)
    assert at == 6 and halt.trigger == "polling" and [c.number for c in halt.calls] == [1, 4, 7]
    wide = Turns(window=3, repeats=3)  # a narrow window does not see them
    assert first_halt(wide, calls) is None


def test_repeats_is_configurable():
    t = Turns(repeats=5)
    halts = [t.bash("make -s status", "waiting") for _ in range(6)]
    assert halts.index(next(h for h in halts if h)) == 4


# -- same error ----------------------------------------------------------------------------------

def test_the_same_failing_command_retried_with_variations_is_halted_on_the_third_error():
    t = Turns()
    err = "Exit code 1\nTraceback (most recent call last):\nModuleNotFoundError: No module named 'yamlx'"
    assert t.bash("python3 run.py", err, True) is None
    assert t.bash("cd . && python3 run.py", err, True) is None
    halt = t.bash("PYTHONPATH=. python3 -u run.py", err, True)
    assert halt is not None and halt.trigger == "same_error" and halt.count == 3
    assert "fix what the error names" in halt.next_step


def test_different_errors_and_bare_exit_codes_are_not_the_same_error():
    t = Turns()
    assert all(t.bash(f"grep -n sym{i} src", "Exit code 1", True) is None for i in range(5))
    t = Turns()
    assert all(t.bash(f"python3 t{i}.py", f"Exit code 1\nAssertionError: case {i}x failed", True) is None
               for i in range(5))


def test_error_repeats_zero_turns_the_rule_off():
    t = Turns(error_repeats=0)
    err = "Exit code 128\nfatal: not a git repository"
    assert all(t.bash(cmd, err, True) is None for cmd in ("git checkout x", "git switch x", "git checkout -b x y"))


# -- a stale Edit the CLI rejects before any hook ----------------------------------------------------

def test_a_stale_edit_the_cli_rejects_still_counts():
    t = Turns()
    edit = {"file_path": "/calc.py", "old_string": "return a - b", "new_string": "return a + b"}
    stale = "<tool_use_error>String to replace not found in file.\nString: return a - b</tool_use_error>"
    assert t.call("Edit", edit, "The file /calc.py has been updated.") is None
    assert t.call("Edit", edit, stale, True, rejected=True) is None
    assert t.call("Edit", edit, stale, True, rejected=True) is None
    halt = t.call("Edit", edit, stale, True, rejected=True)
    assert halt is not None and halt.trigger == "same_error"
    assert all(c.note == "rejected by the CLI" for c in halt.calls) and len(halt.calls) == 3
    assert "Read /calc.py again" in halt.next_step
    assert t.watch.stop_after_tool_result(f"toolu_{t.n}")


def test_a_result_for_a_call_nobody_announced_is_ignored():
    w = SentinelWatch()
    w.begin_turn()
    w.saw_result("toolu_unknown", "x", True)
    assert w.halt is None and len(w.sentinel) == 0


# -- cycles ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("period", [2, 3, 5, 6, 8])
def test_a_cycle_is_halted_as_its_third_round_starts(period):
    t = Turns()
    calls = [("Bash", {"command": f"cat svc/{chr(97 + i)}.status"}, f"{chr(97 + i)}: waiting")
             for _ in range(4) for i in range(period)]
    at, halt = first_halt(t, calls)
    assert at <= 2 * period, (at, halt)  # by the first call of round three
    assert halt.trigger in {"polling", "cycle"}


def test_a_long_cycle_names_its_period_and_is_configurable():
    calls = [("Bash", {"command": f"check{chr(97 + i)}"}, f"{chr(97 + i)} pending") for _ in range(3) for i in range(7)]
    at, halt = first_halt(Turns(), calls)
    assert (at, halt.trigger, halt.period) == (14, "cycle", 7)
    assert "a sequence of 7 calls was made 2 times" in halt.context
    assert first_halt(Turns(cycle_max_period=0), calls) is None
    assert first_halt(Turns(cycle_max_period=6), calls) is None


def test_a_cycle_whose_outputs_change_is_not_halted():
    calls = [("Bash", {"command": f"check{chr(97 + i)}"}, f"{chr(97 + i)} at {r}0% done")
             for r in range(4) for i in range(7)]
    assert first_halt(Turns(), calls) is None


# -- the ceiling ---------------------------------------------------------------------------------

def test_the_per_turn_ceiling_refuses_the_call_past_it_and_resets_each_turn():
    t = Turns(max_calls_per_turn=10)
    assert all(t.call("Read", {"file_path": f"/f{i}.txt"}, f"body {i}x") is None for i in range(10))
    halt = t.call("Read", {"file_path": "/f10.txt"})
    assert halt is not None and halt.trigger == "call_ceiling" and "more than the ceiling of 10" in halt.context
    t.next_turn()
    assert t.call("Read", {"file_path": "/g.txt"}, "g") is None
    assert all(Turns(max_calls_per_turn=0).call("Read", {"file_path": f"/f{i}"}, f"{i}x") is None for i in range(300))


def test_the_default_ceiling_is_generous():
    t = Turns()
    assert all(t.call("Read", {"file_path": f"/src/m{i}.py"}, f"X = {i}") is None for i in range(200))
    assert t.call("Read", {"file_path": "/src/last.py"}).trigger == "call_ceiling"


# -- no progress across turns ----------------------------------------------------------------------

def _same_turn(t: Turns) -> SentinelHalt | None:
    return t.bash("cat status.txt", "build 1432: queued") or t.bash("ls out", "")


def test_three_turns_with_the_same_outputs_and_no_file_changed_halt():
    t = Turns()
    assert _same_turn(t) is None
    t.next_turn()
    assert _same_turn(t) is None
    t.next_turn()
    assert t.bash("cat status.txt", "build 1432: queued") is None
    halt = t.bash("ls out", "")
    assert halt is not None and halt.trigger == "no_progress" and halt.count == 3
    assert [c.number for c in halt.calls] == [1, 2]
    t.next_turn()  # after a halt the count starts again
    assert _same_turn(t) is None


def test_a_file_changed_in_a_turn_is_progress_across_turns():
    t = Turns()
    for turn in range(5):
        assert t.call("Edit", {"file_path": "/notes.md", "old_string": f"v{turn}", "new_string": f"v{turn + 1}"},
                      "The file /notes.md has been updated.") is None
        assert t.bash("cat status.txt", "ok") is None
        t.next_turn()


def test_no_progress_turns_is_configurable():
    t = Turns(no_progress_turns=0)
    for _ in range(6):
        assert _same_turn(t) is None
        t.next_turn()
    t = Turns(no_progress_turns=2)
    assert _same_turn(t) is None
    t.next_turn()
    assert _same_turn(t) is not None


# -- the watch and the notice ----------------------------------------------------------------------

def test_the_watch_refuses_everything_after_a_halt_until_the_next_turn():
    w = SentinelWatch()
    w.begin_turn()
    poll = {"command": "status"}
    assert w.check("Bash", poll, "t1") is None
    assert w.check("Bash", poll, "t2") is None
    reason = w.check("Bash", poll, "t3")
    assert reason and "SENTINEL HALT" in reason and w.halted_tool_use_id == "t3"
    assert w.check("Read", {"file_path": "/x"}, "t4")  # anything after the halt is refused
    assert not w.stop_after_tool_result("t2") and w.stop_after_tool_result("t3")
    w.begin_turn()
    assert w.halt is None and w.check("Read", {"file_path": "/x"}, "t5") is None


def test_a_hook_result_stands_in_until_the_streams_result_arrives():
    w = SentinelWatch()
    w.begin_turn()
    for i in (1, 2):
        assert w.check("Bash", {"command": "date"}, f"t{i}") is None
        w.saw_hook_result(f"t{i}", {"stdout": f"Tue 21:0{i}:00 step {i}", "stderr": "", "interrupted": False})
    assert w.check("Bash", {"command": "date"}, "t3") is None  # the outputs differed: progress


def test_the_notice_has_the_specs_shape_and_shows_targets_whole():
    t = Turns()
    long_command = "curl -s 'http://127.0.0.1:8765/health?t=1' " + "-H 'X-Trace: abc' " * 30
    t.bash(long_command, '{"status":"starting"}')
    t.bash(long_command.replace("t=1", "t=2"), '{"status":"starting"}')
    halt = t.bash(long_command.replace("t=1", "t=3"))
    text = halt.notice(4)
    lines = text.splitlines()
    assert lines[:3] == ["SENTINEL HALT", "trigger: polling", "turn: 4"]
    assert lines[3].startswith("context: ") and lines[4] == "calls:"
    assert lines[-1].startswith("proposed next step: ")
    assert long_command.replace("t=1", "t=3").replace("'", "'") in text.replace('\\"', '"')  # whole, not cut
    assert '-> "{\\"status\\":\\"starting\\"}"' in text and "(refused by the sentinel)" in text


def test_long_non_target_values_are_cut_with_what_was_left_out():
    t = Turns()
    body = "x" * 1000
    for _ in range(2):
        t.call("Write", {"file_path": "/a.txt", "content": body}, "Error writing file", True)
    halt = t.call("Write", {"file_path": "/a.txt", "content": body}, "Error writing file", True)
    assert halt is not None
    assert "(800 more characters)" in halt.notice(1) and body not in halt.notice(1)


def test_bad_settings_are_refused():
    for bad in ({"window": 2, "repeats": 3}, {"repeats": 1}, {"cycle_max_period": 1}, {"cycle_repeats": 1},
                {"error_repeats": 1}, {"no_progress_turns": 1}, {"max_calls_per_turn": -1}, {"error_repeats": -2}):
        with pytest.raises(ValueError):
            SentinelSettings(**bad)


def test_config_fields_validate_and_name_the_field():
    from mnemara.core.config import Config
    from mnemara.core.errors import ConfigError

    for raw, field in (({"sentinel_cycle_max_period": 1}, "sentinel_cycle_max_period"),
                       ({"sentinel_repeats": 13}, "sentinel_repeats"),
                       ({"sentinel_window": 4, "sentinel_repeats": 5}, "sentinel_repeats"),
                       ({"sentinel_window": 1}, "sentinel_window"),
                       ({"sentinel_error_repeats": 1}, "sentinel_error_repeats"),
                       ({"sentinel_no_progress_turns": 1}, "sentinel_no_progress_turns"),
                       ({"sentinel_max_calls_per_turn": -5}, "sentinel_max_calls_per_turn"),
                       ({"sentinel_max_calls_per_turn": "lots"}, "sentinel_max_calls_per_turn")):
        with pytest.raises(ConfigError, match=field):
            Config.from_dict(raw)
    cfg = Config.from_dict({"sentinel_cycle_max_period": 0, "sentinel_error_repeats": 0,
                            "sentinel_no_progress_turns": 0, "sentinel_max_calls_per_turn": 0})
    off = SentinelSettings.from_config(cfg)
    assert (off.cycle_max_period, off.error_repeats, off.no_progress_turns, off.max_calls_per_turn) == (0, 0, 0, 0)
    assert SentinelSettings.from_config(Config()) == SentinelSettings()


def test_the_sentinel_has_no_memory_of_a_halted_turn():
    s = RuntimeSentinel()
    for _ in range(3):
        halt = s.observe("Bash", {"command": "x"})
    assert halt is not None
    s.begin_turn()
    assert len(s) == 0 and s.observe("Bash", {"command": "x"}) is None


def test_an_empty_result_is_the_same_from_the_hook_and_from_the_stream():
    """The CLI turns an empty result into "(Bash completed with no output)" in the stream and the request;
    the PostToolUse hook reports stdout "". A poll whose results came one each way was judged as new
    output every time (seen under load, when the hook and the stream raced) and ran on."""
    s = RuntimeSentinel()
    poll = {"command": "echo poll >> /tmp/polls.txt"}
    assert s.observe("Bash", poll, "t1") is None
    s.observe_hook_result("t1", {"stdout": "", "stderr": "", "interrupted": False})
    assert s.observe("Bash", poll, "t2") is None
    s.observe_result("t2", "(Bash completed with no output)", False)
    halt = s.observe("Bash", poll, "t3")
    assert halt is not None and halt.trigger == "polling"


def test_the_reminder_the_cli_adds_to_a_result_in_the_request_is_not_the_output():
    """On its way to the API the CLI may append a ``<system-reminder>`` to a tool result (seen: the tokens
    left); the stream and the hook carry the bare result. When the request was judged first, the first
    poll's output differed from the next two and the third identical poll ran (1 in 5 loaded runs)."""
    s = RuntimeSentinel()
    poll = {"command": "echo poll >> /tmp/polls.txt"}
    assert s.observe("Bash", poll, "t1") is None
    s.observe_result("t1", "(Bash completed with no output)\n\n<system-reminder>\n<total_tokens>14990557 tokens "
                           "left</total_tokens>\n</system-reminder>", False)
    assert s.observe("Bash", poll, "t2") is None
    s.observe_hook_result("t2", {"stdout": "", "stderr": ""})
    halt = s.observe("Bash", poll, "t3")
    assert halt is not None and halt.trigger == "polling"
    # what the tool printed still counts: a reminder does not make two different outputs the same
    s = RuntimeSentinel()
    for n, out in enumerate(["ready: 1 of 3", "ready: 2 of 3", "ready: 3 of 3"]):
        assert s.observe("Bash", {"command": "cat status"}, f"u{n}") is None
        s.observe_result(f"u{n}", f"{out}\n<system-reminder>same</system-reminder>", False)


# -- the recorder asks before each request ----------------------------------------------------------

def _request(uses: list[dict], results: list[dict]) -> bytes:
    import json

    return json.dumps({"model": "m", "messages": [{"role": "user", "content": "fix it"},
                                                   {"role": "assistant", "content": uses},
                                                   {"role": "user", "content": results}]}).encode()


def test_a_request_carrying_the_result_that_completes_a_halt_is_judged_before_it_leaves():
    """The CLI sends the third rejection to the API perhaps before this process read it from the
    stream: judged from the request, that very request is the one refused."""
    w = SentinelWatch()
    w.begin_turn()
    edit = {"file_path": "/s.py", "old_string": "DEBUG = True", "new_string": "DEBUG = False"}
    stale = "<tool_use_error>String to replace not found in file.\nString: DEBUG = True</tool_use_error>"
    for i in (1, 2):
        w.saw_tool_use(f"e{i}", "Edit", edit)
        w.saw_result(f"e{i}", stale, True)
    assert w.halt is None
    body = _request([{"type": "text", "text": "again"}, {"type": "tool_use", "id": "e3", "name": "Edit", "input": edit}],
                    [{"type": "tool_result", "tool_use_id": "e3", "content": stale, "is_error": True}])
    halt = w.judge_request(body)
    assert halt is not None and halt is w.halt and w.halted_tool_use_id == "e3"
    w.saw_tool_use("e3", "Edit", edit)  # the stream catches up: the same result is not counted twice
    w.saw_result("e3", stale, True)
    assert w.halt is halt and w.stop_after_tool_result("e3") and halt.count == 3


def test_judging_a_request_counts_each_result_once_and_survives_any_body():
    w = SentinelWatch()
    w.begin_turn()
    use = {"type": "tool_use", "id": "b1", "name": "Bash", "input": {"command": "make"}}
    body = _request([use], [{"type": "tool_result", "tool_use_id": "b1", "content": [{"type": "text", "text": "x"}]}])
    for _ in range(5):  # retries of one request carry the same result
        assert w.judge_request(body) is None
    assert len(w.sentinel) == 1
    for junk in (b"", b"not json", b"[]", b'{"messages": 3}', b'{"messages": [{"role": "user"}]}',
                 _request([], [{"type": "tool_result", "tool_use_id": "nobody"}])):
        assert w.judge_request(junk) is None


# -- shell commands that write files ------------------------------------------------------------------

def test_a_fix_made_with_a_shell_command_is_progress_for_the_rerun_tests():
    t = Turns()
    fail = "Exit code 1\nFAILED test_calc.py::test_add - assert -1 == 5"
    assert t.bash("pytest -q", fail, True) is None
    assert t.bash("sed -i 's/a - b/a + b/' calc.py") is None
    assert t.bash("pytest -q", fail, True) is None
    assert t.bash("cat > calc.py <<'EOF'\ndef add(a, b):\n    return a + b\nEOF") is None
    assert t.bash("pytest -q", fail, True) is None  # two different fixes, the same failure: not a loop


def test_a_poll_that_appends_to_a_log_or_a_write_repeated_in_a_loop_is_still_halted():
    t = Turns()
    halts = [t.bash(f"echo check {n} >> polls.txt; cat status.txt", "pending") for n in range(1, 5)]
    assert halts[2] is not None and halts[2].trigger == "polling"
    t = Turns()
    calls = [("Bash", {"command": "date >> log.txt"}, ""), ("Bash", {"command": "curl -s /health"}, "starting")] * 4
    at, halt = first_halt(t, calls)
    assert at <= 5 and halt is not None


@pytest.mark.parametrize("command, writes", [
    ("echo x > out.txt", True), ("cat a >> b", True), ("sed -i 's/a/b/' f", True), ("tee -a log", True),
    ("git checkout -- f", True), ("mv a b", True), ("pip install yaml", True), ("cd x && touch y", True),
    ("pytest -q 2>&1 | tail -3", False), ("ls 2>/dev/null", False), ("grep x f >&2", False),
    ("awk '$2 >= 5' f", False), ("cat status.txt", False), ("git status", False), ("rmate", False),
])
def test_which_shell_commands_count_as_writing_files(command, writes):
    from mnemara.guard.call_shape import writes_files

    assert writes_files("Bash", {"command": command}) is writes
    assert writes_files("Edit", {"file_path": "/a"}) and not writes_files("Read", {"file_path": "/a"})


def test_edits_that_step_a_number_are_progress_even_with_the_clis_snippet():
    t = Turns()
    for port in range(8000, 8006):
        snippet = f"The file /c.ini has been updated. Here's the result of running `cat -n` on a snippet:\n" \
                  f"     2\u2192port = {port + 1}"
        assert t.call("Edit", {"file_path": "/c.ini", "old_string": f"port = {port}",
                               "new_string": f"port = {port + 1}"}, snippet) is None


def test_the_documented_examples_are_valid_settings():
    import json
    import re

    from mnemara.core.config import Config
    from tests.conftest import ROOT

    found = 0
    for page in ("configuration.md", "permissions.md"):
        text = (ROOT / "docs" / page).read_text(encoding="utf-8")
        for block in re.findall(r"```json\n(.*?)```", text, re.S):
            if '"runtime_sentinel"' in block:
                cfg = Config.from_dict(json.loads(block))
                assert SentinelSettings.from_config(cfg) != SentinelSettings()
                found += 1
    assert found == 2


@pytest.mark.parametrize("layout", ["compact", "spaced", "content_first"])
def test_the_request_is_read_from_its_end_in_any_json_layout(layout):
    import json

    edit = {"file_path": "/s.py", "old_string": "X", "new_string": "Y"}
    stale = "<tool_use_error>String to replace not found in file.\nString: X</tool_use_error>"
    w = SentinelWatch()
    w.begin_turn()
    for i in (1, 2):
        w.saw_tool_use(f"e{i}", "Edit", edit)
        w.saw_result(f"e{i}", stale, True)
    asked = {"role": "assistant", "content": [{"type": "tool_use", "id": "e3", "name": "Edit", "input": edit}]}
    answered = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "e3", "content": stale,
                                             "is_error": True}]}
    if layout == "content_first":
        asked, answered = ({"content": m["content"], "role": m["role"]} for m in (asked, answered))
    request = {"model": "m", "messages": [{"role": "user", "content": "hi"}, asked, answered],
               "system": [{"type": "text", "text": "you are"}], "tools": [{"name": "Edit", "description": "edits"}]}
    body = json.dumps(request, separators=(",", ":") if layout == "compact" else (", ", ": ")).encode()
    halt = w.judge_request(body)
    assert halt is not None and halt.trigger == "same_error" and w.halted_tool_use_id == "e3"
