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
:class:`~mnemara.core.errors.BackendUnavailable` subclass with a one-line reason.

LanceDB imports ``lance_namespace``, which takes its data models from the REST
client package ``lance_namespace_urllib3_client``; that package's ``__init__``
also builds every REST API class (pydantic-validated methods): 1.5 s of CPU,
more than the rest of LanceDB, for a client Mnemara never uses (it opens local
folders). Before LanceDB is imported, that package is registered with its
``__init__`` deferred (:func:`defer_package_init`): its submodules (the models)
import as usual, and the ``__init__`` runs, complete, the first time anything
asks the package itself for a name.

A backend's import must not configure the process's logging: ``wordllama`` (the local
embedder) calls ``logging.basicConfig(level=logging.INFO)`` in its ``__init__``, which hangs
a stderr handler on the root logger, so every later debug.log event of an instance logger
(they propagate to the root, as a library's records do) was also printed over the REPL and
the demo (``INFO:mnemara.instance.scratch.<hex>:rows_left_window``). :func:`load_backend`
gives the root logger back its handlers and level as they were before the import.
"""
from __future__ import annotations

import atexit
import contextlib
import importlib
import importlib.util
import logging
import re
import sys
import threading
from types import ModuleType
from typing import Any, Iterator

from mnemara.core.errors import BackendUnavailable

# Top-level packages whose imports must not interleave with each other's share a lock.
_FAMILY = {"pyarrow": "lancedb", "lance": "lancedb"}
_locks: dict[str, threading.RLock] = {}
# Packages whose own __init__ is deferred before a backend is imported (see the module docstring).
_DEFERRED = {"lancedb": ("lance_namespace_urllib3_client",)}
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
            for package in _DEFERRED.get(module.split(".", 1)[0], ()):
                defer_package_init(package)
            with root_logging_kept():
                return importlib.import_module(module)
        except Exception as exc:  # ImportError or a broken native module
            raise error(f"cannot import {module.split('.', 1)[0]} ({import_failure(exc)})") from None


@contextlib.contextmanager
def root_logging_kept() -> Iterator[None]:
    """Whatever runs inside leaves the root logger's handlers and level as they were (see the module
    docstring: a backend that calls ``logging.basicConfig`` on import)."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        yield
    finally:
        for handler in [h for h in root.handlers if h not in handlers]:
            root.removeHandler(handler)
            handler.close()
        root.setLevel(level)


def defer_package_init(name: str) -> None:
    """Register package ``name`` so that importing its submodules does not run its ``__init__``.

    The ``__init__`` runs, once and whole, when the package is first asked for an attribute
    it does not have yet (``pkg.X``, ``from pkg import X``), so every use still works. Nothing
    happens when the package is imported already or is not installed.
    """
    if name in sys.modules:
        return
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return
    package = importlib.util.module_from_spec(spec)
    loader = spec.loader
    lock = threading.RLock()

    def __getattr__(attr: str) -> Any:
        with lock:
            if package.__dict__.pop("__getattr__", None) is not None:
                loader.exec_module(package)
        try:
            return package.__dict__[attr]
        except KeyError:
            raise AttributeError(f"module {name!r} has no attribute {attr!r}") from None

    package.__getattr__ = __getattr__  # type: ignore[method-assign]  # PEP 562: a module may define __getattr__
    sys.modules[name] = package


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
