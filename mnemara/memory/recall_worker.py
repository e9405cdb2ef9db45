"""Auto-recall in a process of its own, so the panel's process never loads LanceDB, Arrow or the embedder.

Recalling notes for every message needs the RAG index (LanceDB and Arrow: about
105 MB of native code once imported) and the local embedder (a 33 MB matrix,
tokenizers, numpy). In the panel's process they were most of its memory: 304 MB
after ten recalling turns against 89 MB with recall off (issue 30). ``mnemara
run`` gives auto-recall a :class:`RecallWorker` instead: a child
``python -m mnemara.memory.recall_worker`` that runs the very same
:func:`~mnemara.memory.autorecall.recall_for` (config.json re-read for every
message, its backends kept open between messages as a session keeps them) and
sends back the :class:`~mnemara.memory.autorecall.RecallRecord` it made, one
JSON line per message. What is injected, and why, is decided by the same code
on the same files; only the process differs.

The child starts when :meth:`RecallWorker.start` is called (``mnemara run``
does it as the session opens when auto-recall is on, so its imports overlap the
user's typing) or on the first recall. It ends when its stdin closes: when the
session closes it, or when the parent dies in any way. A worker that cannot
start, dies, answers what is not a record, or takes longer than
:data:`ANSWER_SECONDS` is ended and the session recalls in its own process from
then on (today's way): a turn never fails because of the worker.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mnemara.core.turn_parts import PartHost

import json
import os
import select
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import IO, Any

from mnemara.core.debuglog import DEBUG_LOG, instance_logger, log_event

#: How long one recall may take in the worker (its first includes importing LanceDB and loading the embedder).
ANSWER_SECONDS = 120.0


class RecallWorker:
    """The child process that recalls for one session's messages."""

    def __init__(self, instance_root: Path) -> None:
        self.instance_root = Path(instance_root)
        self.log = instance_logger(self.instance_root / DEBUG_LOG)
        self.process: subprocess.Popen[str] | None = None
        self.failed = ""  # why the worker is no longer used (then recall runs in the session's process)

    def start(self) -> bool:
        """Start the child now (idempotent); False when it cannot run."""
        if self.failed:
            return False
        if self.process is not None:
            code = self.process.poll()
            if code is None:
                return True
            self._give_up(f"it ended (exit code {code})")
            return False
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "mnemara.memory.recall_worker", str(self.instance_root)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                encoding="utf-8", errors="surrogateescape", env=_child_env())
        except OSError as exc:
            self._give_up(f"cannot start: {exc}")
            return False
        return True

    def recall(self, message: str) -> Any:
        """The ``RecallRecord`` the worker made for ``message``; None when the worker failed (it is
        not used again, and the caller recalls in its own process)."""
        from mnemara.memory.autorecall import RecallRecord

        if not self.start():
            return None
        process = self.process
        assert process is not None and process.stdin is not None and process.stdout is not None
        try:
            process.stdin.write(json.dumps({"message": message}) + "\n")
            process.stdin.flush()
            line = _read_line(process.stdout, ANSWER_SECONDS)
        except OSError as exc:
            self._give_up(f"the pipe broke: {exc}")
            return None
        if line is None:
            self._give_up(f"no answer within {ANSWER_SECONDS:.0f} s" if process.poll() is None
                          else f"it ended (exit code {process.poll()})")
            return None
        try:
            return RecallRecord(**json.loads(line)["record"])
        except (ValueError, KeyError, TypeError) as exc:
            self._give_up(f"it answered something else than a record: {exc}")
            return None

    def _give_up(self, why: str) -> None:
        self.failed = why
        log_event(self.log, "recall_worker_failed", level="warning", error=why)
        self.close()

    def close(self) -> None:
        """End the child: its stdin closed (it exits), then killed if it does not within 5 s."""
        process, self.process = self.process, None
        if process is None:
            return
        try:
            if process.stdin is not None:
                process.stdin.close()
            process.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            process.kill()
            process.wait()
        finally:
            if process.stdout is not None:
                process.stdout.close()


def attach(session: PartHost) -> RecallWorker:
    """Give ``session``'s auto-recall part a worker (started on its first recall); the caller closes it."""
    from mnemara.memory.autorecall import AutoRecall

    worker = RecallWorker(session.instance.root)
    for part in session.parts:
        if isinstance(part, AutoRecall):
            part.worker = worker
    return worker


def _child_env() -> dict[str, str]:
    """This process's environment, with this checkout's ``mnemara`` first on the child's path."""
    env = dict(os.environ)
    package_parent = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_parent, env.get("PYTHONPATH", "")) if p)
    return env


def _read_line(stream: IO[str], seconds: float) -> str | None:
    """One line from ``stream`` within ``seconds`` (None at its end or when time runs out)."""
    deadline = time.monotonic() + seconds
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        ready, _, _ = select.select([stream], [], [], left)
        if ready:
            line = stream.readline()
            return line if line.endswith("\n") else None


def serve(instance_root: Path, stdin: IO[str], stdout: IO[str]) -> int:
    """The child: one ``{"message": ...}`` line in, one ``{"record": ...}`` line out, until stdin ends."""
    from mnemara.core.config import Config
    from mnemara.store.instance import Instance
    from mnemara.memory.autorecall import recall_for
    from mnemara.memory.surfaces import HeldBackends

    instance = Instance.at(instance_root)
    state = HeldBackends()  # the backends stay open between messages, as in a session
    try:
        for line in stdin:
            message = json.loads(line)["message"]
            record = recall_for(instance, Config.load(instance.config_path), message, state)
            stdout.write(json.dumps({"record": asdict(record)}, ensure_ascii=False, default=str) + "\n")
            stdout.flush()
    finally:
        state.close()
    return 0


if __name__ == "__main__":
    sys.exit(serve(Path(sys.argv[1]), sys.stdin, sys.stdout))
