"""A record that Mnemara closed the Kuzu file cleanly, so the next open may skip the crash probe.

Opening an existing graph file first runs a child process that opens it (the
crash probe, see :mod:`mnemara.memory.graph.store`), because a damaged file can crash
Kuzu instead of raising. That costs a Python start and a Kuzu import on every
session that touches the graph. When nothing can have changed since Mnemara
itself closed the file, the probe would only repeat what the last session
proved, so it is skipped:

* a clean close writes ``graph/clean-close.json`` with the Kuzu version and the
  file's size, mtime, ctime, inode and device;
* opening the file for writing removes the stamp first, so a session that dies
  with the file open never leaves a valid one behind. Another process that opens
  the file between a close and its stamp either leaves it exactly as it was, or
  writes a WAL (or shadow) file beside it and changes its times: each refuses
  the stamp;
* the probe is skipped only when the stamp is well formed and every recorded
  value equals the file's now, no other ``graph.kuzu*`` file (a WAL, a shadow
  file, a rewrite in progress) lies beside it, and the stamp was written in a
  later filesystem clock tick than the file's last change (otherwise a write in
  the same tick as the recorded one would be invisible, git's "racy clean"
  case). Anything else (no stamp, unreadable or hand-edited stamp, another Kuzu
  version, any difference) means: probe as before.

The ctime cannot be set back by a user, so any later write, truncation,
rename over the file or ``touch`` shows up as a mismatch.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

from mnemara.core.fsutil import atomic_write_text

STAMP_FILE = "clean-close.json"
FORMAT = 1
_FIELDS = ("size", "mtime_ns", "ctime_ns", "ino", "dev")
_TICK_WAIT = 0.002  # seconds to wait for the filesystem clock to move past the file's last change
_TICK_TRIES = 25


def stamp_path(db_file: Path) -> Path:
    return Path(db_file).with_name(STAMP_FILE)


def drop_stamp(db_file: Path) -> None:
    """Remove the stamp (before the file is opened for writing). Raises OSError when it cannot."""
    try:
        stamp_path(db_file).unlink()
    except FileNotFoundError:
        pass


def write_stamp(db_file: Path, kuzu_version: str) -> bool:
    """Record that ``db_file`` was just closed cleanly by Kuzu ``kuzu_version``; False when not recorded.

    Call it only after the database and its connections are closed without error. It never opens
    the database file itself: closing any descriptor of a file drops every POSIX lock this process
    holds on it, Kuzu's included (a second ``Database`` on the file in this process would lose it).
    """
    db_file = Path(db_file)
    if not kuzu_version:
        return False
    try:
        st = os.stat(db_file)
        if _companions(db_file):
            return False
        text = json.dumps({"format": FORMAT, "kuzu": kuzu_version, **{f: getattr(st, f"st_{f}") for f in _FIELDS}},
                          sort_keys=True)
        for _ in range(_TICK_TRIES):
            atomic_write_text(stamp_path(db_file), text)
            if _written_after(stamp_path(db_file), st.st_mtime_ns, st.st_ctime_ns):
                return True
            time.sleep(_TICK_WAIT)
        drop_stamp(db_file)
    except OSError:
        try:
            drop_stamp(db_file)
        except OSError:
            pass
    return False


def stamped_version(db_file: Path) -> str | None:
    """The Kuzu version recorded by a clean close when ``db_file`` is unchanged since; None otherwise.

    The caller compares it with the Kuzu it is about to use and probes on any difference.
    """
    db_file = Path(db_file)
    stamp = stamp_path(db_file)
    try:
        record = json.loads(stamp.read_text(encoding="utf-8"))
        st = os.stat(db_file)
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or set(record) != {"format", "kuzu", *_FIELDS}:
        return None
    if type(record["format"]) is not int or record["format"] != FORMAT:
        return None
    version = record["kuzu"]
    if not isinstance(version, str) or not version:
        return None
    for field in _FIELDS:
        value = record[field]
        if type(value) is not int or value != getattr(st, f"st_{field}"):
            return None
    try:
        if not _written_after(stamp, st.st_mtime_ns, st.st_ctime_ns) or _companions(db_file):
            return None
    except OSError:
        return None
    return version


def unchanged_since_clean_close(db_file: Path, kuzu_version: str) -> bool:
    """Whether ``db_file`` is exactly as Kuzu ``kuzu_version`` left it at a recorded clean close
    (no version known: never, so the caller probes)."""
    return bool(kuzu_version) and stamped_version(db_file) == kuzu_version


def file_state(db_file: Path) -> tuple[int, ...] | None:
    """What the stamp compares, as a tuple (None when the file cannot be read): equal tuples mean
    the file has not been written, truncated, replaced or touched in between."""
    try:
        st = os.stat(db_file)
    except OSError:
        return None
    return tuple(getattr(st, f"st_{field}") for field in _FIELDS)


def _written_after(stamp: Path, mtime_ns: int, ctime_ns: int) -> bool:
    """Whether the stamp's own mtime is later than the file's last change (a later clock tick)."""
    return os.stat(stamp).st_mtime_ns > max(mtime_ns, ctime_ns)


def has_companions(db_file: Path) -> bool:
    """Whether a WAL, shadow or rewrite file of ``db_file`` lies beside it (True when unsure)."""
    try:
        return bool(_companions(db_file))
    except OSError:
        return True


def _companions(db_file: Path) -> list[str]:
    """Other files named after ``db_file`` (Kuzu's WAL and shadow files, a rewrite in progress)."""
    prefix = db_file.name
    return [name for name in os.listdir(db_file.parent) if name.startswith(prefix) and name != prefix]
