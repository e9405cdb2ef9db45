"""``!command`` (issue 39): what counts as one, what the user is shown before it runs, how it runs and stops."""
from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from mnemara.commands.shell_escape import MAX_OUTPUT_BYTES, ShellRun, question, shell_command
from mnemara.core.errors import UsageError


def test_what_is_a_shell_command():
    assert shell_command("!git status") == "git status"
    assert shell_command("  ! ls -la ") == "ls -la"
    assert shell_command("!!not a command") is None and shell_command("hello !x") is None
    with pytest.raises(UsageError, match="! needs a command"):
        shell_command("!")


def test_the_question_shows_the_whole_command_escaped_and_where_it_runs(tmp_path: Path):
    hidden = "ls\r\x1b[2Krm -rf ~" + " " * 50 + "\necho done\u202e"
    shown = question(hidden, str(tmp_path))
    line = shown.splitlines()[2]
    assert line == "  ls\\r\\x1b[2Krm -rf ~\\x20\\{50}\\necho done\\u202e"
    assert f"in {tmp_path}" in shown and "2 lines" in shown and "not to the model" in shown
    assert "\r" not in shown and "\x1b" not in shown


def test_a_run_collects_output_and_exit_code_in_its_folder(tmp_path: Path):
    run = ShellRun("pwd; echo oops >&2; printf 'tab\\there\\x1b[31m'; exit 3", str(tmp_path)).run()
    assert run.exit_code == 3 and run.status() == "exit 3"
    assert run.output == f"{tmp_path}\noops\ntab    here\\x1b[31m"
    text = run.for_input()
    assert text.startswith("I ran this command in my shell (exit 3):\n$ pwd; echo oops")
    assert "```\n" + run.output + "\n```\n" in text
    assert "3 lines of output" in run.summary() and "the output is in your input" in run.summary()


def test_long_output_is_cut_and_fences_in_the_output_are_outgrown(tmp_path: Path):
    run = ShellRun(f"echo '```'; head -c {MAX_OUTPUT_BYTES + 10} /dev/zero | tr '\\0' x", str(tmp_path)).run()
    assert run.truncated and len(run.output) <= MAX_OUTPUT_BYTES
    assert run.for_input().count("````") == 2 and "(output cut at 32 KB)" in run.for_input()


def test_stop_kills_the_command_and_what_it_started(tmp_path: Path):
    marker = tmp_path / "child.pid"
    run = ShellRun(f"sleep 60 & echo $! > {marker}; wait", str(tmp_path))
    thread = threading.Thread(target=run.run)
    thread.start()
    deadline = time.monotonic() + 20
    while not (marker.exists() and marker.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.05)
    child = int(marker.read_text())
    run.stop()
    thread.join(20)
    assert not thread.is_alive() and run.status() == "stopped by you"
    for _ in range(100):
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        if Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
            break
        time.sleep(0.05)
    else:
        raise AssertionError("the command's child survived the stop")


def test_a_timeout_stops_it(tmp_path: Path):
    run = ShellRun("sleep 30", str(tmp_path)).run(timeout=0.3)
    assert run.timed_out and run.status() == "stopped after 0.3 s"


def test_the_piped_repl_asks_runs_on_y_and_prints_the_output(mnemara_home, tmp_path: Path, monkeypatch):
    from mnemara.store.instance import Instance
    from tests.conftest import run_cli

    Instance.create("bang")
    monkeypatch.chdir(tmp_path)
    proc = run_cli("run", "--instance", "bang", "--no-tui",
                   input="!echo from-the-shell\ny\n!touch nope.txt\nn\n!!not a command? no: a message needs a key\n")
    assert "Run in your shell (bash -c, in" in proc.stderr and "  echo from-the-shell\n" in proc.stderr
    assert "I ran this command in my shell (exit 0):\n$ echo from-the-shell\n```\nfrom-the-shell\n```\n" in proc.stdout
    assert "ran by you: echo from-the-shell (exit 0, 1 line of output)" in proc.stderr
    assert "not run" in proc.stderr and not (tmp_path / "nope.txt").exists()
    from mnemara.store.turns import TurnStore

    with TurnStore(Instance.open("bang").turns_path) as store:  # "!!x" is the message "!x" (stored, no key to send it)
        assert [row.text for row in store.history()] == ["!not a command? no: a message needs a key"]
