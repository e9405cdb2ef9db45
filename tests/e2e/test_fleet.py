"""The fleet: three headless panels (`mnemara serve`: one producer, two engineers) on one NATS server.

The producer hands out 30 tasks with its peer_send tool; each engineer answers each of its tasks to
the producer. One engineer is killed with kill -9 in the middle of a turn and started again: its
unfinished turn is delivered again, and every task is answered exactly once.
"""
from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from mnemara.store.instance import Instance
from mnemara.store.turns import TurnStore
from mnemara.testing.fleet import ServedPanel, answers, configure, fleet_responder, kickoff
from tests.conftest import cli_env
from tests.peer.nats_support import nats_server, stream_name  # noqa: F401

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]
TASKS = 30


def delivered_keys(name: str) -> list[str]:
    with TurnStore(Instance.open(name).turns_path) as store:
        return [k for t in store.history() if t.role == "assistant" for k in t.meta.get("peer_delivered", [])]


def test_thirty_tasks_through_three_served_panels_with_an_engineer_killed_mid_turn(
        scripted_api, mnemara_home, nats_server, stream_name) -> None:
    engineers = ["eng1", "eng2"]
    # eng1 works slowly (its answer streams for a few seconds): the kill lands in the middle of its turn
    scripted_api.responder = fleet_responder(engineers, TASKS, delay={"eng1": 0.04})
    configure("lead", nats_server.url, stream_name, role="lead", senders=[])
    for name in engineers:
        configure(name, nats_server.url, stream_name, role=name, senders=["lead"])
    panels = {name: ServedPanel(name, env=cli_env(), cwd=ROOT) for name in ("lead", *engineers)}
    restarted: ServedPanel | None = None
    try:
        for panel in panels.values():
            panel.wait_for("serving")
        kickoff(nats_server.url, stream_name)
        victim = panels["eng1"]
        victim.wait_for("turn_started")
        time.sleep(0.5)
        assert not victim.named("turn_ended"), "the turn ended before the kill: not a mid-turn kill"
        victim.kill()  # kill -9 in the middle of the turn
        restarted = ServedPanel("eng1", env=cli_env(), cwd=ROOT)
        deadline = time.monotonic() + 240
        while len(answers(nats_server.url, stream_name)) < TASKS:
            assert time.monotonic() < deadline, answers(nats_server.url, stream_name)
            for panel in (*panels.values(), restarted):
                assert panel.proc.poll() is None or panel is victim, (panel.name, panel.err)
            time.sleep(0.5)
        lead = panels["lead"]
        answered = answers(nats_server.url, stream_name)
        lead_turns = lambda: len(lead.named("turn_ended"))  # noqa: E731
        before = -1
        while before != lead_turns():  # the producer notes the last answers, then everything is idle
            before = lead_turns()
            time.sleep(2)
        for panel in (lead, panels["eng2"], restarted):
            panel.proc.send_signal(signal.SIGTERM)
        for panel in (lead, panels["eng2"], restarted):
            assert panel.finish() == 0, panel.err
    finally:
        for panel in (*panels.values(), *([restarted] if restarted else [])):
            panel.kill()
    assert sorted(answered) == sorted(f"TASK-{i}" for i in range(1, TASKS + 1))
    assert set(answered.values()) == {1}, answered  # every task answered exactly once
    assert all(e["ok"] for p in (restarted, panels["eng2"]) for e in p.named("turn_ended"))
    for name in ("lead", *engineers):  # no message was carried by two completed turns
        keys = delivered_keys(name)
        assert len(keys) == len(set(keys)), (name, keys)
    killed_turn = victim.named("turn_started")[0]["messages"]
    assert set(killed_turn) <= {m for e in restarted.named("turn_ended") for m in e["messages"]}
