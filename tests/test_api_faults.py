"""Issue 13 item 10, in process: the stall clock, the retry budget, the config fields, the CLI launcher."""
from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import pytest

from mnemara.api_faults import RETRY_ENV, StallWatch, retry_env
from mnemara.child_guard import PARENT_ENV, guarded_cli_path
from mnemara.config import Config
from mnemara.errors import ConfigError


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_stall_clock_runs_only_while_the_api_owes_an_answer():
    clock = FakeClock()
    fired: list[int] = []
    watch = StallWatch(10, lambda: fired.append(1), clock=clock)
    clock.now += 60
    assert not watch.overdue()  # nothing asked yet
    watch.awaiting_api()
    clock.now += 9
    assert not watch.overdue()
    watch.activity()  # a delta arrived
    clock.now += 9.5
    assert not watch.overdue()
    watch.idle()  # message_stop: a tool or the user is working now
    clock.now += 500
    assert not watch.overdue()
    watch.awaiting_api()  # tool results went back
    watch.activity(grace=30)  # the CLI announced a 30 s retry back-off
    clock.now += 39
    assert not watch.overdue()
    clock.now += 1
    assert watch.overdue()


async def test_stall_watch_fires_once_and_awaits_its_handler():
    calls: list[str] = []

    async def on_stall() -> None:
        calls.append("stalled")

    watch = StallWatch(0.05, on_stall)
    watch.awaiting_api()
    await asyncio.wait_for(watch.run(tick=0.01), 5)
    assert watch.fired and calls == ["stalled"]


def test_retry_budget_comes_from_config_unless_the_environment_sets_it():
    assert retry_env(2, {}) == {RETRY_ENV: "2"}
    assert retry_env(0, {"PATH": "/bin"}) == {RETRY_ENV: "0"}
    assert retry_env(2, {RETRY_ENV: "5"}) == {}  # an explicit override for one run wins


def test_api_fault_fields_have_small_defaults_and_refuse_bad_values():
    cfg = Config()
    assert cfg.api_max_retries == 2 and cfg.api_stall_seconds == 120
    for bad in ({"api_max_retries": -1}, {"api_max_retries": 11}, {"api_max_retries": "many"},
                {"api_stall_seconds": 0}, {"api_stall_seconds": -5}, {"api_stall_seconds": 99999}):
        with pytest.raises(ConfigError) as err:
            Config.from_dict(bad)
        assert next(iter(bad)) in err.value.message


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux only")
def test_cli_launcher_execs_in_place_and_refuses_an_orphaned_start(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    path = guarded_cli_path()
    assert path is not None and os.stat(path).st_mode & 0o777 == 0o700
    assert guarded_cli_path() == path  # written once, reused
    ok = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60, check=False,
                        env={**os.environ, PARENT_ENV: str(os.getpid())})
    assert ok.returncode == 0 and "Claude Code" in ok.stdout
    orphan = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60, check=False,
                            env={**os.environ, PARENT_ENV: "1"})  # "started by" a parent that is not ours
    assert orphan.returncode == 71 and orphan.stdout == ""
