"""A finished ``mnemara run`` ends without the interpreter's teardown, and loses nothing doing so: buffered
output is written, ``atexit`` handlers run (the loggers flush there), the exit code is kept; a process with a
thread still running, or a command that did not ask, ends the usual way."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import cli_env

SCRIPT = """
import atexit, sys, threading, time
from mnemara.cli.fast_exit import end_process, leave_after_command
atexit.register(lambda: open(sys.argv[1], "a").write("atexit ran;"))
print("buffered output", end="")  # stdout is a pipe: block-buffered, not yet written
if sys.argv[2] == "thread":
    threading.Thread(target=time.sleep, args=(0.3,)).start()
if sys.argv[2] != "not asked":
    leave_after_command()
end_process(sys.argv[3] if sys.argv[3] == "why" else int(sys.argv[3]))
print(" and after", end="")
sys.exit(5)
"""


def run(tmp_path: Path, case: str, code: str) -> tuple[subprocess.CompletedProcess[str], str]:
    marker = tmp_path / "marker"
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(marker), case, code], capture_output=True, text=True,
                          env=cli_env(), timeout=60)
    return done, marker.read_text() if marker.exists() else ""


def test_the_process_ends_at_once_with_its_output_its_handlers_and_its_code(tmp_path: Path) -> None:
    done, marker = run(tmp_path, "asked", "3")
    assert (done.returncode, done.stdout, marker) == (3, "buffered output", "atexit ran;")


def test_a_message_as_exit_code_is_said_and_ends_with_1(tmp_path: Path) -> None:
    done, marker = run(tmp_path, "asked", "why")
    assert (done.returncode, done.stdout, done.stderr.strip(), marker) == (1, "buffered output", "why", "atexit ran;")


def test_not_asked_or_a_thread_still_running_ends_the_usual_way(tmp_path: Path) -> None:
    for case in ("not asked", "thread"):
        folder = tmp_path / case.replace(" ", "_")
        folder.mkdir()
        done, marker = run(folder, case, "3")
        assert (done.returncode, done.stdout, marker) == (5, "buffered output and after", "atexit ran;"), case
