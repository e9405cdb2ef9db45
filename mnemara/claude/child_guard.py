"""The Claude CLI dies with Mnemara, even on ``kill -9``.

The SDK starts the CLI with no hook to run code in the child before ``exec``
(no ``preexec_fn``), and a killed parent runs no cleanup, so a CLI in the
middle of an API call (or of its retries) would keep going on its own. On Linux
the kernel can do the cleanup: ``prctl(PR_SET_PDEATHSIG, SIGKILL)`` in the
child makes it receive SIGKILL when the thread that started it ends.

:func:`guarded_cli_path` returns a tiny launcher to use as
``ClaudeAgentOptions.cli_path``: it sets the parent-death signal, checks that
its parent (``MNEMARA_PARENT_PID`` from :func:`guard_env`) is still the one
that started it (closing the race where the parent dies before ``prctl``), and
``exec``\\ s the real CLI in place.

No command the CLI runs outlives it either. Its Bash tool starts every command in a session of its own
(``setsid``), so neither the parent-death signal (not inherited) nor killing the CLI's process group
reaches a ``sleep 90`` it started: that was left running with parent PID 1 after a stopped turn, a
``/quit`` or a killed panel. So before the ``exec`` the launcher sets :data:`TREE_ENV` to a mark unique
to this launch, which every process under the CLI inherits, and forks a watchdog: a child of the CLI
that holds none of its pipes and waits for the CLI to end (its own parent-death signal, SIGTERM, tells
it), however it ends (killed by a stop, ended by ``/quit``, or killed with the panel). It then kills
every process of this user that carries the mark (with its process group) and exits. A command that
clears its own environment (``env -i``) escapes the mark; nothing else started under the CLI does.

The launcher also puts the CLI in a session of its own (``setsid``): Mnemara
alone decides when a CLI ends (the REPL already keeps a terminal's Ctrl+C from
signalling it, see :mod:`mnemara.ui.repl.keys`), and where the kernel groups
CPU time by session (Linux's autogroup, on by default on desktops) the CLI
booting and answering does not take its share from the UI's, which matters
most when the machine is busy.

The launcher lives in the user's cache folder, private to the user. Elsewhere
than Linux (no ``prctl``), or when the CLI cannot be found, it returns ``None``
and the SDK starts the CLI directly as before.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import sys
from pathlib import Path
from typing import Any

from mnemara.core import json_limits
from mnemara.core.fsutil import write_all
from mnemara.core.user_cache import cache_dir as cache_dir  # the launcher and the early records live there

PARENT_ENV = "MNEMARA_PARENT_PID"
#: The mark every process started under one CLI inherits (set by the launcher, unique per launch).
TREE_ENV = "MNEMARA_CLI_TREE"

_LAUNCHER = '''#!{python} -IS
# Written by Mnemara (mnemara/claude/child_guard.py): start the Claude CLI so that it, and every command it
# runs, dies with its parent.
import ctypes, os, signal, sys
PR_SET_PDEATHSIG = 1
libc = ctypes.CDLL(None, use_errno=True)
if libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) != 0:
    sys.stderr.write("mnemara: prctl(PR_SET_PDEATHSIG) failed; the CLI would outlive its parent\\n")
    sys.exit(70)
expected = os.environ.get({parent_env!r}, "")
if expected.isdigit() and os.getppid() != int(expected):
    sys.exit(71)  # the parent died before the guard was armed
try:
    os.setsid()  # a session of its own: no terminal signal reaches it; its own CPU share (autogroup)
except OSError:
    pass  # already a session leader
# Every process the CLI starts inherits this mark, even the shells it puts in sessions of their own.
mark = "%d-%s" % (os.getpid(), os.urandom(8).hex())
os.environ[{tree_env!r}] = mark
cli_pid = os.getpid()
if os.fork() == 0:
    # The watchdog: a child of the CLI, woken when the CLI ends (however it ends), that then kills every
    # process still carrying the mark (a Bash command of a stopped turn, say).
    for fd in os.listdir("/proc/self/fd"):
        try:
            os.close(int(fd))
        except OSError:
            pass
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGTERM])
    libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
    if os.getppid() == cli_pid:
        signal.sigwait([signal.SIGTERM])
    me, needle = os.getpid(), ("%s=%s" % ({tree_env!r}, mark)).encode() + bytes(1)
    for _round in range(20):
        found = []
        for name in os.listdir("/proc"):
            if not name.isdigit() or int(name) == me:
                continue
            try:
                with open("/proc/%s/environ" % name, "rb") as fh:
                    if needle in bytes(1) + fh.read() + bytes(1):
                        found.append(int(name))
            except OSError:
                pass
        if not found:
            break
        for pid in found:
            for kill in (lambda: os.killpg(os.getpgid(pid), signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
                try:
                    kill()
                except OSError:
                    pass
    os._exit(0)
os.execv({cli!r}, [{cli!r}] + sys.argv[1:])
'''


def _real_cli() -> str | None:
    """The Claude CLI the SDK would start: its bundled binary, else ``claude`` on PATH (found without
    importing the SDK, so a CLI can start before that import)."""
    from mnemara.claude.locate import bundled_cli_path

    bundled = bundled_cli_path()
    if os.path.isabs(bundled) and os.path.isfile(bundled) and os.access(bundled, os.X_OK):
        return bundled
    return shutil.which("claude")


#: A record in the cache folder larger than this is not believed.
MAX_RECORD_BYTES = 4 * 1024 * 1024


def read_cached_json(path: Path) -> dict[str, Any]:
    """The JSON object in ``path``, or {} unless it is a regular file of this user's (not a link), of
    sane size, holding a JSON object: a record anyone else could have written is not believed."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return {}
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or info.st_size > MAX_RECORD_BYTES:
            return {}
        with os.fdopen(fd, "rb") as fh:
            fd = -1
            data = json_limits.loads(fh.read(), max_bytes=MAX_RECORD_BYTES)
    except (OSError, ValueError):
        return {}
    finally:
        if fd >= 0:
            os.close(fd)
    return data if isinstance(data, dict) else {}


def write_cached_json(path: Path, data: dict[str, Any]) -> None:
    """Replace ``path`` with ``data`` as a 0600 file (a 0700 folder made if missing), through a temp file
    that is never a followed link. A cache that cannot be written is no record: nothing is raised."""
    try:
        write_cached(path, json.dumps(data).encode("utf-8"), 0o600)
    except OSError:
        pass


def write_cached(path: Path, data: bytes, mode: int) -> None:
    """Replace ``path`` in the cache folder with ``data`` (file mode ``mode``, a 0700 folder made if
    missing) through a temp file opened with ``O_NOFOLLOW``: a planted link is never written through."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, mode)
    try:
        write_all(fd, data)
        os.fchmod(fd, mode)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def guarded_cli_path() -> str | None:
    """Path of the launcher that ties the CLI's life to this process (Linux), else ``None``."""
    if not sys.platform.startswith("linux"):
        return None
    cli = _real_cli()
    if cli is None:
        return None
    text = _LAUNCHER.format(python=sys.executable, cli=cli, parent_env=PARENT_ENV, tree_env=TREE_ENV)
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    folder = cache_dir()
    path = folder / f"claude-guard-{digest}"
    try:
        if path.is_file() and path.read_text(encoding="utf-8") == text:
            return str(path)
        write_cached(path, text.encode("utf-8"), 0o700)
    except OSError:
        return None  # no writable cache: start the CLI unguarded rather than not at all
    return str(path)


def guard_env() -> dict[str, str]:
    """Env entries the launcher reads (this process's pid)."""
    return {PARENT_ENV: str(os.getpid())}
