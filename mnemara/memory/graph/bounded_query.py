"""Run one ``graph_query`` statement in a child process that is killed when it grows too big or too slow.

Kuzu's own limits do not hold a query such as ``UNWIND range(1, 20000000) AS x RETURN count(x)``:
the list is built outside the buffer pool, the query timeout is only checked between batches,
and ``Connection.interrupt`` is not seen while one expression is being evaluated (measured with
Kuzu 0.11: 4.5 GB and 23 s for a list doubled by ``list_concat`` with a 2 s timeout set). So the
statement runs in a child process that this process watches: its resident memory is sampled every
few milliseconds and the child is killed past :data:`MEMORY_CAP_MB`, and :data:`KILL_AFTER_S` after
its statement started, whatever it does. Start-up (importing Kuzu, opening the file) is timed apart,
against :data:`START_LIMIT_S`: on a loaded machine it alone can take seconds, and it runs no user
input. Inside the child Kuzu's query timeout (:data:`TIME_LIMIT_S`) and a small buffer
pool apply, so most slow or big queries end there first with Kuzu's error. Whatever happens, the answer is one line.
"""
from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mnemara.core.errors import UsageError
from mnemara.core.fsutil import write_all

TIME_LIMIT_S = 5.0
#: The child is killed this long after its statement started, whatever it does (more than the query's
#: own limit, which Kuzu checks only between batches).
KILL_AFTER_S = 15.0
#: How long the child may take to import Kuzu and open the file before it says it is ready.
START_LIMIT_S = 120.0
MEMORY_CAP_MB = 256
CHILD_BUFFER_POOL_MB = 64
POLL_S = 0.005

#: The child: open the file, run the statement (read-only transaction unless writing), print JSON.
_CHILD = r"""
import importlib.util, json, sys
req = json.load(sys.stdin)
spec = importlib.util.spec_from_file_location("graph_values", req["values"])
values = importlib.util.module_from_spec(spec)
spec.loader.exec_module(values)
import kuzu, os
try:
    db = kuzu.Database(req["path"], read_only=not req["write"], buffer_pool_size=req["pool"])
    conn = kuzu.Connection(db)
    conn.set_query_timeout(req["timeout_ms"])
    if not req["write"]:
        conn.execute("BEGIN TRANSACTION READ ONLY")
    os.write(req["ready_fd"], b"1")
    os.close(req["ready_fd"])
    result = conn.execute(req["statement"], req["params"])
    columns = result.get_column_names()
    rows, truncated = [], False
    while result.has_next():
        if len(rows) >= req["max_rows"]:
            truncated = True
            break
        rows.append([values.plain_value(v) for v in result.get_next()])
    out = {"columns": columns, "rows": rows, "truncated": truncated}
except RuntimeError as exc:
    out = {"error": " ".join(str(exc).split())}
sys.stdout.write(json.dumps(out, default=str))
"""


@dataclass(frozen=True)
class QueryLimits:
    """How long and how big one ``graph_query`` child may get."""

    seconds: float = TIME_LIMIT_S  # Kuzu's query timeout, counted from the statement's start
    kill_seconds: float = KILL_AFTER_S  # the child is killed this long after its statement started
    start_seconds: float = START_LIMIT_S  # ... or this long after it was started, if it never got ready
    memory_mb: int = MEMORY_CAP_MB
    pool_mb: int = CHILD_BUFFER_POOL_MB
    max_rows: int = 500


def _rss_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/statm", "rb") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return 0.0


def run_bounded(path: Path, statement: str, params: dict[str, Any], *, write: bool,
                limits: QueryLimits = QueryLimits()) -> dict[str, Any]:
    """The statement's ``{"columns", "rows", "truncated"}``; :class:`UsageError` (one line) when it fails or is stopped."""
    ready_read, ready_write = os.pipe()
    request = json.dumps({"path": str(path), "statement": statement, "params": params, "write": write,
                          "values": str(Path(__file__).with_name("values.py")),
                          "pool": limits.pool_mb * 2**20, "timeout_ms": int(limits.seconds * 1000),
                          "max_rows": limits.max_rows, "ready_fd": ready_write})
    request_read, request_write = os.pipe()
    try:
        proc = subprocess.Popen([sys.executable, "-c", _CHILD], stdin=request_read, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True, pass_fds=(ready_write,))
    except BaseException:  # no child: the parent's ends go too
        os.close(ready_read)
        os.close(request_write)
        raise
    finally:
        os.close(ready_write)
        os.close(request_read)
    # The request is written whole before the watch starts (the child reads it first thing). Handed to
    # communicate() with a short timeout instead, it was lost whenever the first call timed out before
    # its first write (a retry with no input never writes again), and the child waited for it forever.
    try:
        write_all(request_write, request.encode("utf-8"))
    except BrokenPipeError:
        pass  # the child is gone: the watch collects what it said
    finally:
        os.close(request_write)
    try:
        out, err = _watch(proc, ready_read, limits)
    finally:
        os.close(ready_read)
    return _answer(proc.returncode, out, err, limits)


def _watch(proc: subprocess.Popen[bytes], ready: int, limits: QueryLimits) -> tuple[bytes, bytes]:
    """The child's output once it exits; killed (and :class:`UsageError`) past a memory or time limit."""
    started = time.monotonic()
    statement_started: float | None = None
    while True:
        try:
            return proc.communicate(timeout=POLL_S)
        except subprocess.TimeoutExpired:
            pass
        now = time.monotonic()
        if statement_started is None and select.select([ready], [], [], 0)[0]:
            statement_started = now
        stopped, hint = "", "narrow the MATCH, add LIMIT, or use smaller ranges"
        if _rss_mb(proc.pid) > limits.memory_mb:
            stopped = f"it needed more than {limits.memory_mb} MB"
        elif statement_started is not None and now - statement_started > limits.kill_seconds:
            stopped = f"it ran longer than {limits.kill_seconds:g} s"
        elif statement_started is None and now - started > limits.start_seconds:
            stopped = f"Kuzu did not open the graph within {limits.start_seconds:g} s"
            hint = "the machine may be overloaded; try again"
        if stopped:
            _kill(proc)
            raise UsageError(f"graph_query stopped: {stopped} ({hint})")


def _kill(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.communicate()


def _answer(returncode: int, out: bytes, err: bytes, limits: QueryLimits) -> dict[str, Any]:
    try:
        answer = json.loads(out.decode("utf-8")) if out else None
    except (UnicodeDecodeError, ValueError):
        answer = None
    if not isinstance(answer, dict):
        lines = [ln.strip() for ln in err.decode("utf-8", "replace").splitlines() if ln.strip()]
        why = lines[-1] if lines else f"exit status {returncode}"
        raise UsageError(f"graph_query failed: {why[:300]}")
    if "error" in answer:
        message = str(answer["error"]).split(" See the docs:")[0][:300]
        if "read-only" in message.lower():
            raise UsageError("graph_query is read-only: this statement writes (pass write=true to allow it)")
        if "interrupted" in message.lower():
            raise UsageError(f"graph_query stopped: it ran longer than {limits.seconds:g} s (narrow the MATCH or add LIMIT)")
        if "buffer pool is full" in message.lower():
            raise UsageError("graph_query stopped: it needed more memory than the graph's buffer pool allows")
        raise UsageError(f"Cypher error: {message}")
    return answer
