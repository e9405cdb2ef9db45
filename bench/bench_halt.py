"""Issue 36: a halt stops spending, a cap is never overshot by more than one response, and the gate is cheap.

Run: python bench/bench_halt.py [--runs N] [--no-check]

Through the real Claude CLI (a real AgentSession, the SDK, the loopback recorder) against the
scripted Messages API on 127.0.0.1, in one run:

* **requests after a halt** (goal: 0): turns that the runtime sentinel halts (an identical
  poll; the same failing command) and turns a spend cap ends. Every request the scripted API
  receives after the halt is counted, including for 2 s after the turn ended (what a CLI
  shutting down politely would still send). Baseline in the same run: the same sentinel turn
  with the recorder's gate taken away (``gate=None``), as before issue 36;
* **cap overshoot** (goal: never more than one response past a cap): per-turn, per-session and
  per-day caps against calls of different prices; from the ledger, the responses that ended
  with the spend past the cap, and the requests that started past it (goal 0);
* **the gate's overhead per request** (first byte of a streamed answer, through the recorder with
  the gate, every cap on so each request reads the ledger, against the same recorder without a
  gate, interleaved, median of many). Goal: <= 1 ms added per request.

Exits 1 when a goal is missed or a measurement is invalid (what missed is printed last).
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

OVERHEAD_GOAL_MS = 1.0
SETTLE_SECONDS = 2.0
#: usage overriding the scripted cache emulation so each call's price is exact: $0.30 + output on Sonnet
PLAIN = {"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
         "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0}}


def _home() -> None:
    home = tempfile.mkdtemp(prefix="bench-halt-")
    os.environ.update(HOME=home, MNEMARA_HOME=str(Path(home) / ".mnemara"), MNEMARA_WARM_SPARE="0")


def _session(api, name: str, **config):
    from mnemara.core.config import update_config
    from mnemara.session.agent import AgentSession
    from mnemara.store.instance import Instance

    inst = Instance.create(name)
    update_config(inst.config_path, allowed_tools=[{"tool": "Bash", "mode": "allow"}], **config)
    return AgentSession(inst)


def _after_halt(api, session, text: str, unguarded: bool = False) -> tuple[int | None, str]:
    """Requests reaching the API after the turn's halt (None: no halt), and what halted it."""
    from mnemara.core import events as ev

    if unguarded:  # as before issue 36: the CLI straight to the API (no gate), and not killed at the halt
        session.launcher.env_overrides.clear()
        session._record_requests = lambda config: None
        session._halt_spending = lambda turn: None
    at_halt: list[tuple[int, str]] = []

    def seen(event: ev.Event) -> None:
        if isinstance(event, ev.Halt) and not at_halt:
            at_halt.append((len(api.message_requests()), event.source))

    session.turn(text, on_event=seen)
    time.sleep(SETTLE_SECONDS)
    if not at_halt:
        return None, ""
    return len(api.message_requests()) - at_halt[0][0], at_halt[0][1]


def halts(runs: int) -> tuple[list[str], list[str]]:
    from mnemara.testing.scripted_api import ScriptedAPI, reply, tool_use

    lines, missed = [], []
    scenarios = [
        ("sentinel: identical poll", {"runtime_sentinel": True},
         lambda i: reply(tool_use("Bash", {"command": "echo same"}))),
        ("sentinel: same failing command", {"runtime_sentinel": True},
         lambda i: reply(tool_use("Bash", {"command": f"ls /no/such/dir{i}"}))),
        ("cap: budget_usd_per_turn 0.5", {"budget_usd_per_turn": 0.5},
         lambda i: reply(tool_use("Bash", {"command": f"echo {i}"}),
                         usage={"input_tokens": 100_000, "output_tokens": 10, **PLAIN})),
    ]
    for label, config, make in scenarios:
        counts = []
        for run in range(runs):
            api = ScriptedAPI(default=make(0)).start()
            os.environ.update(api.env())
            api.push(*[make(i) for i in range(20)])
            session = _session(api, f"halt{abs(hash(label)) % 10_000}-{run}", **config)
            try:
                after, source = _after_halt(api, session, "go on")
            finally:
                session.close()
                api.stop()
            if after is None:
                missed.append(f"{label}: no halt (invalid measurement)")
                continue
            counts.append(after)
        lines.append(f"{label:<34} requests after the halt: {counts}  (goal: 0 each)")
        if any(counts):
            missed.append(f"{label}: {max(counts)} request(s) after a halt")
    # the baseline: the identical poll, the CLI talking to the API directly (no gate), as before issue 36
    api = ScriptedAPI(default=reply(tool_use("Bash", {"command": "echo same"}))).start()
    os.environ.update(api.env())
    session = _session(api, "halt-baseline", runtime_sentinel=True)
    try:
        after, _ = _after_halt(api, session, "go on", unguarded=True)
    finally:
        session.close()
        api.stop()
    lines.append(f"{'baseline: no gate (before #36)':<34} requests after the halt: {after}")
    return lines, missed


def overshoot() -> tuple[list[str], list[str]]:
    """Caps against calls of different prices; counts from the ledger."""
    from mnemara.store.spend_ledger import SpendLedger
    from mnemara.testing.scripted_api import ScriptedAPI, reply, tool_use

    lines, missed = [], []
    cases = [("turn", 0.5, 100_000), ("turn", 0.25, 30_000), ("session", 1.0, 150_000), ("day", 0.8, 70_000)]
    for scope, cap, tokens in cases:
        api = ScriptedAPI().start()
        os.environ.update(api.env())
        usage = {"input_tokens": tokens, "output_tokens": 10, **PLAIN}
        api.push(*[reply(tool_use("Bash", {"command": f"echo {i}"}), usage=usage) for i in range(40)])
        session = _session(api, f"over-{scope}-{tokens}", **{f"budget_usd_per_{scope}": cap})
        try:
            session.turn("spend")
            if scope != "turn":
                session.turn("spend more")  # a session or day cap also holds across turns
            ledger = SpendLedger(session.instance.root)
            rows = ledger._conn().execute("SELECT cost_usd FROM calls ORDER BY id").fetchall()
        finally:
            session.close()
            api.stop()
        spent, past, started_past = 0.0, 0, 0
        for (cost,) in rows:
            if spent >= cap:
                started_past += 1
            spent += cost or 0.0
            if spent > cap:
                past += 1
        lines.append(f"budget_usd_per_{scope} ${cap:<5} calls ${usage['input_tokens'] * 3 / 1e6:.3f}: "
                     f"{len(rows)} calls, ${spent:.4f} spent, {past} response(s) past the cap, "
                     f"{started_past} started past it  (goal: <= 1 past, 0 started past)")
        if not rows:
            missed.append(f"{scope} cap: no calls recorded (invalid measurement)")
        elif past > 1 or started_past:
            missed.append(f"{scope} cap overshot: {past} responses past, {started_past} started past")
    return lines, missed


def overhead(samples: int) -> tuple[list[str], list[str]]:
    """First byte through the recorder with the gate (every cap on) against the same recorder without it."""
    from mnemara.claude.recorder import RequestRecorder
    from mnemara.core.config import update_config
    from mnemara.core.live_config import LiveConfig
    from mnemara.session.spend import SessionSpend
    from mnemara.store.instance import Instance
    from mnemara.store.request_log import RequestLog
    from mnemara.testing.scripted_api import ScriptedAPI, reply

    api = ScriptedAPI(default=reply("ok")).start()
    inst = Instance.create("overhead")
    update_config(inst.config_path, budget_usd_per_turn=1e6, budget_usd_per_session=1e6, budget_usd_per_day=1e6)
    live = LiveConfig(inst.config_path, lambda cfg: None)
    spend = SessionSpend(inst.root, live, lambda: None, lambda: None)
    spend.gate.begin_turn()
    recorder = RequestRecorder(RequestLog(inst.root, 50), api.base_url).start()
    url = urlsplit(recorder.cli_env()["ANTHROPIC_BASE_URL"])
    body = json.dumps({"model": "claude-sonnet-4-6", "max_tokens": 10, "stream": True,
                       "messages": [{"role": "user", "content": "hi"}]}).encode()
    conn = http.client.HTTPConnection(url.hostname, url.port)

    def first_byte() -> float:
        start = time.perf_counter()
        conn.request("POST", url.path + "/v1/messages", body=body, headers={"content-type": "application/json"})
        response = conn.getresponse()
        response.read(1)
        elapsed = time.perf_counter() - start
        response.read()
        return elapsed

    with_gate, without = [], []
    try:
        for _ in range(20):  # warm both paths
            recorder.gate = spend.gate
            first_byte()
            recorder.gate = None
            first_byte()
        for i in range(samples):
            for gated in ((True, False) if i % 2 else (False, True)):
                recorder.gate = spend.gate if gated else None
                (with_gate if gated else without).append(first_byte())
    finally:
        conn.close()
        recorder.stop()
        api.stop()
    counted = spend.ledger.totals().calls
    a, b = statistics.median(with_gate) * 1000, statistics.median(without) * 1000
    extra = a - b
    lines = [f"first byte, median of {samples}: with the gate {a:.3f} ms, without {b:.3f} ms, "
             f"ratio {a / max(b, 1e-9):.2f}x, {extra:+.3f} ms per request  (goal: <= {OVERHEAD_GOAL_MS} ms added)",
             f"calls the gate counted in the ledger: {counted}"]
    missed = []
    if counted < samples or a <= 0 or b <= 0:
        missed.append("overhead: invalid measurement (the gate did not see every request)")
    elif extra > OVERHEAD_GOAL_MS:
        missed.append(f"overhead: {extra:.3f} ms per request")
    return lines, missed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=2, help="real-CLI turns per halt scenario (default 2)")
    parser.add_argument("--samples", type=int, default=300, help="requests per side for the overhead (default 300)")
    parser.add_argument("--no-check", action="store_true", help="report only; exit 0 whatever the figures")
    args = parser.parse_args()
    if args.runs < 1 or args.samples < 10:
        parser.error("--runs must be at least 1 and --samples at least 10")
    _home()
    os.environ.setdefault("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
    print(f"goals: 0 requests after a halt; never more than one response past a cap (none started past it); "
          f"the gate adds <= {OVERHEAD_GOAL_MS} ms to a request's first byte")
    missed: list[str] = []
    for title, part in (("requests after a halt (real CLI, scripted API)", lambda: halts(args.runs)),
                        ("cap overshoot (real CLI, scripted API)", overshoot),
                        ("the gate's overhead per request", lambda: overhead(args.samples))):
        print(f"\n== {title} ==", flush=True)
        lines, miss = part()
        print("\n".join(lines), flush=True)
        missed += miss
    if missed:
        print("\nMISSED: " + "; ".join(missed))
        return 0 if args.no_check else 1
    print("\nall goals met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
