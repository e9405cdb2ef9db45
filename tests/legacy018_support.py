"""Mnemara 0.18 instances for the migration tests.

:func:`instance018` copies the instance and export kept in ``tests/data/legacy018``, which the real
0.18 package wrote (no network, no install). :func:`python018` gives the interpreter of a venv holding
``mnemara==0.18.0`` (``$MNEMARA_TEST_018_PYTHON`` when set, else made once per test run and shared by
all xdist workers; it sees this run's own packages through a ``.pth`` file, never the base
interpreter's), used only to check that the kept data is still what 0.18 writes. When 0.18 cannot be
installed (no network to PyPI), that one check is skipped with the reason.

:data:`BUILD_SCRIPT` drives 0.18's own API to write the files we migrate: rows
with blocks, token counts, a renamed role, two slots, a segment marker, notes (a
plain one and a structured payload), an "always" Bash pattern and an export.
"""
from __future__ import annotations

import fcntl
import json
import os
import shutil
import site
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any, Callable

import pytest

BUILD_SCRIPT = r'''
import json, sys
from pathlib import Path
from mnemara import config as cfgmod
from mnemara.store import Store
from mnemara.tools import write_memory
from mnemara.permissions import PermissionStore

name, role_doc, export_path = sys.argv[1], sys.argv[2], sys.argv[3]
cfgmod.init_instance(name, role_doc_path=role_doc)
cfg = cfgmod.load(name)
cfg.peer_poll_roles = "panel_a,panel_b"
cfg.peer_db_path = "peers.sqlite"
cfgmod.save(name, cfg)
s = Store(name)
s.append_turn("user", "Which port does the billing database use?")
s.append_turn("assistant", [{"type": "text", "text": "HISTORY-MARK: billing listens on 5433."}],
              tokens_in=120, tokens_out=9)
s.upsert_slot("01_status", "user", "SLOT-STATUS green")
s.upsert_slot("00_goal", "user", "SLOT-GOAL ship v2")
s.mark_segment("debugging")
s.append_turn("user", "try the cache")
s.append_turn("assistant", [{"type": "thinking", "thinking": "hmm"},
                            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}],
              tool_uses=[{"name": "Bash"}])
s.update_turn_role(1, "Status")
rows = s.window()
s.close()
write_memory(name, "The billing database listens on port 5433 since the cutover.", category="insight")
write_memory(name, "x", category="observation", payload={
    "observation": "deploys fail on Fridays", "evidence": "3 incidents", "prediction": "next Friday too",
    "applies_to": ["deploy pipeline"], "confidence": "high"})
PermissionStore(name).add_pattern("Bash", r"^echo migrated\b")
Path(cfgmod.paths.instance_dir(name), "peer_poll_watermark").write_text("42")
from mnemara.tui import _render_full_export
Path(export_path).write_text(_render_full_export(rows, name, json.dumps(cfg.to_dict(), indent=2),
                                                 Path(role_doc).read_text()), encoding="utf-8")
import mnemara
print("built", cfgmod.paths.instance_dir(name), "with", mnemara.__file__)
'''


def _install(root: Path) -> tuple[str | None, str]:
    """A venv holding ``mnemara==0.18.0`` that sees this test venv's packages first.

    ``--system-site-packages`` would mean the *base* interpreter's packages when the tests run in a
    venv (a fresh machine's base Python has none of 0.18's dependencies), so instead a ``.pth`` file
    names this interpreter's own site-packages: 0.18 runs on the dependency versions installed here,
    and pip installs only what is still missing (0.18 also wants httpx and websockets). The .pth
    lines are plain paths, so the ``.pth`` files inside them (our editable install) are not run and
    0.18's own package is the one imported."""
    venv = root / "venv018"
    try:
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)],
                       check=True, capture_output=True, timeout=300)
        python = venv / "bin" / "python"
        inner = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True, timeout=60).stdout.strip()
        ours = [p for p in dict.fromkeys(site.getsitepackages() + [sysconfig.get_paths()["purelib"]]) if Path(p).is_dir()]
        Path(inner, "tests_venv_packages.pth").write_text("".join(f"{p}\n" for p in ours), encoding="utf-8")
        proc = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
                               "mnemara==0.18.0"], capture_output=True, text=True, timeout=600, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"cannot make a venv for Mnemara 0.18: {exc}"
    if proc.returncode != 0:
        return None, f"cannot pip install mnemara==0.18.0: {proc.stderr.strip().splitlines()[-1:]}"
    return str(python), ""


_CACHE: dict[str, tuple[str | None, str]] = {}


def _shared_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of this test run shared by all xdist workers (the temp root above their own base folders)."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent
    root = root / "legacy018"
    root.mkdir(exist_ok=True)
    return root


def _once(root: Path, name: str, make: Callable[[], Any]) -> Any:
    """``make()`` once per test run, its JSON answer kept in ``root/name``: the first worker to take
    the lock runs it while the others wait for its answer."""
    answer = root / name
    with open(root / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not answer.exists():
            answer.write_text(json.dumps(make()), encoding="utf-8")
    return json.loads(answer.read_text(encoding="utf-8"))


def _install_once(tmp_path_factory: pytest.TempPathFactory) -> tuple[str | None, str]:
    """:func:`_install` once per test run."""
    root = _shared_root(tmp_path_factory)
    python, reason = _once(root, "answer.json", lambda: _install(root))
    return python, reason


def python018(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The interpreter of a real Mnemara 0.18 install, or skip with the reason."""
    if "py" not in _CACHE:
        given = os.environ.get("MNEMARA_TEST_018_PYTHON")
        _CACHE["py"] = (given, "") if given else _install_once(tmp_path_factory)
    python, reason = _CACHE["py"]
    if python is None:
        pytest.skip(reason)
    return python


def env018(home: Path) -> dict[str, str]:
    """0.18 keeps instances in ~/.mnemara; our checkout must not shadow its package."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MNEMARA_HOME")}
    env["HOME"] = str(home)
    return env


ROLE_TEXT = "ROLE-018: you are a migrated agent.\n"


DATA = Path(__file__).resolve().parent / "data" / "legacy018"
#: Folders 0.18 makes empty in an instance (git keeps no empty folder in DATA).
EMPTY_FOLDERS = ("index", "wiki")
PLACEHOLDER = "@BUILT@"


def instance018(home: Path) -> tuple[Path, Path]:
    """A copy under ``home/.mnemara/old`` of the 0.18 instance kept in :data:`DATA`, and a copy of its
    /export file. 0.18 itself wrote them (:data:`BUILD_SCRIPT`; :func:`build_instance` regenerates
    them); the build folder's path is kept as ``@BUILT@`` and becomes ``home``, where its role doc
    (:data:`ROLE_TEXT`) is copied too. No network and no 0.18 install are needed."""
    target = home / ".mnemara" / "old"
    shutil.copytree(DATA / "instance", target)
    for folder in EMPTY_FOLDERS:
        (target / folder).mkdir(exist_ok=True)
    shutil.copy2(DATA / "role.md", home / "role.md")
    export = home / "export018.md"
    for src, dst in ((DATA / "instance" / "config.json", target / "config.json"), (DATA / "export018.md", export)):
        dst.write_text(src.read_text(encoding="utf-8").replace(PLACEHOLDER, str(home)), encoding="utf-8")
    return target, export


def built_by_018(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder where the real 0.18 package (installed for this run) built the same instance and
    export as :data:`DATA` holds: ``.mnemara/old``, ``export018.md``, ``role.md``."""
    python = python018(tmp_path_factory)
    root = _shared_root(tmp_path_factory)

    def build() -> str:
        built = root / "built"
        if built.exists():
            shutil.rmtree(built)
        built.mkdir()
        role = built / "role.md"
        role.write_text(ROLE_TEXT, encoding="utf-8")
        try:
            build_instance(python, built, "old", role, built / "export018.md")
        except AssertionError as exc:
            return f"building the 0.18 instance failed: {exc}"
        return ""

    failure = _once(root, "built.json", build)
    assert not failure, failure
    return root / "built"


def build_instance(python: str, home: Path, name: str, role_doc: Path, export_path: Path) -> Path:
    """Create instance ``name`` under ``home/.mnemara`` with 0.18 itself; returns its folder."""
    script = home / "build018.py"
    script.write_text(BUILD_SCRIPT, encoding="utf-8")
    proc = subprocess.run([python, str(script), name, str(role_doc), str(export_path)], capture_output=True,
                          text=True, env=env018(home), cwd=str(home), timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    assert str(home) in proc.stdout, proc.stdout
    used = proc.stdout.split(" with ")[-1].strip()
    ours = str(Path(__file__).resolve().parents[1])
    assert "site-packages" in used and not used.startswith((ours, "/work/main")), f"not 0.18's package: {used}"
    return home / ".mnemara" / name
