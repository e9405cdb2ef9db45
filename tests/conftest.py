"""Shared fixtures: every test runs with a throwaway HOME and MNEMARA_HOME."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# Property tests never fail on wall time: on a loaded 2-core CI machine one example of a fast property
# took more than hypothesis's default 200 ms deadline (a flaky failure in tests/core/test_display.py).
settings.register_profile("mnemara", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("mnemara")

ROOT = Path(__file__).resolve().parents[1]

#: Workers per core for ``-n auto``. Part of the suite's time is spent waiting on other processes
#: (the Claude CLI, the scripted API, tmux), so one worker per core leaves the cores idle that long.
#: Measured on 2 cores, the whole suite (904 tests, one run each, same hour): -n 2 150 s, -n 3 120 s,
#: -n 4 117 s; earlier, with twice the CPU per run, -n 6 was slower than -n 4 (the waits that poll
#: start costing CPU). PYTEST_XDIST_AUTO_NUM_WORKERS still wins.
WORKERS_PER_CORE = 2
#: The longest single test (mypy over the package, cold): started first so it never ends last.
FIRST = ("tests/test_static_checks.py",)


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist: without it (-p no:xdist) nothing to do
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: :data:`WORKERS_PER_CORE` per core, sharing tests out by work stealing (unless
    ``--dist`` says otherwise): the end-to-end tests vary from 1 to 20 s, and fixed batches left
    one worker running them for a minute after the others had finished."""
    if config.option.dist == "no":
        config.option.dist = "worksteal"
    given = os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS", "")
    if given.isdigit() and int(given) > 0:
        return int(given)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return min(16, WORKERS_PER_CORE * cores)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Slow tests first (the longest, then those driving the real CLI), fast ones after: the
    workers share out the quick tests at the end instead of one worker finishing a long
    end-to-end test alone. Within each group the collected order is kept."""
    def rank(item: pytest.Item) -> int:
        if item.nodeid.startswith(FIRST):
            return 0
        return 1 if item.get_closest_marker("e2e") else 2

    items.sort(key=rank)


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point HOME and MNEMARA_HOME at a fresh temp folder; never touch the real ~/.mnemara."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("MNEMARA_HOME", str(home / ".mnemara"))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)  # the CLI launcher and its start-up answers: here too
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    monkeypatch.setenv("MNEMARA_NO_TUI", "1")
    # No spare CLI unless a test asks for one (warm_spare=True): a panel or REPL opened by a test
    # that never sends a message would otherwise start a CLI for nothing, on 2 cores.
    monkeypatch.setenv("MNEMARA_WARM_SPARE", "0")
    return home


@pytest.fixture
def mnemara_home(isolated_home: Path) -> Path:
    return isolated_home / ".mnemara"


def cli_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.update(extra or {})
    return env


def run_cli(*args: str, input: str | None = None, env: dict[str, str] | None = None, timeout: float = 120,
            subprocess_only: bool = False) -> subprocess.CompletedProcess:
    """Run ``mnemara ARGS``: in-process through click's CliRunner (fast; ``run`` too, with its REPL
    reading ``input``), or as ``python -m mnemara`` in a subprocess when ``subprocess_only`` is set
    (the process boundary is the point: signals, its own environment). Both answer a CompletedProcess."""
    if subprocess_only:
        return subprocess.run(
            [sys.executable, "-m", "mnemara", *args],
            input=input, capture_output=True, text=True, env=cli_env(env), timeout=timeout, cwd=str(ROOT),
        )
    return invoke_cli(*args, input=input, env=env)


def invoke_cli(*args: str, input: str | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """``mnemara ARGS`` in this process (click's CliRunner), shaped like a finished subprocess."""
    import traceback

    from click.testing import CliRunner

    from mnemara.cli import main

    result = CliRunner().invoke(main, list(args), input=input, env=env, prog_name="mnemara")
    stderr = result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        stderr += "".join(traceback.format_exception(result.exception))
    return subprocess.CompletedProcess(["mnemara", *args], result.exit_code, result.stdout, stderr)


@pytest.fixture
def cli():
    return run_cli


@pytest.fixture
def scripted_api(monkeypatch: pytest.MonkeyPatch):
    """A running :class:`mnemara.testing.scripted_api.ScriptedAPI`; the Claude CLI of this test talks to it.

    Sets ANTHROPIC_BASE_URL / ANTHROPIC_API_KEY / CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC
    and CLAUDE_CODE_MAX_RETRIES=0 (so scripted 429/5xx fail fast) for this test only (every
    test runs with MNEMARA_WARM_SPARE=0: no spare CLI unless it asks for one).
    """
    from mnemara.testing.scripted_api import ScriptedAPI

    api = ScriptedAPI().start()
    for key, value in api.env().items():
        monkeypatch.setenv(key, value)
    yield api
    api.stop()


@pytest.fixture
def session_factory(mnemara_home: Path):
    """Make AgentSessions on fresh instances; every one is closed at teardown."""
    from mnemara.store.instance import Instance
    from mnemara.session.agent import AgentSession

    made: list = []

    def make(name: str = "t", **kwargs):
        try:
            inst = Instance.open(name)
        except Exception:
            inst = Instance.create(name)
        session = AgentSession(inst, **kwargs)
        made.append(session)
        return session

    yield make
    for session in made:
        session.close()
