"""Mnemara 0.18, the baseline of the benches: found in its own venv, run without this checkout.

Make it once, outside the repository (never copy its code here):
``python -m venv /path/venv018 && /path/venv018/bin/pip install mnemara==0.18.0``, then pass
``--baseline-python /path/venv018/bin/python`` or set ``MNEMARA_BASELINE_PYTHON``.

The version check runs that Python isolated (``-I``) from a temporary folder: run from the
repository root, a plain ``python -c`` puts the current folder first on ``sys.path`` and finds
this checkout's ``mnemara.egg-info`` (0.1.0) instead of the installed 0.18. For the same reason
the 0.18 processes get an environment without ``PYTHONPATH`` (which points at this checkout).
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

ENV_VAR = "MNEMARA_BASELINE_PYTHON"


def find_baseline(given: str | None) -> tuple[str | None, str]:
    """``(python of Mnemara 0.18, its version)``, or ``(None, why not)``; from ``given`` or $MNEMARA_BASELINE_PYTHON."""
    candidate = given or os.environ.get(ENV_VAR)
    if not candidate:
        return None, f"no Mnemara 0.18 given (pass --baseline-python PATH or set {ENV_VAR})"
    if not Path(candidate).is_file():
        return None, f"{candidate} does not exist"
    if not (Path(candidate).parent / "mnemara").is_file():
        return None, f"{candidate} has no mnemara command beside it"
    with tempfile.TemporaryDirectory() as away:
        probe = subprocess.run([candidate, "-I", "-c", "import importlib.metadata as m; print(m.version('mnemara'))"],
                               check=False, capture_output=True, text=True, cwd=away, env=baseline_env(dict(os.environ)))
    version = probe.stdout.strip()
    if probe.returncode == 0 and version.startswith("0.18"):
        return candidate, version
    return None, f"{candidate} has mnemara {version or '(none)'}, not 0.18"


def baseline_env(env: dict[str, str]) -> dict[str, str]:
    """``env`` for a 0.18 process: no ``PYTHON*`` variable that could lead it to this checkout; and
    ``IS_SANDBOX=1``, as 0.18 always asks the CLI for bypassPermissions, which it refuses as root."""
    out = {k: v for k, v in env.items() if not k.startswith("PYTHON")}
    out["IS_SANDBOX"] = "1"
    return out


def byte_compile_checkout() -> None:
    """Byte-compile this checkout's ``mnemara`` as an install does (pip does), so it starts as the SDK and
    0.18 (installed) do: with PYTHONDONTWRITEBYTECODE=1 every run from a checkout would compile
    Mnemara's sources again (about 0.2 s of CPU a process)."""
    checkout = Path(__file__).resolve().parents[1] / "mnemara"
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(checkout)], check=True,
                   capture_output=True, stdin=subprocess.DEVNULL)
