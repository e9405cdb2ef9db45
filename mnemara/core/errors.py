"""Exceptions that reach the user as one clear line.

Every error a user can cause (a bad name, a malformed file, a refused URL) is a
:class:`MnemaraError`. The CLI prints ``error: <message>`` and exits with
``exit_code``; the UIs show the message; nothing else is touched.
"""
from __future__ import annotations


class MnemaraError(Exception):
    """A user-facing error. ``exit_code`` 2 means bad input, 1 a failed operation."""

    exit_code: int = 1

    def __init__(self, message: str, *, exit_code: int | None = None) -> None:
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else ""


class UsageError(MnemaraError):
    """Bad input from the user: a name, a path, an argument."""

    exit_code = 2


class InstanceNotFound(MnemaraError):
    exit_code = 2


class InstanceExists(MnemaraError):
    exit_code = 2


class InstanceBusy(MnemaraError):
    """Another ``mnemara run`` has this instance open (two would interleave one window)."""


class ConfigError(MnemaraError):
    """config.json (or another hand-edited file) could not be read; it is left untouched."""

    exit_code = 2


class StoreError(MnemaraError):
    """turns.sqlite is corrupt or not a Mnemara store; it is never overwritten."""

    exit_code = 2


class BackendUnavailable(MnemaraError):
    """An optional backend (LanceDB, Kuzu, an embedder, ...) is missing, off or broken.

    Callers catch this base class (or a subclass such as ``RagUnavailable``)
    and degrade: the primary action still succeeds and the answer names the
    backend and the reason. ``str(exc)`` is the reason alone.
    """


class StoreUnavailable(StoreError):
    """turns.sqlite cannot take a write right now (locked by another process, or damaged)."""

    exit_code = 1
