"""Small filesystem helpers: atomic writes and appends that never tear."""
from __future__ import annotations

import fcntl
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator


def atomic_write_text(path: Path, text: str, encoding: str = "utf-8") -> None:
    """Write ``text`` to ``path`` via a temp file in the same folder and a rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding=encoding, newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive advisory lock on ``path`` (created if missing) for the block."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def locked_append(path: Path, text: str) -> None:
    """Append ``text`` to ``path`` under an exclusive lock in one write call.

    Safe across processes: two writers never interleave inside one record.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = text.encode("utf-8")
    while True:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                if not _same_file(fd, path):
                    continue  # replaced by rewrite_locked while we waited: append to the new file
                view = memoryview(data)
                while view:
                    written = os.write(fd, view)
                    view = view[written:]
                return
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)


def _same_file(fd: int, path: Path) -> bool:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (mine.st_ino, mine.st_dev) == (st.st_ino, st.st_dev)


def rewrite_locked(path: Path, transform: Callable[[str], "str | None"]) -> bool:
    """Rewrite an append-only file atomically while holding the lock appenders take.

    ``transform(old_text)`` returns the new text, or None to leave the file as it is.
    Appenders that were waiting for the lock notice the file was replaced and append
    to the new one, so nothing is lost. Returns True when the file was rewritten.
    """
    path = Path(path)
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            with open(path, "rb") as fh:
                old = fh.read().decode("utf-8")
            new = transform(old)
            if new is None or new == old:
                return False
            mode = os.fstat(fd).st_mode & 0o777
            atomic_write_text(path, new)
            os.chmod(path, mode)
            return True
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
