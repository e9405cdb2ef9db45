"""One Claude CLI serves consecutive turns, and the API sees exactly what fresh processes would send.

The proof is on the wire: the same turns (a tool loop that runs a real Bash
command, then a plain answer) go once through one session that keeps its CLI
and once through a session that starts a fresh CLI per turn, from the same
stored conversation; every request the scripted API recorded must be identical
apart from the CLI's session ids. Each session here ends with a kept CLI, and
closing it is checked too: killed (not drained), or killed when the graceful
close runs out of time.
"""
from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from mnemara.core import events as ev
from mnemara.claude._private import cli_process
from mnemara.claude.process import process_transport
from mnemara.core.config import update_config
from mnemara.testing.scripted_api import reply, text, tool_use

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


def run_turn(api: Any, session: Any, n: int) -> ev.TurnResult:
    script(api, n)
    result = session.turn(f"message number {n}")
    assert result.ok, result.errors
    return result


def _snapshot(session: Any, name: str) -> None:
    """Copy ``session``'s turns.sqlite, as it is now, into a new instance ``name``."""
    import sqlite3

    from mnemara.store.instance import Instance

    target = Instance.create(name)
    src, dst = sqlite3.connect(session.instance.turns_path), sqlite3.connect(target.turns_path)
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()


def _closing_kills_the_kept_process_instead_of_draining_it(session: Any) -> None:
    import signal

    kept = session.pool.spare
    assert kept is not None and kept.turns_served >= 1
    process = cli_process(kept.client)
    transport = process_transport(kept.client)
    assert transport is not None and not transport.is_closing()
    session.close()
    assert process.returncode == -signal.SIGKILL
    # nothing is left for the garbage collector to close once the loop has stopped (it would print
    # "RuntimeError: Event loop is closed" into whatever runs at that moment)
    assert transport.is_closing()


def test_turns_through_one_cli_send_the_bytes_fresh_clis_send_and_closing_kills_it(scripted_api, session_factory,
                                                                                     tmp_path: Path):
    role = tmp_path / "role.md"
    role.write_text(ROLE, encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    turns = 3  # turn 0 starts the kept CLI; turns 1 (a tool loop) and 2 go through it and are compared

    reused = session_factory("reused", cwd=work, warm_spare=False, reuse_cli=True, permission_prompt=lambda r: "y")
    # rewound, not continued (tests/e2e/test_cli_continuation_e2e.py has the kept conversation)
    update_config(reused.instance.config_path, role_doc_path=str(role), cli_conversation="rebuild")
    script(scripted_api, 0)
    assert reused.turn("message number 0").ok  # also the CLI's first run on this HOME (it stores its device id)
    _snapshot(reused, "fresh")  # the fresh CLIs start from this same stored conversation
    scripted_api.prompt_cache.clear()  # and both runs below start from the same (empty) prompt cache
    first = len(scripted_api.message_requests())
    reused_results = [run_turn(scripted_api, reused, n) for n in range(1, turns)]
    reused_requests = scripted_api.message_requests()[first:]
    assert reused.stats == {"spare_used": 0, "fresh_started": 1, "reused": turns - 1}

    scripted_api.prompt_cache.clear()
    fresh = session_factory("fresh", cwd=work, warm_spare=False, reuse_cli=False, permission_prompt=lambda r: "y")
    update_config(fresh.instance.config_path, role_doc_path=str(role))
    fresh_results = [run_turn(scripted_api, fresh, n) for n in range(1, turns)]
    fresh_requests = scripted_api.message_requests()[first + len(reused_requests):]
    assert fresh.stats == {"spare_used": 0, "fresh_started": turns - 1, "reused": 0}

    assert len(fresh_requests) == len(reused_requests) == turns  # turn 1 is two API calls
    for one, other in zip(fresh_requests, reused_requests):
        assert wire(one) == wire(other)
    assert reused_requests[1].tool_results()  # the tool loop really ran through the kept process
    all_reused = scripted_api.message_requests()[:first] + reused_requests
    assert len({json.loads(r.body["metadata"]["user_id"])["session_id"] for r in all_reused}) == 1
    # what the user sees and what is stored is the same too, cost per turn included
    assert [r.text for r in fresh_results] == [r.text for r in reused_results]
    assert [r.done.cost_usd for r in fresh_results] == [r.done.cost_usd for r in reused_results]
    assert all(r.done.cost_usd and r.done.cost_usd > 0 for r in reused_results)
    _closing_kills_the_kept_process_instead_of_draining_it(reused)


def _gone(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z")
    except (OSError, IndexError):
        return True


def _a_close_that_runs_out_of_time_kills_the_processes_and_returns(session: Any, monkeypatch: Any) -> None:
    import time

    import mnemara.session.agent as session_module
    from mnemara.core.debuglog import read_events

    kept = session.pool.spare
    assert kept is not None
    pid = cli_process(kept.client).pid

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


def test_role_doc_is_reread_an_edit_or_swap_gets_a_new_process_a_missing_one_warns_and_close_in_time(
        scripted_api, session_factory, tmp_path: Path, capsys, monkeypatch):
    from mnemara.core.debuglog import read_events

    role = tmp_path / "role.md"
    role.write_text("You are VERSION-ONE.", encoding="utf-8")
    session = session_factory(warm_spare=False, reuse_cli=True)
    update_config(session.instance.config_path, role_doc_path=str(role))
    session.turn("one")
    session.turn("two")  # same role doc: the first turn's CLI serves it
    assert session.stats == {"spare_used": 0, "fresh_started": 1, "reused": 1} and session.pool.continued == 1
    role.write_text("You are VERSION-TWO.", encoding="utf-8")
    session.turn("three")
    assert session.stats == {"spare_used": 0, "fresh_started": 2, "reused": 1}  # the kept CLI had the old text
    session.update_config(model="claude-opus-4-1")  # what /swap does
    role.unlink()  # ... and the role doc is gone: the turn warns and goes on without it
    four = session.turn("four")
    assert any(isinstance(e, ev.Notice) and "role doc not found" in e.message for e in four.events) and four.ok
    assert "role doc not found" in capsys.readouterr().err
    assert any(e["event"] == "role_doc_warning" for e in read_events(session.instance.debug_log_path))
    session.turn("five")
    assert session.stats == {"spare_used": 0, "fresh_started": 3, "reused": 2} and session.pool.continued == 2
    requests = scripted_api.message_requests()
    systems = [r.system_text for r in requests]
    assert [s.endswith("VERSION-ONE.") for s in systems] == [True, True, False, False, False]
    assert systems[2].endswith("VERSION-TWO.")
    assert not any("VERSION" in s for s in systems[3:])  # the role doc is re-read every turn, even when gone
    models = [r.body["model"] for r in requests]
    assert models[0] == models[1] == models[2] != models[3] == models[4]
    words = ["one", "two", "three", "four", "five"]
    # a new process (a new role doc, a new model) starts a new conversation: one user message; the same
    # process continues its own (two, five: the window only grew), this turn's message last
    for r, word, conversation in zip(requests, words, [1, 2, 1, 1, 2]):
        users = [m for m in r.messages if m["role"] == "user"]
        assert len(users) == conversation and users[-1]["content"][-1]["text"] == word
    _a_close_that_runs_out_of_time_kills_the_processes_and_returns(session, monkeypatch)


NOTHING_HEAVY = """
import os, sys, tempfile, time
from mnemara.testing.scripted_api import ScriptedAPI, reply
home = tempfile.mkdtemp()
os.environ.update(HOME=home, MNEMARA_HOME=home + "/m", MNEMARA_WARM_SPARE="1")
with ScriptedAPI(default=reply("ok")) as api:
    os.environ.update(api.env())
    from mnemara.store.instance import Instance
    from mnemara.session.agent import AgentSession
    for case in ("plain", "with-index"):  # plain first: nothing may load LanceDB before the indexed one
        instance = Instance.create(case)
        if case == "with-index":
            instance.index_dir.mkdir(parents=True, exist_ok=True)
            (instance.index_dir / "notes.lance").mkdir()
        session = AgentSession(instance)
        session.prewarm()
        at_start = "lancedb" in sys.modules or "kuzu" in sys.modules
        first = session.turn("hello").ok and session.turn("again").ok
        deadline = time.monotonic() + 120
        while case == "with-index" and "lancedb" not in sys.modules and time.monotonic() < deadline:
            time.sleep(0.1)
        print(case, at_start, first, "lancedb" in sys.modules, "kuzu" in sys.modules, flush=True)
        session.close()
# "lancedb" is in sys.modules from the moment its background import starts: that is what is checked.
# Leave now, without waiting (as a normal exit does) for that import to finish: seconds of CPU for nothing.
os._exit(0)
"""


def test_heavy_backends_are_not_loaded_at_start():
    """In one fresh process: an instance without an index loads neither backend, even after two
    turns; then one with an index loads none at start and LanceDB after its first turn."""
    import subprocess
    import sys

    from tests.conftest import cli_env

    env = {k: v for k, v in cli_env().items() if not k.startswith(("ANTHROPIC_", "MNEMARA_"))}
    run = subprocess.run([sys.executable, "-c", NOTHING_HEAVY], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip().splitlines()[-2:] == ["plain False True False False", "with-index False True True False"]
