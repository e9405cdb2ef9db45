"""Shared fixtures: every test runs with a throwaway HOME and MNEMARA_HOME."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point HOME and MNEMARA_HOME at a fresh temp folder; never touch the real ~/.mnemara."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("MNEMARA_HOME", str(home / ".mnemara"))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    monkeypatch.setenv("MNEMARA_NO_TUI", "1")
    return home


@pytest.fixture
def mnemara_home(isolated_home: Path) -> Path:
    return isolated_home / ".mnemara"


def cli_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.update(extra or {})
    return env


def run_cli(*args: str, input: str | None = None, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run ``python -m mnemara ARGS`` in a subprocess with this checkout on the path."""
    return subprocess.run(
        [sys.executable, "-m", "mnemara", *args],
        input=input, capture_output=True, text=True, env=cli_env(env), timeout=timeout, cwd=str(ROOT),
    )


@pytest.fixture
def cli():
    return run_cli


@pytest.fixture
def scripted_api(monkeypatch: pytest.MonkeyPatch):
    """A running :class:`mnemara.testing.ScriptedAPI`; the Claude CLI of this test talks to it.

    Sets ANTHROPIC_BASE_URL / ANTHROPIC_API_KEY / CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC
    and CLAUDE_CODE_MAX_RETRIES=0 (so scripted 429/5xx fail fast) for this test only, and
    MNEMARA_WARM_SPARE=0 (sessions start no spare CLI unless a test asks for one).
    """
    from mnemara.testing import ScriptedAPI

    api = ScriptedAPI().start()
    for key, value in api.env().items():
        monkeypatch.setenv(key, value)
    # No spare CLI per session in tests (it would double the CLI start-ups on 2 cores);
    # tests of the spare itself pass warm_spare=True.
    monkeypatch.setenv("MNEMARA_WARM_SPARE", "0")
    yield api
    api.stop()


@pytest.fixture
def session_factory(mnemara_home: Path):
    """Make AgentSessions on fresh instances; every one is closed at teardown."""
    from mnemara.instance import Instance
    from mnemara.session import AgentSession

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
