"""The one guarded loader for heavy backends (LanceDB, Kuzu, PyArrow)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mnemara.backend_loader import load_backend
from mnemara.errors import BackendUnavailable, MnemaraError
from mnemara.memory.graph import GraphUnavailable
from mnemara.memory.rag import RagUnavailable
from mnemara.memory.surfaces import BackendOff
from tests.conftest import cli_env

# A fresh process: the session's background pre-import of LanceDB starts, and at once
# the first auto-recall query imports lancedb.query itself. Before the loader, a plain
# ``importlib.import_module("lancedb")`` thread racing ``from lancedb.query import
# MatchQuery`` failed with "partially initialized module 'lancedb.query'" every time.
RACE = """
import sys
from pathlib import Path
from mnemara.backend_loader import preload_backend
from mnemara.memory.notes import append_note
from mnemara.memory.rag import RagIndex

root = Path(sys.argv[1])
append_note(root / "memory", "The lease timeout lives in server.py", "insight")
thread = preload_backend("lancedb")
hits = RagIndex(root).query("lease timeout")["hits"]
thread.join()
print("hits", len(hits))
"""


def test_preload_racing_first_query_in_a_fresh_process(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", RACE, str(tmp_path)], capture_output=True, text=True,
                          env=cli_env(), timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "partially initialized" not in done.stderr
    assert done.stdout.strip() == "hits 1"


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
