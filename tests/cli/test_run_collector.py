"""``mnemara run`` turns the garbage collector off for its start-up and on again after it, with what start-up
made frozen (so the first collections do not scan every module, class and SDK object before the second turn);
a process that invoked ``run`` in-process gets every object back into the collector's reach."""
from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

from tests.conftest import cli_env, invoke_cli

SCRIPT = """
import gc
from mnemara.cli.run import collector_on
gc.disable()
made = [[n] for n in range(5000)]  # start-up's objects, allocated with the collector off
collector_on()
print(gc.isenabled(), gc.get_freeze_count() >= len(made))
"""


def test_the_collector_comes_back_on_with_start_ups_objects_frozen() -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=cli_env(), timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True"]


def test_run_invoked_in_process_leaves_the_collector_on_and_nothing_frozen(isolated_home: Path) -> None:
    role = isolated_home / "role.md"
    role.write_text("A role.", encoding="utf-8")
    assert invoke_cli("init", "--instance", "gc", "--role", str(role)).returncode == 0
    assert gc.isenabled() and gc.get_freeze_count() == 0
    done = invoke_cli("run", "--instance", "gc", input="")  # no message: the REPL ends at end of input
    assert done.returncode == 0, done.stderr
    assert gc.isenabled() and gc.get_freeze_count() == 0
