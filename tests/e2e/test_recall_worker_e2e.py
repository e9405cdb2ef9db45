"""``mnemara run`` recalls notes through its recall worker: the request carries the recalled note, and
the run's own process never loads the RAG backends (its debug.log says where each recall ran)."""
from __future__ import annotations

import json
from typing import Any

import pytest

from mnemara.core.config import update_config
from mnemara.store.instance import Instance
from mnemara.memory.notes import append_note
from mnemara.testing.scripted_api import reply

pytestmark = pytest.mark.e2e


def test_mnemara_run_recalls_in_its_worker(mnemara_home: Any, scripted_api: Any, cli: Any) -> None:
    inst = Instance.create("recaller")
    append_note(inst.memory_dir, "The lease manager timeout is 30 seconds unless the holder renews it.", "fact")
    update_config(inst.config_path, auto_recall=True, rag_embedder="none")
    scripted_api.push(reply("30 seconds."), reply("noted."))
    done = cli("run", "--instance", "recaller", input="what is the lease manager timeout\nthanks\n",
               subprocess_only=True)
    assert done.returncode == 0, done.stderr
    first = scripted_api.message_requests()[0].user_text()
    assert "<recalled_memory" in first and "30 seconds unless" in first
    events = [json.loads(line) for line in inst.debug_log_path.read_text(encoding="utf-8").splitlines()]
    recalls = [e for e in events if e["event"] == "auto_recall"]
    assert [e["process"] for e in recalls] == ["worker", "worker"], recalls
    assert not [e for e in events if e["event"] == "recall_worker_failed"]
