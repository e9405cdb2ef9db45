"""Small filesystem helpers: atomic writes and appends that never tear, private by default.

Instance folders hold conversations and memory, so what these helpers create is
private to the user: folders 0700, files 0600 (whatever the umask says).

They never write through a link. A file they open or replace must be a regular file (or
missing) with one name (a hard link, which ``O_NOFOLLOW`` does not see, is another name of
another file: refused), opened with ``O_NOFOLLOW``; below the Mnemara home every folder on
the way to it must be a real folder, not a symlink (:func:`check_no_links`). A planted
``memory/<today>.md -> ~/.bashrc`` (symbolic or hard) is refused with :class:`LinkRefused`
(an ``OSError``) instead of being appended to.
"""
from __future__ import annotations

import errno
import fcntl
import os
import stat
import tempfile
import threading
from collections import OrderedDict
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600


class LinkRefused(OSError):
    """A path Mnemara was about to write is (or passes through) a link or a special file.

    An ``OSError`` (``ELOOP``) on purpose, not a :class:`MnemaraError`: a refused write fails like any
    other failed write, through the handlers every writer already has."""

    def __init__(self, path: Path, why: str) -> None:
        super().__init__(errno.ELOOP, f"{path}: refused: {why} (Mnemara writes only regular files in real "
                                      "folders, never through a link)")
        self.path = Path(path)


def _home_anchors() -> list[str]:
    """The Mnemara home as configured and as resolved: folders below it are checked for links."""
    env = os.environ.get("MNEMARA_HOME")
    home = os.path.abspath(os.path.expanduser(env)) if env else os.path.join(os.path.expanduser("~"), ".mnemara")
    return list(dict.fromkeys([home, os.path.realpath(home)]))


def check_no_links(path: Path) -> None:
    """Raise :class:`LinkRefused` when ``path`` is a link or special file, or when a folder between
    the Mnemara home and ``path`` is a symlink (or not a folder). Missing parts are fine."""
    path = Path(os.path.abspath(path))
    text = str(path)
    for anchor in _home_anchors():
        if text.startswith(anchor.rstrip(os.sep) + os.sep):
            current = Path(anchor)
            for part in path.relative_to(anchor).parts[:-1]:
                current = current / part
                try:
                    mode = os.lstat(current).st_mode
                except FileNotFoundError:
                    break
                if stat.S_ISLNK(mode):
                    raise LinkRefused(path, f"the folder {current} is a symbolic link")
                if not stat.S_ISDIR(mode):
                    raise LinkRefused(path, f"{current} is not a folder")
            break
    check_regular(path)


#: Files SQLite writes beside a database (they must not be links either).
SQLITE_COMPANIONS = ("-wal", "-shm", "-journal")


def check_sqlite_files(path: Path) -> None:
    """:func:`check_no_links` for a SQLite database and the files SQLite writes beside it (SQLite
    follows links: a planted ``x.sqlite-wal -> ~/.bashrc`` would be written through)."""
    for name in (Path(path), *(Path(f"{path}{suffix}") for suffix in SQLITE_COMPANIONS)):
        check_no_links(name)


def check_regular(path: Path) -> None:
    """Raise :class:`LinkRefused` unless ``path`` is missing or a regular file with one name (not a link,
    hard or symbolic, nor a pipe or device)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(info.st_mode):
        raise LinkRefused(Path(path), "it is a symbolic link")
    _check_file(Path(path), info)


def _check_file(path: Path, info: os.stat_result) -> None:
    if not stat.S_ISREG(info.st_mode):
        raise LinkRefused(path, "it is not a regular file")
    if info.st_nlink > 1:
        raise LinkRefused(path, f"it is a hard link: the file has {info.st_nlink} names, so writing it would "
                                "change another one; to keep it, give it a copy of its own: "
                                f"cp -p '{path}' '{path}.copy' && mv '{path}.copy' '{path}'")


def open_nofollow(path: Path, flags: int, mode: int = PRIVATE_FILE) -> int:
    """``os.open`` of a regular file with one name, without following a link at ``path`` or in checked
    parents. ``O_TRUNC`` is applied only once the file opened is known to be one to write."""
    check_no_links(path)
    try:
        fd = os.open(path, (flags & ~os.O_TRUNC) | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # it became a link between the check and the open
            raise LinkRefused(Path(path), "it is a symbolic link") from None
        raise
    try:
        info = os.fstat(fd)
        _check_file(Path(path), info)  # the file opened, whatever the name meant a moment ago
        if flags & os.O_TRUNC and info.st_size:  # a new file has nothing to cut
            os.ftruncate(fd, 0)
    except BaseException:
        os.close(fd)
        raise
    return fd


def private_mkdir(path: Path) -> None:
    """Create ``path`` and its missing parents as 0700 folders; existing folders are left as they are.

    Below the Mnemara home a symlinked folder on the way is refused (:class:`LinkRefused`).
    """
    path = Path(path)
    _check_folder(path)
    if path.is_dir():
        return
    if path.parent != path and not path.parent.is_dir():
        private_mkdir(path.parent)
    try:
        path.mkdir(mode=PRIVATE_DIR)
    except FileExistsError:
        if not path.is_dir():
            raise


def _check_folder(path: Path) -> None:
    """:func:`check_no_links` for a folder: the folder itself may exist, as a real folder."""
    check_no_links(Path(path) / "_")


def tighten_modes(folder: Path) -> int:
    """Take group and other permissions off everything under ``folder`` (folders 0700, files 0600 at
    most); links are skipped, nothing is followed. For folders a library writes with its own modes
    (LanceDB's ``index/``, Kuzu's ``graph/``). Returns how many entries were changed; never raises."""
    changed = 0
    for base, dirs, files in os.walk(folder, followlinks=False):
        for name in (*dirs, *files):
            path = os.path.join(base, name)
            try:
                mode = os.lstat(path).st_mode
                if stat.S_ISLNK(mode) or not mode & 0o077:
                    continue
                os.chmod(path, stat.S_IMODE(mode) & 0o700)
                changed += 1
            except OSError:
                continue
    return changed


def touch_private(path: Path) -> None:
    """Create ``path`` as an empty 0600 file if it does not exist (an existing file is untouched)."""
    os.close(open_nofollow(path, os.O_WRONLY | os.O_CREAT))


def atomic_write_text(path: Path, text: str, encoding: str = "utf-8") -> None:
    """Write ``text`` to ``path`` via a temp file in the same folder and a rename (a new file is 0600)."""
    path = Path(path)
    private_mkdir(path.parent)
    check_no_links(path)
    _write_and_replace(path, text.encode(encoding))


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to the descriptor ``fd`` (``os.write`` may take only part of it)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def rewrite_in_place(fd: int, data: bytes) -> None:
    """Make ``data`` the start of the open file ``fd`` by writing over what is there, without truncating first
    (truncating frees the file's block: about 0.9 ms on a busy disk, on paths that run for every call). The
    caller pads ``data`` to a fixed width, so the old content is covered; a longer file, not written so, is
    cut first."""
    if os.fstat(fd).st_size > len(data):
        os.ftruncate(fd, 0)
    os.pwrite(fd, data, 0)


def _write_and_replace(path: Path, data: bytes, mode: int | None = None) -> None:
    """Write ``data`` to a temp file beside ``path``, fsync it, then rename it over ``path``."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
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
    private_mkdir(path.parent)
    fd = open_nofollow(path, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def locked_append(path: Path, text: str, *, own_line: bool = False) -> int:
    """Append ``text`` to ``path`` under an exclusive lock in one write call; returns where it starts.

    Safe across processes: two writers never interleave inside one record, and a
    file replaced by a rewriter while we waited is appended to in its new form.
    With ``own_line`` a file whose last line was cut short (a writer killed mid-write)
    gets a newline first, so the new record is never glued onto the torn one.
    """
    path = Path(path)
    private_mkdir(path.parent)
    data = text.encode("utf-8")
    fd = _open_locked(path, (os.O_RDWR if own_line else os.O_WRONLY) | os.O_APPEND | os.O_CREAT)
    try:
        start = os.fstat(fd).st_size
        if own_line and start and os.pread(fd, 1, start - 1) != b"\n":
            data = b"\n" + data
            start += 1
        write_all(fd, data)
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
    return start


class HeldAppender:
    """:func:`locked_append` for a file written often: the file stays open between records.

    Each :meth:`append` takes the same exclusive lock, checks the path still names the
    open file (a rewriter, or someone rotating or deleting it, may have replaced it: then
    it is opened again, as :func:`locked_append` would) and writes the record in one call.
    At most :attr:`MAX_OPEN` appenders hold a file open at a time (the least recently used
    one lets go and reopens on its next record), so a process that touches many instances
    does not run out of descriptors. Thread-safe.
    """

    MAX_OPEN = 16
    _held: OrderedDict[int, HeldAppender] = OrderedDict()
    _held_lock = threading.Lock()

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._fd: int | None = None
        self._lock = threading.Lock()

    def append(self, text: str) -> None:
        """Append ``text`` under the lock, in one write; raises OSError like :func:`locked_append`."""
        data = text.encode("utf-8")
        with self._lock:
            fd = self._locked_fd()
            try:
                write_all(fd, data)
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)

    def close(self) -> None:
        with self._lock:
            self._let_go()

    def _locked_fd(self) -> int:
        fd = self._fd
        if fd is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
            if _same_file(fd, self.path):
                self._note_use()
                return fd
            fcntl.flock(fd, fcntl.LOCK_UN)
            self._let_go()
        private_mkdir(self.path.parent)
        fd = self._fd = _open_locked(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        self._note_use()
        return fd

    def _note_use(self) -> None:
        with HeldAppender._held_lock:
            held = HeldAppender._held
            held[id(self)] = self
            held.move_to_end(id(self))
            idle = [a for a in held.values() if a is not self][:max(0, len(held) - self.MAX_OPEN)]
        for other in idle:
            if other._lock.acquire(blocking=False):  # one busy writing keeps its file this time
                try:
                    other._let_go()
                finally:
                    other._lock.release()

    def _let_go(self) -> None:
        with HeldAppender._held_lock:
            HeldAppender._held.pop(id(self), None)
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    @classmethod
    def _after_fork_in_child(cls) -> None:
        """A forked child shares its parent's open files, and a lock taken through a shared one
        does not keep the parent out: the child lets go of them and opens its own when it writes."""
        cls._held_lock = threading.Lock()
        for appender in list(cls._held.values()):
            appender._lock = threading.Lock()
            fd, appender._fd = appender._fd, None
            if fd is not None:
                os.close(fd)
        cls._held.clear()


os.register_at_fork(after_in_child=HeldAppender._after_fork_in_child)


def _same_file(fd: int, path: Path) -> bool:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (mine.st_ino, mine.st_dev) == (st.st_ino, st.st_dev)


def _open_locked(path: Path, flags: int) -> int:
    """Open ``path`` and hold an exclusive lock on the file that is *still* at ``path``.

    Rewriters replace a file by renaming a new one over it while holding the lock
    on the old one. Whoever opened the old file and waited for its lock would
    otherwise write into (or rewrite) an unlinked file, so after locking we check
    the path still names the locked inode and start again if not.
    """
    while True:
        fd = open_nofollow(path, flags)
        fcntl.flock(fd, fcntl.LOCK_EX)
        if _same_file(fd, path):
            return fd
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def _replace_locked(fd: int, path: Path, data: bytes) -> None:
    """Swap ``data`` in at ``path`` (temp file, fsync, rename) keeping the locked file's mode."""
    _write_and_replace(path, data, os.fstat(fd).st_mode & 0o777)


def rewrite_locked(path: Path, transform: Callable[[str], "str | None"]) -> bool:
    """Rewrite an append-only file atomically while holding the lock appenders take.

    ``transform(old_text)`` returns the new text, or None to leave the file as it is.
    Appenders that were waiting for the lock notice the file was replaced and append
    to the new one, so nothing is lost. Bytes that are not UTF-8 (a line cut short by a
    killed writer) reach ``transform`` as surrogate escapes and are written back as they
    were. Returns True when the file was rewritten.
    """
    with locked_rewrite(path) as (data, replace):
        old = data.decode("utf-8", "surrogateescape")
        new = transform(old)
        if new is None or new == old:
            return False
        replace(new.encode("utf-8", "surrogateescape"))
        return True


@contextmanager
def locked_rewrite(path: Path) -> Iterator[tuple[bytes, Callable[[bytes], None]]]:
    """Lock ``path`` and yield ``(current bytes, replace)``; ``replace(new)`` swaps it atomically.

    Byte-level form of :func:`rewrite_locked` for callers that must do other work
    (e.g. write an archive) between reading and replacing, under the same lock.
    """
    path = Path(path)
    fd = _open_locked(path, os.O_RDONLY)
    try:
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        yield b"".join(chunks), lambda new: _replace_locked(fd, path, new)
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


#: Below this much free space an I/O failure is taken for a full disk (SQLite needs room for its -shm and -wal).
LOW_SPACE_BYTES = 16 * 1024 * 1024


def free_bytes(path: Path) -> int | None:
    """Bytes free to this user on the filesystem holding ``path`` (its nearest existing folder); None
    when it cannot be told."""
    probe = Path(os.path.abspath(path))
    while not probe.exists() and probe.parent != probe:
        probe = probe.parent
    try:
        info = os.statvfs(probe)
    except OSError:
        return None
    return info.f_bavail * info.f_frsize


def disk_full_reason(path: Path, exc: BaseException) -> str | None:
    """"the disk is full (N bytes free)" when ``exc`` (a write or SQLite failure at ``path``) comes from a
    full disk rather than a damaged file: ENOSPC, SQLite's SQLITE_FULL, or an I/O error with almost no
    space left. None otherwise."""
    name = str(getattr(exc, "sqlite_errorname", "") or "")
    io_error = isinstance(exc, OSError) and exc.errno in (errno.EIO, errno.ENOSPC, errno.EDQUOT)
    full = name == "SQLITE_FULL" or (isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT))
    if not (full or io_error or name.startswith("SQLITE_IOERR") or "disk I/O error" in str(exc)):
        return None
    free = free_bytes(path)
    if not full and (free is None or free >= LOW_SPACE_BYTES):
        return None
    shown = "unknown" if free is None else f"{free} bytes"
    return f"the disk is full ({shown} free where {Path(path).name} lives)"
