"""What the parent-death launcher (mnemara/claude/child_guard.py, issue 13 item 10) adds to a CLI start.

Run: python bench/bench_cli_guard.py [--rounds 5]

Starts the real Claude CLI through ``ClaudeSDKClient.connect()`` (the step every
turn without a warm spare waits for) against the scripted API on 127.0.0.1, with
and without the launcher, alternating the two in each round so both see the same
machine load. Prints the medians and the ratio guarded / direct.

Goal: the launcher adds at most 25% to a CLI start (ratio <= 1.25). Exits 1 when
the goal is missed, 2 when the measurement is invalid (a start failed, or the
launcher is not available on this platform).
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

from mnemara.claude.child_guard import guard_env, guarded_cli_path  # noqa: E402
from mnemara.testing.scripted_api import ScriptedAPI  # noqa: E402

GOAL = 1.25


async def one_start(cli_path: str | None) -> float:
    from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient

    options = ClaudeAgentOptions(system_prompt="bench", tools=[], setting_sources=[], cli_path=cli_path,
                                 env=guard_env(), extra_args={"no-session-persistence": None})
    client = ClaudeSDKClient(options)
    start = time.perf_counter()
    await client.connect()
    took = time.perf_counter() - start
    await client.disconnect()
    return took


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    guarded = guarded_cli_path()
    if guarded is None:
        print("invalid: the launcher is not available here (Linux only)")
        return 2
    with ScriptedAPI() as api, tempfile.TemporaryDirectory() as home:
        os.environ.update(api.env())
        os.environ["HOME"] = home
        direct_times, guarded_times = [], []
        try:
            for _ in range(args.rounds):
                direct_times.append(asyncio.run(one_start(None)))
                guarded_times.append(asyncio.run(one_start(guarded)))
        except Exception as exc:  # noqa: BLE001 - any failed start makes the run invalid
            print(f"invalid: a CLI start failed: {exc}")
            return 2
    direct, guard = statistics.median(direct_times), statistics.median(guarded_times)
    ratio = guard / direct
    print(f"goal: guarded / direct CLI start <= {GOAL}")
    print(f"direct  median {direct:.3f} s  {[round(t, 3) for t in direct_times]}")
    print(f"guarded median {guard:.3f} s  {[round(t, 3) for t in guarded_times]}")
    print(f"ratio {ratio:.3f} ({'meets' if ratio <= GOAL else 'MISSES'} the goal)")
    return 0 if ratio <= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
