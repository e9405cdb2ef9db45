"""Write the labelled tool-call traces that bench/bench_runaway.py runs through the sentinel.

Run: python bench/make_runaway_traces.py   (writes bench/data/runaway_dev.json and runaway_blind.json)

Each trace is what an agent did in one or more turns: the tool calls (name, input) in order,
each with the output a real tool gave. Bash commands run for real with bash in a scratch
project (curl talks to a loopback HTTP server started here; ``sleep`` is the one shim, so a
``sleep 20`` poll does not take 20 s: it prints nothing either way). Read, Edit and Write act
on the real files and answer in the bundled CLI's shapes (numbered lines; the CLI's own
rejection of an Edit whose ``old_string`` is not in the file, which no hook sees: marked
``rejected``). Labels were written with the traces, before any tuning of the sentinel:
``label`` is ``runaway`` or ``productive``; a runaway's ``loop_at`` is the index (0-based,
counted over all its calls) of the call where a person would call it a loop. The blind set is
written at the same time with other commands and numbers, and is never used for tuning.

Trace file shape: ``{"set": "dev", "traces": [{"name", "category", "label", "loop_at",
"turns": [[{"tool", "input", "output", "is_error", "rejected"}, ...], ...]}]}``.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

DATA = Path(__file__).resolve().parent / "data"
PROJECT = "/home/dev/project"  # the scratch folder's path as the traces show it


class _Api(BaseHTTPRequestHandler):
    """A loopback service that polls never see finish: /health is always starting."""

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        url = urlparse(self.path)
        query = parse_qs(url.query)
        if url.path == "/health":
            body, code = '{"status":"starting","ready":false}', 200
        elif url.path == "/jobs/7":
            body, code = '{"id":7,"state":"queued","position":3}', 200
        elif url.path == "/items":
            page = int(query.get("page", ["1"])[0])
            names = ["anchor", "bolt", "clamp", "dowel", "eyelet", "flange", "gasket", "hinge", "joist",
                     "knob", "latch", "mortise", "nut", "oakum", "peg", "quoin", "rivet", "shim"]
            rows = [{"id": (page - 1) * 3 + i + 1, "name": names[((page - 1) * 3 + i) % len(names)]} for i in range(3)]
            body, code = json.dumps({"page": page, "items": rows}), 200
        else:
            body, code = '{"error":"not found"}', 404
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *args: object) -> None:
        return


class Project:
    """A scratch project whose tools answer like the CLI's: the calls of one trace, in turns."""

    def __init__(self, root: Path, port: int) -> None:
        self.root, self.port = root, port
        self.turns: list[list[dict[str, Any]]] = [[]]
        shim = root.parent / "shim"
        shim.mkdir(exist_ok=True)
        (shim / "sleep").write_text("#!/bin/sh\nexit 0\n")
        (shim / "sleep").chmod(0o755)
        self.env = {**os.environ, "PATH": f"{shim}:{os.environ['PATH']}", "HOME": str(root.parent),
                    "GIT_AUTHOR_NAME": "dev", "GIT_AUTHOR_EMAIL": "dev@example.invalid",
                    "GIT_COMMITTER_NAME": "dev", "GIT_COMMITTER_EMAIL": "dev@example.invalid",
                    "GIT_CEILING_DIRECTORIES": str(root.parent), "LC_ALL": "C"}

    # -- files set up before the trace (not tool calls) --
    def file(self, rel: str, text: str) -> None:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    def new_turn(self) -> None:
        self.turns.append([])

    def _add(self, tool: str, tool_input: dict[str, Any], output: str, is_error: bool = False,
             rejected: bool = False) -> None:
        self.turns[-1].append({"tool": tool, "input": tool_input, "output": output, "is_error": is_error,
                               "rejected": rejected})

    def _abs(self, rel: str) -> str:
        return f"{PROJECT}/{rel}"

    # -- tools --
    def bash(self, command: str, **extra: Any) -> None:
        real = command.replace("$PORT", str(self.port))
        shown = command.replace("$PORT", "8765")
        done = subprocess.run(["bash", "-c", real], cwd=self.root, env=self.env, capture_output=True, text=True,
                              timeout=60)
        out = (done.stdout + done.stderr).rstrip("\n").replace(str(self.root), PROJECT)
        out = out.replace(str(self.port), "8765")
        if done.returncode != 0:
            self._add("Bash", {"command": shown, **extra}, f"Exit code {done.returncode}\n{out}".rstrip(), True)
        else:
            self._add("Bash", {"command": shown, **extra}, out)

    def read(self, rel: str, offset: int | None = None, limit: int | None = None) -> None:
        tool_input: dict[str, Any] = {"file_path": self._abs(rel)}
        if offset is not None:
            tool_input["offset"] = offset
        if limit is not None:
            tool_input["limit"] = limit
        path = self.root / rel
        if not path.exists():
            self._add("Read", tool_input, "<tool_use_error>File does not exist.</tool_use_error>", True)
            return
        lines = path.read_text().splitlines()
        start = max(1, offset or 1)
        end = len(lines) if limit is None else min(len(lines), start - 1 + limit)
        if start > len(lines):
            self._add("Read", tool_input, f"<system-reminder>Warning: the file exists but is shorter than the "
                                          f"provided offset ({start}). The file has {len(lines)} lines.</system-reminder>")
            return
        self._add("Read", tool_input, "\n".join(f"{n:>6}\u2192{lines[n - 1]}" for n in range(start, end + 1)))

    def edit(self, rel: str, old: str, new: str) -> None:
        tool_input = {"file_path": self._abs(rel), "old_string": old, "new_string": new}
        path = self.root / rel
        text = path.read_text()
        if old not in text:  # the CLI refuses it itself, before any hook runs
            self._add("Edit", tool_input, f"<tool_use_error>String to replace not found in file.\nString: {old}"
                                          "</tool_use_error>", True, rejected=True)
            return
        text = text.replace(old, new, 1)
        path.write_text(text)
        lines = text.splitlines()
        at = text[:text.index(new)].count("\n") + 1 if new else 1
        snippet = "\n".join(f"{n:>6}\u2192{lines[n - 1]}" for n in range(max(1, at - 2), min(len(lines), at + 2) + 1))
        self._add("Edit", tool_input, f"The file {self._abs(rel)} has been updated. Here's the result of running "
                                      f"`cat -n` on a snippet of the edited file:\n{snippet}")

    def write(self, rel: str, text: str) -> None:
        path = self.root / rel
        existed = path.exists()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        verb = "updated" if existed else "created"
        self._add("Write", {"file_path": self._abs(rel), "content": text},
                  f"File {verb} successfully at: {self._abs(rel)}")


TraceFn = Callable[[Project], None]


def run_trace(fn: TraceFn, port: int) -> list[list[dict[str, Any]]]:
    with tempfile.TemporaryDirectory(prefix="runaway-") as tmp:
        root = Path(tmp) / "project"
        root.mkdir()
        project = Project(root, port)
        fn(project)
        return [turn for turn in project.turns if turn]


# ---------------------------------------------------------------------------------------------
# shared scratch files

CALC = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a + b\n"
CALC_TEST = ("import unittest\nfrom calc import add, mul\n\n\nclass T(unittest.TestCase):\n"
             "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\n"
             "    def test_mul(self):\n        self.assertEqual(mul(2, 3), 6)\n\n\n"
             "if __name__ == '__main__':\n    unittest.main()\n")
MIGRATE = ("import json, pathlib, sys\n"
           "state = pathlib.Path('migrate_state.json')\n"
           "done = json.loads(state.read_text())['done'] if state.exists() else 0\n"
           "total, batch = 400, int(sys.argv[sys.argv.index('--batch') + 1])\n"
           "end = min(total, done + batch)\n"
           "state.write_text(json.dumps({'done': end}))\n"
           "print(f'migrated rows {done + 1}-{end} of {total}; {total - end} remaining')\n")
BUILD_LOG = "".join(f"[build] step {i:02d}: compiling module_{i}.c\n" for i in range(1, 57))


def big_module() -> str:
    return "".join(f"def handler_{i}(request):\n    return {{'route': '/r/{i}', 'ok': True}}\n\n" for i in range(300))


# ---------------------------------------------------------------------------------------------
# the dev set

def dev_traces() -> list[tuple[str, str, str, int | None, TraceFn]]:
    out: list[tuple[str, str, str, int | None, TraceFn]] = []

    def runaway(name: str, category: str, loop_at: int) -> Callable[[TraceFn], TraceFn]:
        def wrap(fn: TraceFn) -> TraceFn:
            out.append((name, category, "runaway", loop_at, fn))
            return fn
        return wrap

    def productive(name: str, category: str) -> Callable[[TraceFn], TraceFn]:
        def wrap(fn: TraceFn) -> TraceFn:
            out.append((name, category, "productive", None, fn))
            return fn
        return wrap

    @runaway("curl_health_counter", "poll_counter", 2)
    def _(p: Project) -> None:
        for t in range(1, 9):
            p.bash(f"curl -s 'http://127.0.0.1:$PORT/health?t={t}'", description="Check whether the server is up")

    @runaway("echo_check_counter", "poll_counter", 2)
    def _(p: Project) -> None:
        p.file("status.txt", "pending\n")
        for n in range(1, 9):
            p.bash(f"sleep 0.1; echo check {n}; cat status.txt")

    @runaway("sleep_length_grows", "poll_sleep", 2)
    def _(p: Project) -> None:
        p.file("status", "deploy: in progress\n")
        for s in (5, 10, 20, 30, 45, 60, 90):
            p.bash(f"sleep {s} && cat status", timeout=(s + 10) * 1000)

    @runaway("status_since_timestamp", "poll_timestamp", 2)
    def _(p: Project) -> None:
        for minute in range(10, 18):
            p.bash(f"curl -s 'http://127.0.0.1:$PORT/jobs/7?since=2026-12-01T21:{minute}:00Z'")

    @runaway("curl_flag_shuffle", "poll_flag", 2)
    def _(p: Project) -> None:
        for flags in ("-s", "-sS", "--silent", "-s -f", "-f -s", "-sf", "--silent --fail"):
            p.bash(f"curl {flags} http://127.0.0.1:$PORT/health")

    @runaway("tail_offset_creeps", "poll_offset", 2)
    def _(p: Project) -> None:
        p.file("build.log", BUILD_LOG)
        for start in (57, 57, 58, 59, 60, 61, 62):
            p.bash(f"tail -n +{start} build.log")

    @runaway("grep_k_grows", "poll_k", 2)
    def _(p: Project) -> None:
        p.file("build.log", BUILD_LOG)
        for k in (5, 10, 20, 50, 100, 200):
            p.bash(f"grep -m {k} 'error' build.log || echo 'no errors yet'")

    @runaway("python_missing_module_variations", "same_error", 2)
    def _(p: Project) -> None:
        p.file("run.py", "import yamlx\nprint('ok')\n")
        for cmd in ("python3 run.py", "python3 ./run.py", "python3 run.py --verbose", "cd . && python3 run.py",
                    "PYTHONPATH=. python3 run.py", "python3 -u run.py", "python3  run.py"):
            p.bash(cmd)

    @runaway("git_checkout_not_a_repo", "same_error", 2)
    def _(p: Project) -> None:
        for cmd in ("git checkout feature-x", "git checkout -q feature-x", "git  checkout feature-x",
                    "git checkout origin/feature-x", "git checkout -b feature-x", "git switch feature-x",
                    "git checkout feature-x --"):
            p.bash(cmd)

    @runaway("pgrep_flag_variants", "same_error", 2)
    def _(p: Project) -> None:
        for flags in ("-f", "-fl", "-af", "-f -a", "-a -f", "-fa", "-f -l"):
            p.bash(f"pgrep {flags} 'my-dev-server --port 8765'")

    @runaway("status_every_third_call", "spread_repeat", 6)
    def _(p: Project) -> None:
        p.file("status.txt", "migration: waiting for lock\n")
        p.file("logs/a.log", "a\n")
        p.file("build.log", BUILD_LOG)
        fillers = ["ls logs", "wc -l build.log", "head -3 build.log", "ls -la logs", "tail -2 build.log",
                   "cat logs/a.log", "du -sh logs", "grep -c step build.log", "ls", "head -1 build.log"]
        for i in range(5):
            p.bash("cat status.txt")
            p.bash(fillers[2 * i])
            p.bash(fillers[2 * i + 1])

    @runaway("five_step_cycle", "cycle", 10)
    def _(p: Project) -> None:
        for name in "abcde":
            p.file(f"svc/{name}.status", f"{name}: waiting\n")
        for _round in range(4):
            for name in "abcde":
                p.bash(f"cat svc/{name}.status")

    @runaway("six_step_cycle_mixed_tools", "cycle", 12)
    def _(p: Project) -> None:
        p.file("status.txt", "pending\n")
        p.file("build.log", BUILD_LOG)
        p.file("queue/job1", "queued\n")
        for _round in range(4):
            p.bash("curl -s http://127.0.0.1:$PORT/health")
            p.read("status.txt")
            p.bash("ls queue")
            p.bash("tail -1 build.log")
            p.read("queue/job1")
            p.bash("curl -s http://127.0.0.1:$PORT/jobs/7")

    @runaway("stale_edit_retried", "stale_edit", 4)
    def _(p: Project) -> None:
        p.file("calc.py", CALC)
        p.read("calc.py")
        p.edit("calc.py", "    return a - b", "    return a + b")
        for _ in range(6):
            p.edit("calc.py", "    return a - b", "    return a + b")

    @runaway("stale_edit_varied", "stale_edit", 3)
    def _(p: Project) -> None:
        p.file("calc.py", CALC)
        p.edit("calc.py", "    return a + b\n", "    return a * b\n")  # mul's body, fine
        for old in ("    return a + b\n", "    return a + b", "return a + b", "return a+b", "  return a + b",
                    "return a + b\n"):
            p.edit("calc.py", old, "return a * b")

    @runaway("no_progress_three_turns", "no_progress", 4)
    def _(p: Project) -> None:
        p.file("status.txt", "build 1432: queued\n")
        p.file("out/.keep", "")
        for turn in range(4):
            if turn:
                p.new_turn()
            p.bash("cat status.txt")
            p.bash("ls out")

    @runaway("no_progress_tests_each_turn", "no_progress", 6)
    def _(p: Project) -> None:
        p.file("calc.py", CALC)
        p.file("test_calc.py", CALC_TEST)
        for turn in range(4):
            if turn:
                p.new_turn()
            p.read("calc.py")
            p.bash("git diff --stat 2>/dev/null || echo 'no changes'")
            p.bash("python3 -m unittest -q test_calc 2>&1 | tail -3")

    @runaway("same_build_exact", "poll_exact", 2)
    def _(p: Project) -> None:
        p.file("build.sh", "#!/bin/sh\necho 'building...'\n")
        for _ in range(6):
            p.bash("sh build.sh")

    @runaway("wget_attempt_counter", "poll_counter", 2)
    def _(p: Project) -> None:
        for a in range(1, 8):
            p.bash(f"wget -qO- 'http://127.0.0.1:$PORT/health?attempt={a}'")

    @runaway("read_offset_polling", "poll_offset", 2)
    def _(p: Project) -> None:
        p.file("build.log", BUILD_LOG)
        for off in (57, 58, 57, 60, 58, 61):
            p.read("build.log", offset=off)

    # -- productive --
    @productive("edits_to_many_files", "many_edits")
    def _(p: Project) -> None:
        for i in range(8):
            p.file(f"pkg/mod{i}.py", f"VALUE_{i} = {i}\n\ndef get_{i}():\n    return VALUE_{i}\n")
        for i in range(8):
            p.read(f"pkg/mod{i}.py")
            p.edit(f"pkg/mod{i}.py", f"    return VALUE_{i}\n", f"    return VALUE_{i} * 2\n")

    @productive("page_big_file", "paging")
    def _(p: Project) -> None:
        p.file("handlers.py", big_module())
        for off in range(1, 901, 150):
            p.read("handlers.py", offset=off, limit=150)

    @productive("test_fix_test", "test_fix_test")
    def _(p: Project) -> None:
        p.file("calc.py", CALC)
        p.file("test_calc.py", CALC_TEST)
        p.bash("python3 -m unittest -q test_calc")
        p.read("calc.py")
        p.edit("calc.py", "    return a - b", "    return a + b")
        p.bash("python3 -m unittest -q test_calc")
        p.edit("calc.py", "def mul(a, b):\n    return a + b", "def mul(a, b):\n    return a * b")
        p.bash("python3 -m unittest -q test_calc")

    @productive("batch_migration_four_runs", "batch")
    def _(p: Project) -> None:
        p.file("migrate.py", MIGRATE)
        for _ in range(4):
            p.bash("python3 migrate.py --batch 100")

    @productive("reread_after_three_edits", "reread")
    def _(p: Project) -> None:
        p.file("config.ini", "[server]\nport = 80\nhost = a\nworkers = 1\n")
        p.read("config.ini")
        for old, new in (("port = 80", "port = 8080"), ("host = a", "host = 0.0.0.0"), ("workers = 1", "workers = 4")):
            p.edit("config.ini", old, new)
            p.read("config.ini")

    @productive("many_distinct_calls", "distinct")
    def _(p: Project) -> None:
        p.file("README.md", "# demo\n")
        p.file("src/app.py", "print('app')\n")
        p.file("src/util.py", "def f():\n    return 1\n")
        p.file("build.log", BUILD_LOG)
        for cmd in ("ls", "ls src", "cat README.md", "wc -l src/app.py", "python3 src/app.py", "grep -n def src/util.py",
                    "head -5 build.log", "tail -5 build.log", "du -sh src", "find . -name '*.py' | sort",
                    "python3 -c 'import sys; print(sys.version_info[0])'", "echo $((6*7))", "sort -r build.log | head -2",
                    "cut -c1-7 build.log | uniq -c", "grep -c compiling build.log", "ls -la src"):
            p.bash(cmd)
        p.read("src/util.py")
        p.read("README.md")

    @productive("poll_that_progresses", "progress_poll")
    def _(p: Project) -> None:
        for state in ("queued", "building 10%", "building 45%", "building 80%", "done"):
            p.file("status.txt", state + "\n")
            p.bash("sleep 10 && cat status.txt")

    @productive("git_workflow", "distinct")
    def _(p: Project) -> None:
        p.file("a.txt", "one\n")
        p.bash("git init -q && git add a.txt && git commit -qm first && git log --oneline | wc -l")
        p.edit("a.txt", "one", "two")
        p.bash("git diff --stat")
        p.bash("git commit -qam second && git log --oneline | wc -l")
        p.write("b.txt", "three\n")
        p.bash("git status --short")
        p.bash("git add b.txt && git commit -qm third && git log --oneline | wc -l")

    @productive("api_paging", "paging")
    def _(p: Project) -> None:
        for page in range(1, 7):
            p.bash(f"curl -s 'http://127.0.0.1:$PORT/items?page={page}'")

    @productive("tests_per_file", "distinct")
    def _(p: Project) -> None:
        for i in range(1, 6):
            p.file(f"test_{i}.py", f"import unittest\n\nclass T(unittest.TestCase):\n    def test_{i}(self):\n"
                                   f"        self.assertEqual({i} * {i}, {i * i})\n")
        for i in range(1, 6):
            p.bash(f"python3 -m unittest -q test_{i} 2>&1 | tail -1 && echo 'ran test_{i}'")

    @productive("edit_then_check_each_turn", "multi_turn")
    def _(p: Project) -> None:
        p.file("notes.md", "v0\n")
        p.file("status.txt", "ok\n")
        for turn in range(4):
            if turn:
                p.new_turn()
            p.edit("notes.md", f"v{turn}", f"v{turn + 1}")
            p.bash("cat status.txt")

    @productive("fix_failing_build_multi_turn", "multi_turn")
    def _(p: Project) -> None:
        p.file("calc.py", CALC)
        p.file("test_calc.py", CALC_TEST)
        p.bash("python3 -m unittest -q test_calc 2>&1 | tail -1")
        p.new_turn()
        p.edit("calc.py", "    return a - b", "    return a + b")
        p.bash("python3 -m unittest -q test_calc 2>&1 | tail -1")
        p.new_turn()
        p.edit("calc.py", "def mul(a, b):\n    return a + b", "def mul(a, b):\n    return a * b")
        p.bash("python3 -m unittest -q test_calc 2>&1 | tail -1")

    @productive("write_many_files", "many_edits")
    def _(p: Project) -> None:
        for i in range(12):
            p.write(f"docs/page{i}.md", f"# Page {i}\n\nBody {i}.\n")
        p.bash("ls docs | wc -l")

    @productive("long_distinct_session", "distinct")
    def _(p: Project) -> None:
        for i in range(40):
            p.file(f"src/m{i}.py", f"X = {i * 7}\n")
        for i in range(40):
            p.read(f"src/m{i}.py")
        p.bash("cat src/*.py | wc -l")

    return out


# ---------------------------------------------------------------------------------------------
# the blind set: the same kinds of work with other commands, numbers and shapes

def blind_traces() -> list[tuple[str, str, str, int | None, TraceFn]]:
    out: list[tuple[str, str, str, int | None, TraceFn]] = []

    def add(name: str, category: str, label: str, loop_at: int | None) -> Callable[[TraceFn], TraceFn]:
        def wrap(fn: TraceFn) -> TraceFn:
            out.append((name, category, label, loop_at, fn))
            return fn
        return wrap

    @add("python_urllib_retry_counter", "poll_counter", "runaway", 2)
    def _(p: Project) -> None:
        for r in range(1, 8):
            p.bash(f"python3 -c \"import urllib.request;print(urllib.request.urlopen("
                   f"'http://127.0.0.1:$PORT/health?retry={r}').read().decode())\"")

    @add("sleep_then_ls_growing", "poll_sleep", "runaway", 2)
    def _(p: Project) -> None:
        p.file("dist/.keep", "")
        for s in (2, 4, 8, 16, 32, 64):
            p.bash(f"sleep {s}; ls dist", description=f"Wait {s}s for the build output")

    @add("log_since_times", "poll_timestamp", "runaway", 2)
    def _(p: Project) -> None:
        p.file("app.log", "2026-12-01 20:59:58 INFO waiting for database\n")
        for sec in (5, 20, 35, 50, 59):
            p.bash(f"awk '$2 >= \"21:00:{sec:02d}\"' app.log | tail -5; echo 'checked at 21:00:{sec:02d}'")

    @add("ls_flag_order", "poll_flag", "runaway", 2)
    def _(p: Project) -> None:
        p.file("out/.keep", "")
        for flags in ("-la", "-al", "-l -a", "-a -l", "-lA", "-la"):
            p.bash(f"ls {flags} out | tail -n +2")

    @add("tail_bytes_offset", "poll_offset", "runaway", 2)
    def _(p: Project) -> None:
        p.file("server.log", "listening...\n")
        for off in (14, 14, 15, 16, 14, 17):
            p.bash(f"tail -c +{off} server.log; echo '[end]'")

    @add("head_k_grows", "poll_k", "runaway", 2)
    def _(p: Project) -> None:
        p.file("queue.txt", "job-17 pending\n")
        for k in (1, 3, 5, 10, 25):
            p.bash(f"head -n {k} queue.txt")

    @add("pip_missing_file_variations", "same_error", "runaway", 2)
    def _(p: Project) -> None:
        for cmd in ("cat requirements.txt", "cat ./requirements.txt", "cat requirements.txt | head",
                    "cat  requirements.txt", "cat requirements.txt 2>&1", "cat -v requirements.txt"):
            p.bash(cmd)

    @add("import_error_variations", "same_error", "runaway", 2)
    def _(p: Project) -> None:
        p.file("tool/__init__.py", "from .core import go\n")
        for cmd in ("python3 -c 'import tool'", "python3 -c 'import tool; tool.go()'", "python3 -c 'from tool import go'",
                    "python3 -B -c 'import tool'", "python3 -c 'import tool' 2>&1"):
            p.bash(cmd)

    @add("check_every_fourth_call", "spread_repeat", "runaway", 8)
    def _(p: Project) -> None:
        p.file("lock", "held by pid 4242\n")
        for i in range(5):
            p.bash("cat lock")
            p.bash(f"echo step {i}-a")
            p.bash(f"ls -1 | head -{i + 1}")
            p.bash(f"python3 -c 'print({i} ** 2)'")

    @add("five_step_cycle_reads", "cycle", "runaway", 10)
    def _(p: Project) -> None:
        for name in ("db", "cache", "queue", "web", "worker"):
            p.file(f"health/{name}", f"{name}=starting\n")
        for _round in range(4):
            for name in ("db", "cache", "queue", "web", "worker"):
                p.read(f"health/{name}")

    @add("seven_step_cycle", "cycle", "runaway", 14)
    def _(p: Project) -> None:
        p.file("build.log", BUILD_LOG)
        for _round in range(3):
            p.bash("tail -1 build.log")
            p.bash("curl -s http://127.0.0.1:$PORT/health")
            p.bash("ls")
            p.bash("wc -c build.log")
            p.bash("curl -s http://127.0.0.1:$PORT/jobs/7")
            p.bash("grep -c step build.log")
            p.bash("cat build.log | head -1")

    @add("stale_edit_after_write", "stale_edit", "runaway", 3)
    def _(p: Project) -> None:
        p.file("settings.py", "DEBUG = True\nLEVEL = 'info'\n")
        p.write("settings.py", "DEBUG = False\nLEVEL = 'warning'\n")
        for _ in range(5):
            p.edit("settings.py", "DEBUG = True", "DEBUG = False")

    @add("no_progress_status_turns", "no_progress", "runaway", 6)
    def _(p: Project) -> None:
        p.file("deploy.json", '{"stage": "canary", "healthy": 0}\n')
        for turn in range(4):
            if turn:
                p.new_turn()
            p.read("deploy.json")
            p.bash("grep -o '\"healthy\": [0-9]*' deploy.json")
            p.bash("curl -s http://127.0.0.1:$PORT/jobs/7")

    @add("npm_like_exact_repeat", "poll_exact", "runaway", 2)
    def _(p: Project) -> None:
        p.file("Makefile", "status:\n\t@echo 'waiting for artifacts'\n")
        for _ in range(6):
            p.bash("make -s status")

    # -- productive --
    @add("rename_across_files", "many_edits", "productive", None)
    def _(p: Project) -> None:
        for i in range(6):
            p.file(f"lib/part{i}.py", f"from core import old_name\n\nRESULT_{i} = old_name({i})\n")
        for i in range(6):
            p.edit(f"lib/part{i}.py", "old_name", "new_name")
            p.edit(f"lib/part{i}.py", f"old_name({i})", f"new_name({i})")
        p.bash("grep -rc new_name lib | sort")

    @add("page_log_with_limits", "paging", "productive", None)
    def _(p: Project) -> None:
        p.file("big.log", "".join(f"{i:05d} event {i % 7}\n" for i in range(1, 1201)))
        for start in range(1, 1201, 200):
            p.bash(f"sed -n '{start},{start + 199}p' big.log | tail -1")

    @add("test_fix_test_twice", "test_fix_test", "productive", None)
    def _(p: Project) -> None:
        p.file("calc.py", CALC)
        p.file("test_calc.py", CALC_TEST)
        p.bash("python3 -m unittest test_calc 2>&1 | grep -E 'FAIL|OK|Ran'")
        p.edit("calc.py", "    return a - b", "    return a + b")
        p.bash("python3 -m unittest test_calc 2>&1 | grep -E 'FAIL|OK|Ran'")
        p.edit("calc.py", "def mul(a, b):\n    return a + b", "def mul(a, b):\n    return a * b")
        p.bash("python3 -m unittest test_calc 2>&1 | grep -E 'FAIL|OK|Ran'")

    @add("batch_migration_five_runs", "batch", "productive", None)
    def _(p: Project) -> None:
        p.file("migrate.py", MIGRATE)
        for _ in range(4):
            p.bash("python3 migrate.py --batch 80 && sleep 1")

    @add("reread_after_edits_offsets", "reread", "productive", None)
    def _(p: Project) -> None:
        p.file("app.cfg", "".join(f"key{i} = {i}\n" for i in range(40)))
        for i in (3, 17, 31):
            p.edit("app.cfg", f"key{i} = {i}\n", f"key{i} = {i * 100}\n")
            p.read("app.cfg", offset=max(1, i - 1), limit=5)
        p.read("app.cfg", offset=1, limit=40)

    @add("scaffold_many_distinct", "distinct", "productive", None)
    def _(p: Project) -> None:
        p.bash("mkdir -p api web db && ls")
        p.write("api/server.py", "print('api')\n")
        p.write("web/index.html", "<h1>hi</h1>\n")
        p.write("db/schema.sql", "create table t (id int);\n")
        for cmd in ("python3 api/server.py", "wc -c web/index.html", "grep -c create db/schema.sql", "find . -type f | sort",
                    "du -s api web db | sort -k2", "cat db/schema.sql", "ls -1 web", "python3 -c 'print(2**10)'",
                    "curl -s 'http://127.0.0.1:$PORT/items?page=2'"):
            p.bash(cmd)

    @add("progressing_job_poll", "progress_poll", "productive", None)
    def _(p: Project) -> None:
        for pct in (0, 25, 50, 75, 100):
            p.file("progress", f"{pct}% complete\n")
            p.bash("sleep 15; cat progress", timeout=30000)

    @add("multi_turn_feature_work", "multi_turn", "productive", None)
    def _(p: Project) -> None:
        p.file("feature.py", "def run():\n    return 0\n")
        p.file("README.md", "# feature\n")
        for turn in range(3):
            if turn:
                p.new_turn()
            p.read("feature.py")
            p.edit("feature.py", f"    return {turn}\n", f"    return {turn + 1}\n")
            p.bash("python3 -c 'import feature; print(feature.run())'")
            p.read("README.md")

    return out


def build(traces: list[tuple[str, str, str, int | None, TraceFn]], label: str, port: int) -> dict[str, Any]:
    rows = []
    for name, category, kind, loop_at, fn in traces:
        turns = run_trace(fn, port)
        calls = sum(len(t) for t in turns)
        if loop_at is not None and not 0 <= loop_at < calls:
            raise SystemExit(f"{name}: loop_at {loop_at} is outside its {calls} calls")
        rows.append({"name": name, "category": category, "label": kind, "loop_at": loop_at, "turns": turns})
    return {"set": label, "traces": rows}


def main() -> int:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Api)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    try:
        for label, traces in (("dev", dev_traces()), ("blind", blind_traces())):
            data = build(traces, label, port)
            path = DATA / f"runaway_{label}.json"
            path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
            kinds = [t["label"] for t in data["traces"]]
            print(f"{path.relative_to(DATA.parent.parent)}: {kinds.count('runaway')} runaway, "
                  f"{kinds.count('productive')} productive")
    finally:
        server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
