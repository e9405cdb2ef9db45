"""End a finished ``mnemara run`` without Python's interpreter teardown.

Once the session, its CLI processes and the recall worker are closed, tearing
down the interpreter (clearing every module of the SDK, pydantic and Textual,
then a last collection) only delays the exit, by 0.1 to 0.2 s measured after a
REPL's last answer. :func:`leave_after_command` marks the running command as
done with everything; :func:`end_process` (called by the command group when the
``mnemara`` process itself ran it, never when a test invokes the group in its
own process) flushes stdout and stderr, runs the ``atexit`` handlers (the
loggers flush and close there) and ends the process with its exit code. A
process with a non-daemon thread still running ends the usual way.
"""
from __future__ import annotations

import atexit
import os
import sys
import threading

_wanted = False


def leave_after_command() -> None:
    """The running command has closed everything it opened: its process may end without teardown."""
    global _wanted
    _wanted = True


def end_process(code: object) -> None:
    """End the process now with ``code`` (a ``SystemExit`` code) when the command asked for it; returns
    otherwise (nothing asked, or a thread that the usual exit would wait for is still running)."""
    if not _wanted:
        return
    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        return
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:
        print(code, file=sys.stderr)
        status = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    atexit._run_exitfuncs()
    os._exit(status & 0xFF)
