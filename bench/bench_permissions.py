"""Permission gate benchmark (issue 4): what one ``decide()`` costs per tool call.

Run: python bench/bench_permissions.py [--calls 20000]
Baseline: a bare dict lookup of the tool's mode (the cheapest gate imaginable),
measured in the same run.

Issue 25 adds the command-aware Bash matcher: one ~500-character compound command (eight
commands joined by ``&&``, ``|`` and ``;``) parsed and matched without the parse cache.
Goal: <= 300 us per call. Its baseline is the old whole-line regex search on the same line.
A line with ``$(...)`` or a redirection takes the full parser (bashlex); that cost is printed too.

It also measures the ``graph_query`` guard: the statement check (``check_cypher`` with its range
cap) and the bounded run (the store releases the file, a child process runs the statement under
a time limit and a memory cap, the store reopens the file on its next call), against the same
query on an open in-process Kuzu connection (the old path). Goal: the guard adds at most 1 s
per graph_query (an agent tool call costs seconds of model time anyway).
Exit status 1 when a goal is missed. Prints ns per call and the ratio decide()/baseline per
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
from mnemara.guard.bash_patterns import match_parsed, parse_uncached  # noqa: E402
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


BASH_GOAL_S = 300e-6
_PARTS = ["git status --short", "ls -la src/mnemara/guard", "grep -rn 'def match_bash' mnemara/guard/bash_patterns.py",
          "wc -l README.md", "cat pyproject.toml | head -n 40", "git diff --stat main", "ls -la tests/guard"]
_BASH_PATTERNS = [r"^git (status|diff)( [-\w./]+)*$", r"^ls( [-\w./]+)*$", r"^grep( [-'\w./ ]+)*$", r"^wc( [-\w./]+)*$",
                  r"^cat [-\w./]+$", r"^head( [-\w./]+)*$"]


def compound_command(length: int = 500) -> str:
    """About ``length`` characters of plain commands joined by list operators."""
    ops = [" && ", "; ", " && "]
    line, i = _PARTS[0], 1
    while True:
        fitting = [part for part in _PARTS[i % len(_PARTS):] + _PARTS if len(line) + len(part) + 4 <= length]
        if not fitting:
            return line
        line += ops[i % len(ops)] + fitting[0]
        i += 1


def bench_bash_matcher(calls: int) -> bool:
    """The parsed-Bash matcher on a ~500-character compound line; True when it meets the goal."""
    import re

    patterns = [re.compile(p) for p in _BASH_PATTERNS]
    line = compound_command()
    assert match_parsed(parse_uncached(line), line, patterns).allowed, "the bench line must be allowed"
    full = line.replace("wc -l README.md", "wc -l $(ls README.md)", 1)
    baseline = per_call(lambda: any(p.search(line) for p in patterns), calls)
    cost = per_call(lambda: match_parsed(parse_uncached(line), line, patterns), max(calls // 20, 50))
    full_cost = per_call(lambda: match_parsed(parse_uncached(full), full, patterns), max(calls // 400, 5), repeats=3)
    ok = cost <= BASH_GOAL_S
    print(f"\nparsed-Bash matcher, {len(line)}-char line of {len(parse_uncached(line).commands)} "
          f"commands, no cache (goal <= {BASH_GOAL_S * 1e6:.0f} us/call)")
    print(f"  whole-line regex search (old matcher, baseline) {baseline * 1e6:9.1f} us/call")
    print(f"  command-aware match                             {cost * 1e6:9.1f} us/call  "
          f"{cost / baseline:6.0f} x baseline  {'OK' if ok else 'MISSED'}")
    print(f"  same line with $(...) (full parser, bashlex)     {full_cost * 1e6:9.1f} us/call  "
          f"{full_cost / baseline:6.0f} x baseline (no goal: such lines are rare and asked unless named)")
    return ok


GRAPH_GOAL_S = 1.0


def bench_graph_guard(home: Path) -> bool:
    """The graph_query guard's overhead; True when it meets the goal."""
    import kuzu

    from mnemara.memory.graph.cypher_guard import check_cypher
    from mnemara.memory.graph.store import Graph

    graph = Graph(home / "bench-graph")
    for i in range(50):
        graph.add_node("Thing", {"i": i}, f"thing:{i}")
    graph.close()
    query = "MATCH (n:Node) WHERE n.label = $label RETURN n.id, n.properties LIMIT 20"
    check = per_call(lambda: check_cypher(query), 2000)
    db = kuzu.Database(str(graph.path), read_only=True)
    conn = kuzu.Connection(db)
    direct = per_call(lambda: conn.execute(query, {"label": "Thing"}).get_all(), 50, repeats=3)
    conn.close()
    db.close()
    guarded = per_call(lambda: graph.query(query, {"label": "Thing"}), 3, repeats=3)
    graph.close()
    overhead = guarded - direct
    ok = overhead <= GRAPH_GOAL_S
    print(f"\ngraph_query guard (goal: adds <= {GRAPH_GOAL_S:g} s per query)")
    print(f"  in-process query on an open connection (baseline) {direct * 1e3:9.2f} ms/query")
    print(f"  check_cypher (allowlist scan + range cap)          {check * 1e3:9.3f} ms/query")
    print(f"  bounded run (release file, child, limits)          {guarded * 1e3:9.2f} ms/query  "
          f"{guarded / direct:6.0f} x baseline  adds {overhead * 1e3:.0f} ms  {'OK' if ok else 'MISSED'}")
    return ok


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
        ok = bench_bash_matcher(args.calls)
        ok = bench_graph_guard(home) and ok
        print(f"load average: {os.getloadavg()[0]:.2f}")
    if not ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
