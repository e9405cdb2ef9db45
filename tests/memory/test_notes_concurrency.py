"""Two processes appending notes to one instance at once: every note present, none torn."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from mnemara.memory.notes import day_files, parse_file
from tests.conftest import cli_env

WRITER = """
import sys
from click.testing import CliRunner
from mnemara.cli import main
tag = sys.argv[1]
runner = CliRunner()
for i in range(200):
    body = f"{tag}-{i} " + ("lorem ipsum " * 40)
    result = runner.invoke(main, ["note", "--instance", "w", "-c", tag, body])
    assert result.exit_code == 0, result.output
"""


def test_two_writers_200_notes_each(cli, mnemara_home: Path) -> None:
    assert cli("init", "--instance", "w").returncode == 0
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, tag], env=cli_env(), stderr=subprocess.PIPE, text=True)
        for tag in ("alpha", "beta")
    ]
    for p in procs:
        _, err = p.communicate(timeout=280)  # 400 near-copies: every write re-reads the day and proposes; slow on a loaded host
        assert p.returncode == 0, err
    atoms = [a for f in day_files(mnemara_home / "w" / "memory") for a in parse_file(f)]
    assert len(atoms) == 400
    seen = {a.text.split()[0] for a in atoms}
    assert seen == {f"{t}-{i}" for t in ("alpha", "beta") for i in range(200)}
    for a in atoms:
        tag = a.text.split("-")[0]
        assert a.category == tag
        assert a.text.rstrip() == f"{a.text.split()[0]} " + ("lorem ipsum " * 40).strip()
