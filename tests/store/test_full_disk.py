"""A full disk at start is told as a full disk, not as a damaged database (issue 37: "turns.sqlite: not a
readable SQLite database (disk I/O error)" on a healthy database, which a user might delete or "repair").

The disk is a real small filesystem: a 2 MB tmpfs mounted for the test (root only; skipped elsewhere),
filled until the kernel answers ENOSPC, so the failure is the one a full disk gives, every time.
"""
from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from mnemara.store.instance import Instance
from mnemara.store.turns import TurnStore


@pytest.fixture
def small_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    if os.getuid() != 0:
        pytest.skip("mounting a small filesystem needs root")
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m,mode=0700", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    monkeypatch.setenv("MNEMARA_HOME", str(mount / "home"))
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _fill(mount: Path) -> Path:
    filler = mount / "filler"
    with open(filler, "wb") as fh:
        try:
            while True:
                fh.write(b"\0" * 65536)
                fh.flush()
        except OSError as exc:
            assert exc.errno == 28  # ENOSPC: the disk is full
    return filler


def test_a_full_disk_is_not_called_a_damaged_database_and_nothing_is_lost(cli, small_disk: Path) -> None:
    inst = Instance.create("full")
    with TurnStore(inst.turns_path) as store:
        store.append("user", "remember the blue door")
    before = inst.turns_path.read_bytes()
    filler = _fill(small_disk)
    done = cli("show", "--instance", "full", subprocess_only=True)
    assert done.returncode != 0
    assert "the disk is full" in done.stderr and "not a damaged database" in done.stderr, done.stderr
    assert "not a readable SQLite database" not in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert inst.turns_path.read_bytes() == before  # left untouched
    filler.unlink()
    again = cli("show", "--instance", "full", subprocess_only=True)
    assert again.returncode == 0 and "remember the blue door" in again.stdout, again.stderr


def test_a_damaged_database_on_a_disk_with_room_is_still_called_one(cli, small_disk: Path) -> None:
    inst = Instance.create("damaged")
    inst.turns_path.write_bytes(b"this is not SQLite at all " * 200)
    done = cli("show", "--instance", "damaged", subprocess_only=True)
    assert done.returncode != 0 and "not a readable SQLite database" in done.stderr, done.stderr
    assert "disk is full" not in done.stderr
