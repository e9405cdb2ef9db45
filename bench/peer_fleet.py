"""Headless panels for ``bench_peer.py --fleet`` (issue 38): `mnemara serve` processes on one NATS server.

Everything is real but the model (the scripted Messages API at zero latency): each panel is a
``python -m mnemara serve`` process with its session, its Claude CLI and its tools.

- tasks per minute: a producer panel hands out ``tasks`` tasks to two engineer panels (peer_send), each
  engineer answers each task to the producer; from the producer's start message to the last answer.
- send -> turn start: one message at a time to an engineer panel idle for half a second, from the publish to its
  ``turn_started`` log line; median and p99. The baseline, measured in the same run: the bare inbox
  of a process with no session (:mod:`mnemara.testing.peer_panel`, a no-op turn), the same way.
- kill -9 trials: an engineer panel is killed ``trials`` times, half at a random moment after a turn
  started, half right after a turn's answer was stored (its ack in flight), then started again; a last
  one runs to the end. Duplicate
  turns: a message carried by two completed turns (the ``peer_delivered`` keys of the stored answers);
  lost tasks: a message no completed turn carried.
- idle CPU: the CPU a started, idle panel (and its child processes) uses over ``idle_seconds``, as a
  percentage of one core; the bare inbox process beside it.

Goals: 0 duplicate turns and 0 lost tasks; idle CPU <= 1% of a core.
"""
from __future__ import annotations

import json
import os
import random
import signal
import statistics
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from mnemara.peer.outbox import send
from mnemara.store.instance import Instance
from mnemara.store.turns import TurnStore
from mnemara.testing.fleet import ServedPanel, answers, configure, fleet_responder, kickoff, sender_config
from mnemara.testing.nats_server import NatsServer
from mnemara.testing.scripted_api import ScriptedAPI

ROOT = Path(__file__).resolve().parents[1]
IDLE_BETWEEN_S = 0.5  # latency: each message is sent to a panel idle this long


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _cpu_tree(pid: int) -> float:
    """CPU seconds of ``pid`` and its live children (the panel's CLI processes), from /proc."""
    total = 0.0
    todo = [pid]
    while todo:
        current = todo.pop()
        try:
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
            children = Path(f"/proc/{current}/task/{current}/children").read_text().split()
        except OSError:
            continue
        todo.extend(int(c) for c in children)
    return total


def _ts(event: dict[str, Any]) -> float:
    return datetime.fromisoformat(event["ts"].replace("Z", "+00:00")).timestamp()


def _serve(name: str) -> ServedPanel:
    return ServedPanel(name, env={"PYTHONPATH": str(ROOT)}, cwd=ROOT)


def _bare(url: str, stream: str, root: Path, role: str) -> subprocess.Popen[str]:
    cfg = {"peer_poll_enabled": True, "peer_transport": "nats", "peer_nats_url": url, "peer_nats_stream": stream,
           "peer_nats_subject_prefix": f"fleet.{stream}", "peer_role": role, "peer_poll_roles": ["lead"],
           "peer_poll_interval_seconds": 30}
    return subprocess.Popen([sys.executable, "-m", "mnemara.testing.peer_panel", str(root), json.dumps(cfg), role],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})


def _line(proc: subprocess.Popen[str], prefix: str) -> float:
    assert proc.stdout is not None
    while True:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError("the bare panel ended")
        if line.startswith(prefix):
            return time.time()


def throughput(url: str, stream: str, tasks: int) -> float:
    """Seconds from the producer's start message to the last of ``tasks`` answers."""
    configure("lead", url, stream, role="lead", senders=[])
    for name in ("eng1", "eng2"):
        configure(name, url, stream, role=name, senders=["lead"])
    panels = [_serve(n) for n in ("lead", "eng1", "eng2")]
    try:
        for panel in panels:
            panel.wait_for("serving", timeout=120)
        start = time.perf_counter()
        kickoff(url, stream)
        deadline = time.monotonic() + 600
        while len(answers(url, stream)) < tasks:
            if time.monotonic() > deadline:
                raise RuntimeError(f"only {len(answers(url, stream))} of {tasks} tasks answered")
            time.sleep(0.1)
        return time.perf_counter() - start
    finally:
        for panel in panels:
            panel.proc.send_signal(signal.SIGTERM)
        for panel in panels:
            panel.finish()


def latency(url: str, stream: str, messages: int, tmp: Path) -> tuple[list[float], list[float]]:
    """send -> turn start of a served panel, and of the bare inbox process (the baseline)."""
    configure("solo", url, stream, role="solo", senders=["lead"])
    lead = sender_config(url, stream, "lead")
    served: list[float] = []
    panel = _serve("solo")
    try:
        panel.wait_for("serving", timeout=120)
        for n in range(messages):
            t0 = time.time()
            send(lead, "lead", None, "solo", json.dumps({"task": f"TASK-L{n}"}))
            started = panel.wait_for("turn_started", n + 1, timeout=120)[n]
            served.append(_ts(started) - t0)
            panel.wait_for("turn_ended", n + 1, timeout=120)
            time.sleep(IDLE_BETWEEN_S)  # the next message meets an idle panel (its last turn's ack and tail done)
    finally:
        panel.proc.send_signal(signal.SIGTERM)
        panel.finish()
    bare: list[float] = []
    proc = _bare(url, stream, tmp / "bare-lat", "bare")
    try:
        _line(proc, "ready")
        for n in range(messages):
            t0 = time.time()
            send(lead, "lead", None, "bare", json.dumps({"task": f"TASK-B{n}"}))
            bare.append(_line(proc, "start") - t0)
            _line(proc, "done")
            time.sleep(IDLE_BETWEEN_S)
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(30)
    return served, bare


def idle_cpu(url: str, stream: str, seconds: float, tmp: Path) -> tuple[float, float]:
    """Percent of one core used by an idle served panel (with its children) and by the bare inbox."""
    configure("idle", url, stream, role="idle", senders=["lead"])
    panel = _serve("idle")
    try:
        panel.wait_for("serving", timeout=120)
        time.sleep(3.0)  # past start-up (a spare CLI, if any, finishes booting)
        cpu0, wall0 = _cpu_tree(panel.proc.pid), time.perf_counter()
        time.sleep(seconds)
        served = (_cpu_tree(panel.proc.pid) - cpu0) / (time.perf_counter() - wall0) * 100
    finally:
        panel.proc.send_signal(signal.SIGTERM)
        panel.finish()
    proc = _bare(url, stream, tmp / "bare-idle", "bareidle")
    try:
        _line(proc, "ready")
        time.sleep(1.0)
        cpu0, wall0 = _cpu_tree(proc.pid), time.perf_counter()
        time.sleep(seconds)
        bare = (_cpu_tree(proc.pid) - cpu0) / (time.perf_counter() - wall0) * 100
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(30)
    return served, bare


def kill_trials(url: str, stream: str, trials: int, per_trial: int, seed: int) -> dict[str, int]:
    """Kill -9 a served engineer ``trials`` times after a turn started; count duplicate turns and lost tasks."""
    rng = random.Random(seed)
    inst = configure("victim", url, stream, role="victim", senders=["lead"])
    lead = sender_config(url, stream, "lead")
    sent: list[str] = []
    kills = 0
    panel = _serve("victim")
    try:
        for trial in range(trials):
            panel.wait_for("serving", timeout=120)
            seen = len(panel.named("turn_started"))
            for n in range(per_trial):
                name = f"TASK-K{trial}-{n}"
                send(lead, "lead", None, "victim", json.dumps({"task": name}))
                sent.append(name)
            panel.wait_for("turn_started", seen + 1, timeout=120)
            if trial % 2:  # right after a turn's answer is stored: its ack in flight, or not sent yet
                panel.wait_for("turn_ended", len(panel.named("turn_ended")) + 1, timeout=120)
            else:  # anywhere in the turn
                time.sleep(rng.uniform(0.0, 1.5))
            if panel.proc.poll() is None:
                panel.kill()
                kills += 1
            panel = _serve("victim")
        panel.wait_for("serving", timeout=120)
        deadline = time.monotonic() + 300
        while len(_carried(inst)) < len(sent) and time.monotonic() < deadline:
            time.sleep(0.3)
    finally:
        panel.proc.send_signal(signal.SIGTERM)
        panel.finish()
    keys = [k for turn in _answers(inst) for k in turn]
    carried = _carried(inst)
    return {"sent": len(sent), "kills": kills, "turns": len(_answers(inst)),
            "duplicates": len(keys) - len(set(keys)), "lost": len(sent) - len(carried & set(sent)),
            "answers_repeated": sum(c - 1 for c in answers(url, stream).values() if c > 1)}


def _answers(inst: Instance) -> list[list[str]]:
    with TurnStore(inst.turns_path) as store:
        return [list(t.meta.get("peer_delivered", [])) for t in store.history() if t.role == "assistant"]


def _carried(inst: Instance) -> set[str]:
    """The task names carried by completed turns (their user row holds the messages)."""
    with TurnStore(inst.turns_path) as store:
        rows = store.history()
    done: set[str] = set()
    for i, turn in enumerate(rows):
        if turn.role == "assistant" and turn.meta.get("peer_delivered"):
            user = next((r for r in reversed(rows[:i]) if r.role == "user"), None)
            if user is not None:
                done.update(part.split('"')[0] for part in user.text.split('"task": "')[1:])
    return done


def run(tmp: Path, *, tasks: int, messages: int, trials: int, per_trial: int, idle_seconds: float,
        seed: int) -> bool:
    home = tmp / "home"
    home.mkdir()
    os.environ.update({"HOME": str(home), "MNEMARA_HOME": str(home / ".mnemara"), "MNEMARA_NO_TUI": "1"})
    ok = True
    with ScriptedAPI() as api, NatsServer(tmp / "nats") as server:
        os.environ.update(api.env())
        api.responder = fleet_responder(["eng1", "eng2"], tasks)
        print(f"\nheadless panels (mnemara serve) on one nats-server, a 0-latency scripted model; load average "
              f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
        elapsed = throughput(server.url, "FLEET", tasks)
        print(f"  throughput          {tasks} tasks through a producer and two engineers in {elapsed:.1f} s: "
              f"{tasks / elapsed * 60:.1f} tasks/min")
        served, bare = latency(server.url, "LAT", messages, tmp)
        print(f"  send -> turn start  served panel median {statistics.median(served) * 1e3:7.1f} ms  "
              f"p99 {_pct(served, 0.99) * 1e3:7.1f} ms  ({len(served)} messages)")
        print(f"                      bare inbox   median {statistics.median(bare) * 1e3:7.1f} ms  "
              f"p99 {_pct(bare, 0.99) * 1e3:7.1f} ms  (baseline, same run)")
        print(f"                      served / bare median: {statistics.median(served) / statistics.median(bare):.2f}x")
        mine, base = idle_cpu(server.url, "IDLE", idle_seconds, tmp)
        goal = mine <= 1.0
        ok &= goal
        tick = 100 / os.sysconf("SC_CLK_TCK") / idle_seconds
        print(f"  idle CPU            served panel {mine:.3f}% of a core over {idle_seconds:g} s (with its children); "
              f"bare inbox {base:.3f}% (one clock tick = {tick:.3f}%)")
        print(f"  goal: idle CPU of a headless panel <= 1% of a core: {'MET' if goal else 'MISSED'}")
        if trials:
            result = kill_trials(server.url, "KILL", trials, per_trial, seed)
            goal = result["duplicates"] == 0 and result["lost"] == 0 and result["kills"] > 0
            ok &= goal
            print(f"  kill -9 trials      {trials} trials, {result['kills']} panels killed (half mid-turn, half just "
                  "after a turn's answer was stored): "
                  f"{result['sent']} tasks sent, {result['turns']} completed turns, {result['duplicates']} duplicate "
                  f"turns, {result['lost']} lost tasks ({result['answers_repeated']} answers sent again by a turn "
                  "killed after its peer_send)")
            print(f"  goal: 0 duplicate turns and 0 lost tasks: {'MET' if goal else 'MISSED'}")
    print(f"  load average at the end: {os.getloadavg()[0]:.2f}")
    return ok
