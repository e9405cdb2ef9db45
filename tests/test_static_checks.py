"""``ruff check`` (on ``mnemara/``, the tests and the benches), ``mypy`` (on ``mnemara/`` and
``examples/``) and ``lint-imports`` (the layer contracts), configured in pyproject.toml, run clean.

Part of the README's test command, so a finding fails the suite like any other bug.
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IGNORE = re.compile(r"#\s*type:\s*ignore(?P<codes>\[[^\]]*\])?(?P<rest>.*)$")


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=str(ROOT), capture_output=True, text=True, timeout=600)


def test_ruff_finds_nothing() -> None:
    done = run("ruff", "check", "--no-cache", "mnemara", "tests", "bench")
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]


def test_mypy_finds_nothing() -> None:
    done = run("mypy")
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]


def test_the_layer_contracts_hold() -> None:
    """UI -> session -> domain -> storage as folders; only mnemara.claude imports the SDK; only the
    UIs and the command line import textual, prompt_toolkit, rich or click; no import circles."""
    done = subprocess.run([str(Path(sys.executable).with_name("lint-imports")), "--no-cache"], cwd=str(ROOT),
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]


def test_the_layer_check_sees_an_upward_import(tmp_path: Path) -> None:
    """lint-imports, run the same way on a planted package, reports a storage module importing the UI."""
    pkg = tmp_path / "planted"
    for name, body in {"__init__": "", "ui": "import planted.store\n", "store": "def f():\n    import planted.ui\n"}.items():
        pkg.mkdir(exist_ok=True)
        (pkg / f"{name}.py").write_text(body, encoding="utf-8")
    (tmp_path / "setup.cfg").write_text("[importlinter]\nroot_package = planted\n\n[importlinter:contract:1]\n"
                                        "name = layers\ntype = layers\nlayers =\n    ui\n    store\ncontainers = planted\n",
                                        encoding="utf-8")
    done = subprocess.run([str(Path(sys.executable).with_name("lint-imports")), "--no-cache", "--config",
                           str(tmp_path / "setup.cfg")], cwd=str(tmp_path), capture_output=True, text=True, timeout=600,
                          env={**__import__("os").environ, "PYTHONPATH": str(tmp_path)})
    assert done.returncode != 0 and "planted.store -> planted.ui" in done.stdout, done.stdout + done.stderr


def test_every_type_ignore_names_its_code_and_reason() -> None:
    bare = []
    for path in sorted((ROOT / "mnemara").rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            match = IGNORE.search(line)
            if match and not (match["codes"] and re.match(r"\s*#\s*\S", match["rest"] or "")):
                bare.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert bare == [], "a '# type: ignore[code]' needs '  # why' after it:\n" + "\n".join(bare)


def test_no_venv_is_made_with_the_base_interpreters_packages() -> None:
    """Issue 32: a venv made with ``--system-site-packages`` from inside a venv sees the *base*
    interpreter's packages; a fresh machine's base has none, so the test would pass here and fail there."""
    flag = "--system-site" + "-packages"  # split, so this file does not find itself
    found = [f"{p.relative_to(ROOT)}:{n}" for folder in ("tests", "bench", "mnemara", ".ci")
             for p in sorted((ROOT / folder).rglob("*")) if p.is_file() and p.suffix in ("", ".py", ".sh")
             for n, line in enumerate(p.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
             if f'"{flag}"' in line or (p.suffix != ".py" and flag in line.split("#")[0])]
    assert found == [], found
