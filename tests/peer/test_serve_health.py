"""serve_health.json: written by `mnemara serve`, read by `peer status`; a hand-edited or planted file
is ignored with one line, never trusted or followed."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mnemara.peer import health


def test_a_running_panel_its_last_delivery_and_its_running_turn(tmp_path: Path) -> None:
    now = time.time()
    record = health.ServeHealth(pid=os.getpid(), started_at=now - 60, delivered_turns=3, failed_turns=1,
                                last_delivery_at=now - 5, last_delivery_messages=2, running_since=now - 2,
                                running_messages=1)
    health.save(tmp_path, record)
    assert oct((tmp_path / health.FILE_NAME).stat().st_mode & 0o777) == "0o600"
    lines = health.describe(tmp_path, now=now)
    assert lines[0].startswith(f"serve: running (pid {os.getpid()}, since ")
    assert lines[1] == "serve turns: 3 delivered, 1 failed"
    assert lines[2].endswith("(2 message(s), 5s ago)") and lines[3].endswith("(1 message(s), 2s)")


def test_a_panel_killed_without_a_clean_stop_is_not_shown_running(tmp_path: Path) -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    health.save(tmp_path, health.ServeHealth(pid=gone.pid, started_at=time.time(), running_since=time.time()))
    lines = health.describe(tmp_path)
    assert "not running" in lines[0] and "ended without a clean stop" in lines[0]
    assert lines[-1] == "running turn: none"
    health.save(tmp_path, health.ServeHealth(pid=gone.pid, started_at=time.time(), stopped_at=time.time()))
    assert "stopped cleanly" in health.describe(tmp_path)[0]


@pytest.mark.parametrize("content", ["not json", "[" * 100_000 + "]" * 100_000, '{"pid": "x", "started_at": 1}',
                                     '{"pid": 1}', "[]", "x" * (health.MAX_BYTES + 1)])
def test_a_file_that_is_not_a_health_record_is_ignored_in_one_line(tmp_path: Path, content: str) -> None:
    (tmp_path / health.FILE_NAME).write_text(content, encoding="utf-8")
    assert health.load(tmp_path) is None
    lines = health.describe(tmp_path)
    assert len(lines) == 1 and "is not a health record of mnemara serve" in lines[0]


def test_a_planted_link_is_neither_read_nor_written_through(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.json"
    target.write_text('{"pid": 1, "started_at": 1}', encoding="utf-8")
    root = tmp_path / "inst"
    root.mkdir()
    (root / health.FILE_NAME).symlink_to(target)
    assert health.load(root) is None and "is not a health record" in health.describe(root)[0]
    with pytest.raises(OSError):
        health.save(root, health.ServeHealth(pid=os.getpid(), started_at=time.time()))
    assert target.read_text(encoding="utf-8") == '{"pid": 1, "started_at": 1}'


def test_no_file_means_no_panel_has_served(tmp_path: Path) -> None:
    assert health.describe(tmp_path) == ["serve: no headless panel has run on this instance (mnemara serve)"]
