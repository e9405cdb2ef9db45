"""Issue 13 item 10, in process: the stall clock, the retry budget, the config fields, the CLI launcher."""
from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import pytest

from mnemara.claude.faults import RETRY_ENV, StallWatch, retry_env
from mnemara.claude.child_guard import PARENT_ENV, guarded_cli_path
from mnemara.core.config import Config
from mnemara.core.errors import ConfigError


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


def _delta(text: str) -> object:
    from claude_agent_sdk import StreamEvent

    return StreamEvent(uuid="u", session_id="s", event={"type": "content_block_delta", "index": 0,
                                                        "delta": {"type": "text_delta", "text": text}})


def _start() -> object:
    from claude_agent_sdk import StreamEvent

    return StreamEvent(uuid="u", session_id="s", event={"type": "message_start", "message": {}})


def _shown(events: list) -> str:
    from mnemara.core import events as ev

    return "".join(e.text for e in events if isinstance(e, ev.TextDelta))


def test_a_retried_stream_shows_nothing_twice_and_a_restart_is_announced():
    from claude_agent_sdk import AssistantMessage, SystemMessage, TextBlock

    from mnemara.core import events as ev
    from mnemara.claude.bridge import TurnCollector

    collector = TurnCollector(stream=True)
    out: list = []
    for message in (_start(), _delta("Hello "), _delta("wor"),  # the connection drops here
                    SystemMessage("api_retry", {"attempt": 1, "max_retries": 2, "retry_delay_ms": 500}),
                    _start(), _delta("Hello "), _delta("wor"), _delta("ld")):
        out += collector.feed(message)
    assert _shown(out) == "Hello world"  # the second attempt's first 9 characters were already on screen
    assert any(isinstance(e, ev.Notice) and "connection lost; retrying" in e.message for e in out)
    assert collector.final_blocks(True) == [{"type": "text", "text": "Hello world"}]  # once

    # the CLI's non-streaming fallback answers something else: say so, then show it whole
    out = collector.feed(AssistantMessage(content=[TextBlock("Hi there.")], model="m"))
    assert [type(e).__name__ for e in out] == ["Notice", "TextDelta", "AssistantText"]
    assert "starts again" in out[0].message and out[1].text == "Hi there."
    assert collector.blocks == [{"type": "text", "text": "Hi there."}] and collector.unconfirmed_text == ""


def test_a_rejected_key_is_not_announced_as_a_retry():
    from claude_agent_sdk import SystemMessage

    from mnemara.claude.bridge import TurnCollector

    collector = TurnCollector()
    assert collector.feed(SystemMessage("api_retry", {"error_status": 403, "error": "authentication_failed"})) == []
    assert collector.auth_rejected == 403 and collector.retries == 0
