"""Per-turn overhead of Mnemara against a bare claude_agent_sdk.query() (issue 3).

Run: python bench/bench_turn_overhead.py [--turns 12] [--think 1.0]

Both sides talk to the same scripted Messages API on 127.0.0.1 (mnemara.testing),
with the same role doc as system prompt, the same built-in tools and the same
prompt and answer. For each turn it measures the wall time from "send" to the
end of the turn and from "send" to the request reaching the server, and prints
the medians and the Mnemara / bare-SDK ratios.

Mnemara is measured three ways:
  warm+think : the normal session (a spare CLI is started after each turn), with
               --think seconds between turns, as a person reading and typing would;
  warm       : the same with no pause between turns (spare may still be booting);
  cold       : warm_spare=False, a fresh CLI per turn exactly like query().
The bare SDK gets the same pause (it cannot use it). Pauses are never timed.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mnemara.testing import ScriptedAPI, reply  # noqa: E402

ROLE = "You are a benchmark agent. Answer briefly.\n" * 20
PROMPT = "Summarise the lease timeout rules in one line."
ANSWER = "Leases time out after thirty seconds unless renewed by the holder."


def bare_sdk(api: ScriptedAPI, turns: int, think: float, cwd: str) -> tuple[list[float], list[float]]:
    from claude_agent_sdk import ClaudeAgentOptions, query

    async def one() -> tuple[float, float]:
        options = ClaudeAgentOptions(system_prompt=ROLE, tools=["Bash", "Read", "Write", "Edit"], setting_sources=[],
                                     model="claude-sonnet-4-6", cwd=cwd, include_partial_messages=True)
        before = len(api.message_requests())
        start = time.perf_counter()
        wall0 = time.time()
        async for _ in query(prompt=PROMPT, options=options):
            pass
        total = time.perf_counter() - start
        arrived = api.message_requests()[before].at - wall0
        return total, arrived

    totals, arrivals = [], []
    for _ in range(turns):
        total, arrived = asyncio.run(one())
        totals.append(total)
        arrivals.append(arrived)
        time.sleep(think)
    return totals, arrivals


def mnemara_turns(api: ScriptedAPI, turns: int, think: float, warm: bool, name: str, cwd: str) -> tuple[list[float], list[float]]:
    from mnemara.config import update_config
    from mnemara.instance import Instance
    from mnemara.session import AgentSession

    inst = Instance.create(name)
    role = inst.root / "role.md"
    role.write_text(ROLE, encoding="utf-8")
    update_config(inst.config_path, role_doc_path=str(role))
    totals, arrivals = [], []
    with AgentSession(inst, warm_spare=warm, cwd=cwd) as session:
        session.turn("warm-up")  # the first turn of a session always starts a CLI
        time.sleep(think)
        for _ in range(turns):
            before = len(api.message_requests())
            start = time.perf_counter()
            wall0 = time.time()
            result = session.turn(PROMPT)
            totals.append(time.perf_counter() - start)
            if not result.ok:
                raise SystemExit(f"mnemara turn failed: {result.errors}")
            arrivals.append(api.message_requests()[before].at - wall0)
            time.sleep(think)
    return totals, arrivals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=12)
    parser.add_argument("--think", type=float, default=1.0, help="seconds between turns (not timed)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["HOME"] = tmp
        os.environ["MNEMARA_HOME"] = str(Path(tmp) / ".mnemara")
        with ScriptedAPI(default=reply(ANSWER)) as api:
            os.environ.update(api.env())
            runs = {
                "bare query()": bare_sdk(api, args.turns, args.think, tmp),
                "mnemara warm+think": mnemara_turns(api, args.turns, args.think, True, "b-warm-think", tmp),
                "mnemara warm": mnemara_turns(api, args.turns, 0.0, True, "b-warm", tmp),
                "mnemara cold": mnemara_turns(api, args.turns, args.think, False, "b-cold", tmp),
            }
    base_total = statistics.median(runs["bare query()"][0])
    base_arrive = statistics.median(runs["bare query()"][1])
    print(f"turns per run: {args.turns}, think time: {args.think}s, cpus: {os.cpu_count()}")
    print(f"{'run':<20} {'median turn':>12} {'ratio':>7} {'send->request':>14} {'ratio':>7}")
    for label, (totals, arrivals) in runs.items():
        total, arrive = statistics.median(totals), statistics.median(arrivals)
        print(f"{label:<20} {total * 1000:>10.0f}ms {total / base_total:>7.2f} {arrive * 1000:>12.0f}ms {arrive / base_arrive:>7.2f}")


if __name__ == "__main__":
    main()
