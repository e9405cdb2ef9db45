"""Auto-recall in a child process (``mnemara run``): the same record as in the session's process, and
the session's own recall whenever the worker cannot serve."""
from __future__ import annotations

import json
import sys
from typing import Any

import pytest

from mnemara.core.config import update_config
from mnemara.memory import recall_worker as worker_mod
from mnemara.memory.autorecall import recall_for
from mnemara.memory.notes import append_note
from mnemara.memory.recall_worker import RecallWorker, attach

NOTES = ["The lease manager timeout is 30 seconds unless the holder renews it.",
         "Deploys to staging run every Tuesday at noon.",
         "INC-7781: the billing export failed because the bucket was full."]


@pytest.fixture
def session(session_factory: Any) -> Any:
    s = session_factory("recall")
    for text in NOTES:
        append_note(s.instance.memory_dir, text, "fact")
    update_config(s.instance.config_path, auto_recall=True, rag_embedder="none")
    s.reload_config()
    return s


def comparable(record: Any) -> dict[str, Any]:
    out = json.loads(json.dumps(record.__dict__, default=str))
    out.pop("latency_ms")
    return out


def failures(session: Any) -> list[str]:
    log = session.instance.debug_log_path
    lines = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    return [json.loads(line)["error"] for line in lines if '"recall_worker_failed"' in line]


def test_the_worker_makes_the_record_the_session_would(session: Any) -> None:
    worker = attach(session)
    try:
        for message in ("what is the lease manager timeout", "tell me about INC-7781", "what about the weather"):
            here = recall_for(session.instance, session.config, message)
            there = worker.recall(message)
            assert there is not None, failures(session)
            assert comparable(there) == comparable(here), message
        assert worker.recall("what is the lease manager timeout").injected, "a matching note is injected"
        block = session.auto_recall(session, "what is the lease manager timeout")
        assert "30 seconds" in block and worker.process is not None and worker.process.poll() is None
        assert not failures(session)
    finally:
        worker.close()


def test_a_worker_that_dies_leaves_recall_to_the_session(session: Any) -> None:
    worker = attach(session)
    try:
        assert worker.start()
        assert worker.process is not None
        worker.process.kill()
        worker.process.wait()
        block = session.auto_recall(session, "what is the lease manager timeout")
        assert "30 seconds" in block, "recalled in the session's process instead"
        assert len(failures(session)) == 1 and worker.failed
        session.auto_recall(session, "what is the lease manager timeout")
        assert len(failures(session)) == 1, "a failed worker is not tried again"
    finally:
        worker.close()


def test_a_worker_that_cannot_start_leaves_recall_to_the_session(session: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(worker_mod.sys, "executable", str(session.instance.root / "no-such-python"))
    worker = attach(session)
    block = session.auto_recall(session, "what is the lease manager timeout")
    assert "30 seconds" in block
    assert worker.failed.startswith("cannot start") and failures(session) == [worker.failed]
    monkeypatch.setattr(worker_mod.sys, "executable", sys.executable)


def test_a_worker_answering_garbage_is_not_trusted(session: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "fake_worker.py"
    fake.write_text("import sys\nfor line in sys.stdin:\n    print('{\"record\": {\"injected\": 5}}', flush=True)\n")
    worker = RecallWorker(session.instance.root)
    monkeypatch.setattr(worker_mod.subprocess, "Popen", _popen_running(fake))
    session.auto_recall.worker = worker
    block = session.auto_recall(session, "what is the lease manager timeout")
    assert "30 seconds" in block and "something else than a record" in worker.failed
    worker.close()


def _popen_running(script: Any) -> Any:
    real = worker_mod.subprocess.Popen

    def popen(argv: list[str], **kwargs: Any) -> Any:
        return real([sys.executable, str(script)], **kwargs)

    return popen
