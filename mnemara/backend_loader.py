"""The one guarded way to import a heavy optional backend (LanceDB, Kuzu, PyArrow, ...).

Python lets a second thread see a *partially initialised* module when two
threads import the same package with circular imports at the same time (the
background pre-import of LanceDB racing a tool's ``from lancedb.query import
...`` gave ``ImportError: cannot import name 'DocumentGranularity' from
partially initialized module 'lancedb.query'``). Every import of a heavy
backend therefore goes through :func:`load_backend`, which imports one package
family at a time under its own lock; a caller that arrives while another
thread is importing waits for it and then gets the finished module.

Modules that import each other while they load share one lock (PyArrow is
imported by LanceDB). A failed import raises the caller's
:class:`~mnemara.errors.BackendUnavailable` subclass with a one-line reason.
"""
from __future__ import annotations

import atexit
import importlib
import re
import threading
from types import ModuleType

from mnemara.errors import BackendUnavailable

# Top-level packages whose imports must not interleave with each other's share a lock.
_FAMILY = {"pyarrow": "lancedb", "lance": "lancedb"}
_locks: dict[str, threading.RLock] = {}
PRELOAD_EXIT_WAIT = 30.0  # seconds exit waits for a background pre-import to finish
_locks_guard = threading.Lock()


def _lock_for(module: str) -> threading.RLock:
    root = module.split(".", 1)[0]
    family = _FAMILY.get(root, root)
    with _locks_guard:
        lock = _locks.get(family)
        if lock is None:
            lock = _locks[family] = threading.RLock()
        return lock


def import_failure(exc: BaseException) -> str:
    """``Type: message`` on one line, at most 300 characters, without build-machine paths."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    text = re.sub(r",? /root/\.cargo/\S+", "", text)
    return f"{type(exc).__name__}: {text}"[:300]


def load_backend(module: str, error: type[BackendUnavailable] = BackendUnavailable) -> ModuleType:
    """Import ``module`` (e.g. ``"lancedb"`` or ``"lancedb.query"``) safely from any thread.

    Raises ``error("cannot import <module> (<reason>)")`` when the import fails,
    whatever the cause (missing package, broken native library).
    """
    with _lock_for(module):
        try:
            return importlib.import_module(module)
        except Exception as exc:  # ImportError or a broken native module
            raise error(f"cannot import {module.split('.', 1)[0]} ({import_failure(exc)})") from None


def preload_backend(module: str) -> threading.Thread:
    """Import ``module`` in a daemon thread so its first real use does not wait for it.

    A failure is swallowed here: the backend reports itself as unavailable when
    it is used. Returns the started thread (tests join it).
    """

    def run() -> None:
        try:
            load_backend(module)
        except BackendUnavailable:
            pass

    thread = threading.Thread(target=run, name=f"mnemara-preload-{module}", daemon=True)
    thread.start()
    _preloads.append(thread)
    return thread


_preloads: list[threading.Thread] = []


@atexit.register
def _finish_preloads() -> None:
    """Let a pre-import finish before the interpreter exits: a daemon thread stopped in the middle of
    LanceDB's native import aborts the process ("FATAL: exception not rethrown", SIGABRT)."""
    for thread in _preloads:
        thread.join(PRELOAD_EXIT_WAIT)
