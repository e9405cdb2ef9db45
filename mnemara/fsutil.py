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
    fd = _open_locked(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def _open_locked(path: Path, flags: int) -> int:
    """Open ``path`` and take an exclusive lock on the file that is *still* at ``path``.

    A rewriter (see :func:`locked_rewrite`) replaces a file by renaming a new one
    over it while holding the lock on the old one. A writer that opened the old
    file and waited for its lock would otherwise write into an unlinked file, so
    after locking we check the path still names the locked inode and retry if not.
    """
    while True:
        fd = os.open(path, flags, 0o644)
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            current = os.stat(path)
        except FileNotFoundError:
            current = None
        opened = os.fstat(fd)
        if current is not None and (current.st_ino, current.st_dev) == (opened.st_ino, opened.st_dev):
            return fd
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


@contextmanager
def locked_rewrite(path: Path) -> Iterator[tuple[bytes, Callable[[bytes], None]]]:
    """Lock ``path`` and yield ``(current bytes, replace)``; ``replace(new)`` swaps it atomically.

    The new content goes to a temp file in the same folder, is fsynced and renamed
    over ``path`` while the lock is held, so a concurrent :func:`locked_append`
    either lands before the read or in the new file, never in a lost one.
    """
    path = Path(path)
    fd = _open_locked(path, os.O_RDWR)
    try:
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)

        def replace(new: bytes) -> None:
            tmp_fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
            try:
                with os.fdopen(tmp_fd, "wb") as fh:
                    fh.write(new)
                    fh.flush()
                    os.fsync(fh.fileno())
                os.chmod(tmp, os.fstat(fd).st_mode & 0o7777)
                os.replace(tmp, path)
            except BaseException:
                try:
                    os.unlink(tmp)
                except FileNotFoundError:
                    pass
                raise

        yield b"".join(chunks), replace
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
