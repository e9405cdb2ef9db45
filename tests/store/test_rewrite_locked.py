"""rewrite_locked (used by lint --fix and forget) never loses a note appended at the same time."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from mnemara.core.fsutil import locked_append, rewrite_locked
from tests.conftest import cli_env

APPENDER = """
import sys
from mnemara.core.fsutil import locked_append
for i in range(300):
    locked_append(sys.argv[1], f"line-{i}\\n")
"""


def test_appends_survive_concurrent_rewrites(tmp_path: Path) -> None:
    path = tmp_path / "2026-01-01.md"
    locked_append(path, "MARK-0\n")
    proc = subprocess.Popen([sys.executable, "-c", APPENDER, str(path)], env=cli_env(), stderr=subprocess.PIPE, text=True)
    n = 0
    while proc.poll() is None:
        n += 1
        rewrite_locked(path, lambda text, n=n: text.replace(f"MARK-{n - 1}", f"MARK-{n}"))
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    lines = path.read_text().splitlines()
    assert sorted(line for line in lines if line.startswith("line-")) == sorted(f"line-{i}" for i in range(300))
    assert sum(1 for line in lines if line.startswith("MARK-")) == 1


def test_rewrite_keeps_mode_and_skips_noop(tmp_path: Path) -> None:
    path = tmp_path / "f.md"
    path.write_text("abc\n")
    path.chmod(0o640)
    assert rewrite_locked(path, lambda t: None) is False
    assert rewrite_locked(path, lambda t: t.replace("abc", "xyz")) is True
    assert path.read_text() == "xyz\n" and (path.stat().st_mode & 0o777) == 0o640
