"""The one guarded loader for heavy backends (LanceDB, Kuzu, PyArrow)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mnemara.core.backend_loader import defer_package_init, load_backend
from mnemara.core.errors import BackendUnavailable, MnemaraError
from mnemara.memory.graph.store import GraphUnavailable
from mnemara.memory.search.rag import RagUnavailable
from mnemara.memory.surfaces import BackendOff
from tests.conftest import cli_env

# A fresh process: the session's background pre-import of LanceDB starts, and at once
# the first auto-recall query imports lancedb.query itself. Before the loader, a plain
# ``importlib.import_module("lancedb")`` thread racing ``from lancedb.query import
# MatchQuery`` failed with "partially initialized module 'lancedb.query'" every time.
RACE = """
import sys
from pathlib import Path
from mnemara.core.backend_loader import preload_backend
from mnemara.memory.notes import append_note
from mnemara.memory.search.rag import RagIndex

root = Path(sys.argv[1])
append_note(root / "memory", "The lease timeout lives in server.py", "insight")
thread = preload_backend("lancedb")
hits = RagIndex(root).query("lease timeout")["hits"]
thread.join()
print("hits", len(hits))
print("rest api classes built:", any(m.startswith("lance_namespace_urllib3_client.api") for m in sys.modules))
"""


def test_preload_racing_first_query_in_a_fresh_process(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", RACE, str(tmp_path)], capture_output=True, text=True,
                          env=cli_env(), timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "partially initialized" not in done.stderr
    assert done.stdout.splitlines() == ["hits 1", "rest api classes built: False"]  # deferred: see defer_package_init


def test_deferred_package_init_runs_once_when_the_package_itself_is_asked(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "mnemara_deferme"
    package.mkdir()
    (package / "part.py").write_text("RUNS = []\nVALUE = 41\n")
    (package / "__init__.py").write_text("from mnemara_deferme.part import RUNS, VALUE\nRUNS.append('init')\n"
                                         "TOP = VALUE + 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        defer_package_init("mnemara_deferme")
        from mnemara_deferme.part import RUNS  # a submodule imports without the package's __init__
        assert RUNS == []
        import mnemara_deferme

        assert mnemara_deferme.TOP == 42 and RUNS == ["init"]  # the first name asked for runs it, whole
        from mnemara_deferme import TOP, VALUE

        assert (TOP, VALUE) == (42, 41) and RUNS == ["init"]  # once
        with pytest.raises(AttributeError, match="no attribute 'missing'"):
            mnemara_deferme.missing  # noqa: B018
        defer_package_init("mnemara_deferme")  # imported already: nothing changes
        assert sys.modules["mnemara_deferme"] is mnemara_deferme
        defer_package_init("mnemara_no_such_package")  # not installed: nothing happens
        assert "mnemara_no_such_package" not in sys.modules
    finally:
        for name in [m for m in sys.modules if m.startswith("mnemara_deferme")]:
            del sys.modules[name]


def test_backend_errors_share_one_base() -> None:
    for cls in (RagUnavailable, GraphUnavailable, BackendOff):
        assert issubclass(cls, BackendUnavailable) and issubclass(cls, MnemaraError)


def test_missing_backend_raises_the_callers_class(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "kuzu", None)  # import kuzu -> ImportError
    with pytest.raises(GraphUnavailable, match=r"^cannot import kuzu \(ModuleNotFoundError: "):
        load_backend("kuzu", GraphUnavailable)
    with pytest.raises(BackendUnavailable, match="cannot import no_such_backend_xyz"):
        load_backend("no_such_backend_xyz")


def test_submodule_failure_names_the_package() -> None:
    with pytest.raises(RagUnavailable, match=r"^cannot import lancedb \("):
        load_backend("lancedb.no_such_module", RagUnavailable)


_LOG_AFTER_IMPORT = """
import sys
from pathlib import Path
from mnemara.core.backend_loader import load_backend
from mnemara.core.debuglog import log_event
if sys.argv[1] == "loader":
    load_backend("wordllama")
else:
    import wordllama  # noqa: F401
log_event(Path(sys.argv[2]) / "debug.log", "rows_left_window", rows=1)
print(Path(sys.argv[2], "debug.log").read_text(), end="")
"""


@pytest.mark.parametrize("how", ["loader", "plain import"])
def test_a_backend_import_does_not_make_debug_log_events_reach_stderr(tmp_path, how):
    """Issue 39: `INFO:mnemara.instance.scratch.<hex>:rows_left_window` on the piped REPL's stderr after a
    rag_query. wordllama (the local embedder) calls logging.basicConfig(level=INFO) on import; through
    load_backend the root logger keeps its handlers, so events go to debug.log only."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", _LOG_AFTER_IMPORT, how.split()[0], str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert '"event": "rows_left_window"' in proc.stdout
    if how == "loader":
        assert proc.stderr == ""
    else:  # the cause, shown: a plain import configures the root logger
        assert "INFO:mnemara.instance." in proc.stderr and "rows_left_window" in proc.stderr
