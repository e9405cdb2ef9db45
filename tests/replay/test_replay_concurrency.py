"""Archiving rewrites a day file while `mnemara note` may be appending to it: nothing is lost."""
from __future__ import annotations

import subprocess
import sys
import os
from pathlib import Path
import threading
import time
from collections import Counter

from mnemara.core.fsutil import locked_append, locked_rewrite
from mnemara.replay import run_replay

from tests.conftest import cli_env
from replay_helpers import NOW, make_instance, where_is_every_atom

WRITER = """
import sys
from datetime import datetime, timedelta
from pathlib import Path
from mnemara.memory.notes import append_note
memory, start, count = Path(sys.argv[1]), datetime.fromisoformat(sys.argv[2]), int(sys.argv[3])
for i in range(count):
    append_note(memory, "The lease timeout in server.py is 30 seconds.", "insight", when=start + timedelta(seconds=i))
"""


def _waits_for_a_lock_on(path, timeout: float = 10.0) -> bool:
    """Whether some process of ours queues for a lock on ``path`` within ``timeout``: Linux lists a
    blocked lock request in /proc/locks with ``->`` before it, naming the file's inode."""
    inode = os.stat(path).st_ino
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for line in Path("/proc/locks").read_text().splitlines():
            fields = line.split()
            if "->" in fields and fields[-3].endswith(f":{inode}"):
                return True
        time.sleep(0.01)
    return False


def test_append_waiting_on_a_rewrite_lands_in_the_new_file(tmp_path):
    day = tmp_path / "2026-05-10.md"
    day.write_text("old\n")
    done = threading.Event()
    with locked_rewrite(day) as (data, replace):
        writer = threading.Thread(target=lambda: (locked_append(day, "appended\n"), done.set()))
        writer.start()
        assert _waits_for_a_lock_on(day), "the append never asked for the file's lock"
        assert not done.is_set()  # blocked on our lock
        replace(data.replace(b"old", b"new"))
    writer.join(5)
    assert day.read_text() == "new\nappended\n"


def test_notes_appended_during_repeated_archiving_are_all_kept():
    inst = make_instance()
    count = 150
    start = NOW.replace(hour=1)
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(inst.memory_dir), start.isoformat(), str(count)], env=cli_env()
    )
    runs = 0
    try:
        while writer.poll() is None or runs < 2:
            run_replay(inst, now=NOW, apply=True)
            runs += 1
    finally:
        writer.wait(60)
    assert writer.returncode == 0
    run_replay(inst, now=NOW, apply=True)
    places = where_is_every_atom(inst)
    stamps = Counter(ts for (ts, _, _), n in places.items() for _ in range(n))
    assert len(stamps) == count and set(stamps.values()) == {1}
    day = inst.memory_dir / f"{NOW.date().isoformat()}.md"
    assert day.read_text().count("## ") == 1  # every later copy was archived as a duplicate of the first
