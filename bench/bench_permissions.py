"""Permission gate benchmark (issue 4): what one ``decide()`` costs per tool call.

Run: python bench/bench_permissions.py [--calls 20000]
Baseline: a bare dict lookup of the tool's mode (the cheapest gate imaginable),
measured in the same run. Prints ns per call and the ratio decide()/baseline per
scenario, and the sentinel's observe() for comparison. The machine is shared and
noisy: compare ratios, not absolute times. For scale, a tool call through the
CLI costs milliseconds, so anything in microseconds is invisible to a user.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mnemara.core.config import Config, ToolPolicy  # noqa: E402
from mnemara.store.instance import Instance  # noqa: E402
from mnemara.guard.gate import PermissionGate  # noqa: E402
from mnemara.guard.sentinel import RuntimeSentinel  # noqa: E402


def per_call(fn, calls: int, repeats: int = 5) -> float:
    """Median seconds per call of ``fn()`` over ``repeats`` runs of ``calls`` calls."""
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        samples.append((time.perf_counter() - t0) / calls)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--patterns", type=int, default=50, help="persisted Bash patterns in permissions.json")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        os.environ["HOME"] = str(home)
        os.environ["MNEMARA_HOME"] = str(home / ".mnemara")
        inst = Instance.create("bench")
        patterns = [r"\A" + f"make target{i}" + r"\Z" for i in range(args.patterns)]
        inst.permissions_path.write_text(json.dumps({"allowed_patterns": {"Bash": patterns}}))
        cfg = Config(allowed_tools=[
            ToolPolicy(tool="Bash", mode="ask", allowed_patterns=["^git status$", "^ls( |$)"]),
            ToolPolicy(tool="Read", mode="allow"),
            ToolPolicy(tool="Write", mode="ask"),
            ToolPolicy(tool="Edit", mode="ask"),
            ToolPolicy(tool="WriteMemory", mode="allow"),
        ])
        gate = PermissionGate(cfg, inst)
        modes = {p.tool: p.mode for p in cfg.allowed_tools}

        baseline = per_call(lambda: modes.get("Bash", "ask"), args.calls)
        inside = str(home / "project" / "src" / "main.py")
        scenarios = {
            "Bash, no pattern matches (-> ask)": ("Bash", {"command": "cargo build --release"}),
            "Bash, last persisted pattern matches": ("Bash", {"command": f"make target{args.patterns - 1}"}),
            "Read inside $HOME (home-only guard)": ("Read", {"file_path": inside}),
            "Read outside $HOME (refused + logged)": ("Read", {"file_path": "/etc/passwd"}),
            "Write inside $HOME (+ guarded-file check)": ("Write", {"file_path": inside, "content": "x"}),
            "in-process mcp__mnemara__write_memory": ("mcp__mnemara__write_memory", {"text": "note"}),
        }
        print(f"baseline dict lookup: {baseline * 1e9:8.0f} ns/call")
        print(f"{'scenario':42} {'ns/call':>10} {'x baseline':>11}")
        for label, (tool, tool_input) in scenarios.items():
            cost = per_call(lambda: gate.decide(tool, tool_input), args.calls // 4 if "outside" in label else args.calls)
            print(f"{label:42} {cost * 1e9:10.0f} {cost / baseline:11.0f}")
        sentinel = RuntimeSentinel()
        call = {"command": "npm run build", "timeout": 60}
        tools = ["Bash", "Read", "Edit"]
        i = iter(range(10**9))
        cost = per_call(lambda: sentinel.observe(tools[next(i) % 3], call), args.calls)
        print(f"{'sentinel observe()':42} {cost * 1e9:10.0f} {cost / baseline:11.0f}")


if __name__ == "__main__":
    main()
