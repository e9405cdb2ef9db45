"""One Claude CLI serves consecutive turns, and the API sees exactly what fresh processes would send.

The proof is on the wire: the same turns (plain answers and a tool loop that
runs a real Bash command) go once through sessions that start a fresh CLI per
turn and once through one session that keeps its CLI; every request the
scripted API recorded must be identical apart from the CLI's session ids.
"""
from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from mnemara import events as ev
from mnemara.cli_process import process_transport
from mnemara.config import update_config
from mnemara.testing import reply, text, tool_use

pytestmark = pytest.mark.e2e

ROLE = "You are the reuse-test agent. Answer briefly."
SESSION_IDS = ("X-Claude-Code-Session-Id",)


def script(api: Any, turn: int) -> None:
    """Turn 1 runs a tool loop (fixed tool id, so both runs can be compared byte for byte)."""
    if turn == 1:
        api.push(reply(tool_use("Bash", {"command": "echo from-bash"}, id="toolu_reuse_fixed_1")), reply(text("ran it")))
    else:
        api.push(reply(text(f"answer {turn}")))


def wire(request: Any) -> dict[str, Any]:
    """A recorded request as the model host sees it, with the CLI's own session id taken out."""
    body = json.loads(json.dumps(request.body))
    user_id = json.loads(body.get("metadata", {}).get("user_id", "{}"))
    user_id.pop("session_id", None)
    body.setdefault("metadata", {})["user_id"] = user_id
    headers = {k: v for k, v in request.headers.items() if k not in SESSION_IDS and k.lower() != "content-length"}
    return {"path": request.path, "headers": headers, "body": body}


def run_turns(api: Any, session: Any, turns: int) -> list[ev.TurnResult]:
    results = []
    for n in range(turns):
        script(api, n)
        results.append(session.turn(f"message number {n}"))
        assert results[-1].ok, results[-1].errors
    return results


def test_turns_through_one_cli_send_the_bytes_fresh_clis_send(scripted_api, session_factory, tmp_path: Path):
    role = tmp_path / "role.md"
    role.write_text(ROLE, encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    turns = 4
    warmup = session_factory("warmup", cwd=work, warm_spare=False, reuse_cli=False)
    assert warmup.turn("the CLI's first run on this HOME stores its device id").ok
    warmup.close()
    scripted_api.clear()

    fresh = session_factory("fresh", cwd=work, warm_spare=False, reuse_cli=False, permission_prompt=lambda r: "y")
    update_config(fresh.instance.config_path, role_doc_path=str(role))
    fresh_results = run_turns(scripted_api, fresh, turns)
    fresh_requests = scripted_api.message_requests()
    assert fresh.stats == {"spare_used": 0, "fresh_started": turns, "reused": 0}

    reused = session_factory("reused", cwd=work, warm_spare=False, reuse_cli=True, permission_prompt=lambda r: "y")
    update_config(reused.instance.config_path, role_doc_path=str(role))
    reused_results = run_turns(scripted_api, reused, turns)
    reused_requests = scripted_api.message_requests()[len(fresh_requests):]
    assert reused.stats == {"spare_used": 0, "fresh_started": 1, "reused": turns - 1}

    assert len(fresh_requests) == len(reused_requests) == turns + 1  # turn 1 is two API calls
    for one, other in zip(fresh_requests, reused_requests):
        assert wire(one) == wire(other)
    assert reused_requests[2].tool_results()  # the tool loop really ran through the kept process
    assert {json.loads(r.body["metadata"]["user_id"])["session_id"] for r in reused_requests}.__len__() == 1
    # what the user sees and what is stored is the same too, cost per turn included
    assert [r.text for r in fresh_results] == [r.text for r in reused_results]
    assert [r.done.cost_usd for r in fresh_results] == [r.done.cost_usd for r in reused_results]
    assert all(r.done.cost_usd and r.done.cost_usd > 0 for r in reused_results)


def test_an_edited_role_doc_or_a_swap_gets_a_new_process(scripted_api, session_factory, tmp_path: Path):
    role = tmp_path / "role.md"
    role.write_text("You are VERSION-ONE.", encoding="utf-8")
    session = session_factory(warm_spare=False, reuse_cli=True)
    update_config(session.instance.config_path, role_doc_path=str(role))
    session.turn("one")
    session.turn("two")
    assert session.stats == {"spare_used": 0, "fresh_started": 1, "reused": 1}
    role.write_text("You are VERSION-TWO.", encoding="utf-8")
    session.turn("three")
    assert session.stats == {"spare_used": 0, "fresh_started": 2, "reused": 1}
    session.update_config(model="claude-opus-4-1")  # what /swap does
    session.turn("four")
    session.turn("five")
    assert session.stats == {"spare_used": 0, "fresh_started": 3, "reused": 2}
    requests = scripted_api.message_requests()
    assert [r.system_text.endswith("VERSION-ONE.") for r in requests] == [True, True, False, False, False]
    assert all(r.system_text.endswith("VERSION-TWO.") for r in requests[2:])
    models = [r.body["model"] for r in requests]
    assert models[0] == models[1] == models[2] != models[3] == models[4]
    words = ["one", "two", "three", "four", "five"]
    for r, word in zip(requests, words):  # every request is a fresh conversation: one user message, this turn's last
        users = [m for m in r.messages if m["role"] == "user"]
        assert len(users) == 1 and users[0]["content"][-1]["text"] == word


def test_a_failed_or_stopped_turn_never_hands_its_process_on(scripted_api, session_factory):
    from mnemara.testing import http_error

    session = session_factory(warm_spare=False, reuse_cli=True)
    scripted_api.push(http_error(500))
    assert not session.turn("fails").ok
    assert session.pool.spare is None
    scripted_api.push(reply("slow " * 100, delay=0.05))

    async def stop_midway() -> None:
        async def run() -> list[ev.Event]:
            return [e async for e in session.aturn("to be stopped")]

        task = asyncio.create_task(run())
        while not scripted_api.message_requests()[1:]:
            await asyncio.sleep(0.05)
        await session.stop()
        events = await asyncio.wait_for(task, 30)
        assert events[-1].interrupted
        assert session.pool.spare is None
        scripted_api.push(reply("fresh again"))
        events = [e async for e in session.aturn("after the stop")]
        assert events[-1].error is None
        await session.aclose()

    asyncio.run(stop_midway())
    assert session.stats["reused"] == 0 and session.stats["fresh_started"] == 3


def test_closing_kills_the_kept_process_instead_of_draining_it(scripted_api, session_factory):
    import signal

    session = session_factory(warm_spare=True, reuse_cli=True)
    session.turn("one")
    kept = session.pool.spare
    assert kept is not None and kept.turns_served == 1
    process = kept.client._transport._process
    transport = process_transport(kept.client)
    assert transport is not None and not transport.is_closing()
    session.close()
    assert process.returncode == -signal.SIGKILL
    # nothing is left for the garbage collector to close once the loop has stopped (it would print
    # "RuntimeError: Event loop is closed" into whatever runs at that moment)
    assert transport.is_closing()


def _gone(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z")
    except (OSError, IndexError):
        return True


def test_a_close_that_runs_out_of_time_kills_the_processes_and_returns(scripted_api, session_factory, monkeypatch):
    import time

    import mnemara.session as session_module
    from mnemara.debuglog import read_events

    session = session_factory(warm_spare=False, reuse_cli=True)
    session.turn("one")
    kept = session.pool.spare
    assert kept is not None
    pid = kept.client._transport._process.pid

    async def never_ends() -> None:  # a machine too loaded to end the processes politely in time
        await asyncio.Event().wait()

    monkeypatch.setattr(session.pool, "aclose", never_ends)
    monkeypatch.setattr(session_module, "CLOSE_WAIT_SECONDS", 0.5)
    session.close()  # returns: closing never fails the caller (it raised TimeoutError, and `run` exited 2)
    assert session.closed
    deadline = time.monotonic() + 10
    while not _gone(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _gone(pid), "the kept CLI outlived the session"
    assert any(e["event"] == "close_timeout" for e in read_events(session.instance.debug_log_path))


async def test_closing_inside_a_running_loop_releases_the_kept_process(scripted_api, session_factory):
    session = session_factory(warm_spare=False, reuse_cli=True)
    await asyncio.to_thread(session.turn, "one")  # the sync API: the CLI lives on the session's own loop
    kept = session.pool.spare
    assert kept is not None
    transport = process_transport(kept.client)
    session.close()  # inside this test's loop: kill now, release on the session's loop
    for _ in range(200):
        if transport.is_closing():
            break
        await asyncio.sleep(0.01)
    assert transport.is_closing()


NOTHING_HEAVY = """
import os, sys, tempfile, time
from pathlib import Path
from mnemara.testing import ScriptedAPI, reply
home = tempfile.mkdtemp()
os.environ.update(HOME=home, MNEMARA_HOME=home + "/m", MNEMARA_WARM_SPARE="1")
with ScriptedAPI(default=reply("ok")) as api:
    os.environ.update(api.env())
    from mnemara.instance import Instance
    from mnemara.session import AgentSession
    instance = Instance.create("x")
    if sys.argv[1] == "with-index":
        instance.index_dir.mkdir(parents=True, exist_ok=True)
        (instance.index_dir / "notes.lance").mkdir()
    session = AgentSession(instance)
    session.prewarm()
    at_start = "lancedb" in sys.modules or "kuzu" in sys.modules
    first = session.turn("hello").ok and session.turn("again").ok
    deadline = time.monotonic() + 120
    while sys.argv[1] == "with-index" and "lancedb" not in sys.modules and time.monotonic() < deadline:
        time.sleep(0.1)
    print(at_start, first, "lancedb" in sys.modules, "kuzu" in sys.modules)
    session.close()
"""


@pytest.mark.parametrize(("case", "expected"), [("plain", "False True False False"),
                                                  ("with-index", "False True True False")])
def test_heavy_backends_are_not_loaded_at_start(case: str, expected: str):
    import subprocess
    import sys

    from tests.conftest import cli_env

    env = {k: v for k, v in cli_env().items() if not k.startswith(("ANTHROPIC_", "MNEMARA_"))}
    run = subprocess.run([sys.executable, "-c", NOTHING_HEAVY, case], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip().splitlines()[-1] == expected
