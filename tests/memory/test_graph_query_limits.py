"""graph_query cannot eat the host (issue 25, item 2): a time limit, a memory cap, capped ranges.

``UNWIND range(1, 20000000) AS x RETURN count(x)`` grew the process by 10.8 GB in 40 s. Tests
here assert that such a statement is refused or stopped, that the answer is one line, and that
this process grew by less than 200 MB; they never assert on wall time.
"""
from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path
from typing import Callable

import pytest

from mnemara.core.errors import UsageError
from mnemara.memory.graph import bounded_query, cypher_guard
from mnemara.memory.graph.bounded_query import QueryLimits, run_bounded
from mnemara.memory.graph.store import Graph

GROWTH_CAP_MB = 200
DOUBLING = "WITH [1, 2, 3, 4, 5, 6, 7, 8] AS s " + "WITH s + s AS s " * 26 + "RETURN size(s)"


def _rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _peak_growth(run: Callable[[], object]) -> tuple[float, BaseException | None]:
    """How much this process grew at most while ``run`` ran, and what it raised."""
    base = peak = _rss_mb()
    done = threading.Event()

    def watch() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, _rss_mb())
            done.wait(0.01)

    watcher = threading.Thread(target=watch)
    watcher.start()
    raised: BaseException | None = None
    try:
        run()
    except BaseException as exc:  # noqa: BLE001 - returned to the test
        raised = exc
    finally:
        done.set()
        watcher.join()
    return peak - base, raised


@pytest.fixture
def graph(tmp_path: Path) -> Graph:
    g = Graph(tmp_path / "graph")
    g.add_node("Thing", {"k": 1}, "thing:1")
    return g


def test_the_twenty_million_range_is_refused_in_one_line(graph: Graph) -> None:
    growth, raised = _peak_growth(lambda: graph.query("UNWIND range(1, 20000000) AS x RETURN count(x)"))
    assert isinstance(raised, UsageError) and "\n" not in str(raised)
    assert "range() would produce 20000000 values" in str(raised)
    assert growth < GROWTH_CAP_MB


def test_without_the_range_cap_it_is_still_stopped(graph: Graph, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cypher_guard, "MAX_RANGE_VALUES", 10**12)
    growth, raised = _peak_growth(lambda: graph.query("UNWIND range(1, 20000000) AS x RETURN count(x)"))
    assert isinstance(raised, UsageError) and "\n" not in str(raised), raised
    assert str(raised).startswith("graph_query stopped:"), raised
    assert growth < GROWTH_CAP_MB


def test_a_list_that_doubles_past_the_cap_is_stopped(graph: Graph) -> None:
    """No range() at all: the list is built by '+' (Kuzu's timeout and interrupt do not stop it)."""
    growth, raised = _peak_growth(lambda: graph.query(DOUBLING))
    assert isinstance(raised, UsageError) and "\n" not in str(raised), raised
    assert str(raised).startswith("graph_query stopped:"), raised  # the memory cap, or time on a loaded host
    assert growth < GROWTH_CAP_MB


def test_a_slow_query_is_stopped_by_the_time_limit(graph: Graph) -> None:
    graph.close()
    slow = ("UNWIND range(1,3000) AS x UNWIND range(1,3000) AS y UNWIND range(1,300) AS z "
            "WITH x + y + z AS s WHERE s < 0 RETURN count(*)")
    with pytest.raises(UsageError, match="graph_query stopped: it ran longer than 0.5 s"):
        run_bounded(graph.path, slow, {}, write=False, limits=QueryLimits(seconds=0.5))  # Kuzu's own timeout
    with pytest.raises(UsageError, match="graph_query stopped: it ran longer than 1 s"):
        run_bounded(graph.path, slow, {}, write=False, limits=QueryLimits(seconds=60, kill_seconds=1))


def test_a_slow_start_does_not_count_against_the_statement(graph: Graph, monkeypatch: pytest.MonkeyPatch) -> None:
    """A loaded machine may take seconds to import Kuzu: the kill clock starts when the statement does
    (CI once killed a one-node DETACH DELETE after 15 s of start-up)."""
    graph.close()
    monkeypatch.setattr(bounded_query, "_CHILD", "import time; time.sleep(2.5)\n" + bounded_query._CHILD)
    answer = run_bounded(graph.path, "RETURN 1 AS x", {}, write=False, limits=QueryLimits(kill_seconds=1.5))
    assert answer["rows"] == [[1]]
    with pytest.raises(UsageError, match=r"graph_query stopped: Kuzu did not open the graph within 0.5 s "
                                         r"\(the machine may be overloaded; try again\)$"):
        run_bounded(graph.path, "RETURN 1 AS x", {}, write=False, limits=QueryLimits(start_seconds=0.5))


def test_the_request_reaches_the_child_when_the_first_watch_times_out_at_once(
        graph: Graph, monkeypatch: pytest.MonkeyPatch) -> None:
    """The request went through communicate(input, timeout=POLL_S): when that first call timed out before
    its first write (a descheduled parent on a loaded machine), no retry wrote it, and the child waited
    until it was killed (two CI failures). Here the first call times out before doing anything."""
    graph.close()
    real = subprocess.Popen.communicate
    calls = {"n": 0}

    def first_times_out(self: subprocess.Popen[bytes], input: bytes | None = None,
                        timeout: float | None = None) -> tuple[bytes, bytes]:
        calls["n"] += 1
        if calls["n"] == 1:
            raise subprocess.TimeoutExpired(self.args, timeout or 0)
        return real(self, input, timeout)

    monkeypatch.setattr(subprocess.Popen, "communicate", first_times_out)
    answer = run_bounded(graph.path, "RETURN 1 AS x", {}, write=False, limits=QueryLimits(kill_seconds=10))
    assert answer["rows"] == [[1]] and calls["n"] > 1


@pytest.mark.parametrize("cypher, why", [
    ("UNWIND range(1, $n) AS x RETURN x", "integer literals"),
    ("UNWIND range(1, 1000) AS x UNWIND range(1, 1000) AS y RETURN count(*)", "1000000 values"),
    ("RETURN range(1, 5, 0)", "step of 0"),
])
def test_range_refusals(graph: Graph, cypher: str, why: str) -> None:
    with pytest.raises(UsageError, match=why):
        graph.query(cypher, {"n": 10})


def test_ordinary_queries_still_answer_and_the_graph_stays_usable(graph: Graph) -> None:
    assert graph.query("UNWIND range(1, 3) AS x RETURN x")["rows"] == [[1], [2], [3]]
    found = graph.query("MATCH (n:Node {id: $id}) RETURN n.label, n.properties", {"id": "thing:1"})
    assert found["rows"] == [["Thing", '{"k": 1}']]
    with pytest.raises(UsageError, match="read-only"):
        graph.query("CREATE (:Node {id: 'x'})")
    assert graph.query("CREATE (:Node {id: 'x', label: 'X'}) RETURN 1", allow_write=True)["rows"] == [[1]]
    assert graph.counts()["nodes"] == 2  # the store reopens the file after the child closed it
