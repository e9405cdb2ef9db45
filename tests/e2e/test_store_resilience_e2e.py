"""Issue 13 item 5: nothing typed is ever lost, through the real `mnemara run` and the scripted API.

* turns.sqlite locked by another process past the busy timeout: the message goes to
  spool.jsonl with one line saying so, and is stored (in order) once the lock is gone;
* a damaged turns.sqlite (bad page): the message is spooled, the file is never written
  (not even to switch its journal mode), `show` gives one error line, and once the file
  is restored the spool is replayed;
* rows with non-JSON content or a wrong-typed meta field: `show` marks them damaged,
  `run` leaves them out of the context and carries on.

The conversation before the fault is written straight into turns.sqlite (it is not what is
tested); every run that follows the fault is the real `mnemara run`, through the real CLI.
"""
from __future__ import annotations

import hashlib
import shutil
import sqlite3
from pathlib import Path

import pytest

from mnemara.store.instance import Instance
from mnemara.store.turns import TurnStore
from mnemara.store.health import BUSY_ENV
from mnemara.testing.scripted_api import reply
from tests.conftest import run_cli

pytestmark = pytest.mark.e2e


def _texts(inst: Instance) -> list[str]:
    with TurnStore(inst.turns_path) as store:
        return [t.text for t in store.history()]


def _errors(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("error:")]


def _seed(inst: Instance, *texts: str) -> None:
    """An earlier conversation: user and assistant rows, alternating, as a run would have stored them."""
    with TurnStore(inst.turns_path) as store:
        for n, text in enumerate(texts):
            store.append("user" if n % 2 == 0 else "assistant", text)


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_locked_store_spools_the_message_and_replays_it_later(scripted_api, mnemara_home):
    inst = Instance.create("locked")
    env = {BUSY_ENV: "1"}  # wait 1 s for the lock instead of 30
    _seed(inst, "first", "first answer")
    holder = sqlite3.connect(inst.turns_path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    try:
        proc = run_cli("run", "--instance", "locked", "--no-tui", input="typed while locked\n", env=env)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert proc.returncode == 1, proc.stderr  # no answer (issue 27); the message waits in the spool
    (error,) = _errors(proc.stderr)
    assert "is locked by another process" in error and "spool.jsonl" in error and "Traceback" not in proc.stderr
    assert "typed while locked" in (inst.root / "spool.jsonl").read_text()
    assert _texts(inst) == ["first", "first answer"]
    assert scripted_api.message_requests() == []  # nothing was sent without its message stored

    scripted_api.push(reply("second answer"))
    proc = run_cli("run", "--instance", "locked", "--no-tui", input="after the lock\n", env=env)
    assert proc.returncode == 0, proc.stderr
    assert "1 row(s) kept in spool.jsonl while turns.sqlite was unavailable are now stored" in proc.stderr
    assert _texts(inst) == ["first", "first answer", "typed while locked", "after the lock", "second answer"]
    assert (inst.root / "spool.jsonl").read_text() == ""
    assert "typed while locked" in scripted_api.last.user_text()


def _damage_turns_table(path: Path) -> None:
    """Overwrite the first bytes of the turns table's root page (sqlite_master stays readable)."""
    conn = sqlite3.connect(path)
    root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name='turns'").fetchone()[0]
    page = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    data = bytearray(path.read_bytes())
    data[(root - 1) * page:(root - 1) * page + 64] = b"\xa5" * 64
    path.write_bytes(bytes(data))


def test_a_damaged_store_is_never_written_and_the_message_waits_in_the_spool(scripted_api, mnemara_home, tmp_path):
    inst = Instance.create("damaged")
    _seed(inst, "hello", "before the damage")
    conn = sqlite3.connect(inst.turns_path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = DELETE")  # so opening it would switch the mode back (a write)
    conn.close()
    good = tmp_path / "backup.sqlite"
    shutil.copyfile(inst.turns_path, good)
    _damage_turns_table(inst.turns_path)
    before = _sha(inst.turns_path)

    proc = run_cli("run", "--instance", "damaged", "--no-tui", input="typed while damaged\n")
    assert proc.returncode == 1, proc.stderr  # no answer (issue 27); the message waits in the spool
    (error,) = _errors(proc.stderr)
    assert "failed its integrity check" in error and "spool.jsonl" in error and "Traceback" not in proc.stderr
    assert _sha(inst.turns_path) == before, "Mnemara wrote to a file that failed its integrity check"
    assert "typed while damaged" in (inst.root / "spool.jsonl").read_text()
    shown = run_cli("show", "--instance", "damaged")
    assert shown.returncode != 0 and len(shown.stderr.splitlines()) == 1
    assert "failed its integrity check" in shown.stderr and _sha(inst.turns_path) == before

    shutil.copyfile(good, inst.turns_path)  # the user restores the backup
    scripted_api.push(reply("after the repair"))
    proc = run_cli("run", "--instance", "damaged", "--no-tui", input="and now\n")
    assert proc.returncode == 0, proc.stderr
    assert _texts(inst) == ["hello", "before the damage", "typed while damaged", "and now", "after the repair"]


def test_rows_with_bad_content_or_meta_are_shown_as_damaged_and_skipped(scripted_api, mnemara_home):
    inst = Instance.create("rows")
    _seed(inst, "good row", "fine")
    conn = sqlite3.connect(inst.turns_path)
    bad = [("user", "BROKEN-CONTENT {", "{}"),
           ("assistant", '[{"type": "text", "text": "WRONG-META-TEXT"}]', '{"interrupted": "maybe"}'),
           ("user", '[{"type": "text", "text": "META-NOT-OBJECT"}]', "[1, 2]")]
    for role, content, meta in bad:
        conn.execute("INSERT INTO turns(role, content, tokens, created_at, meta) VALUES (?, ?, 1, '2026-01-01', ?)",
                     (role, content, meta))
    conn.commit()
    conn.close()

    shown = run_cli("show", "--instance", "rows")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.count("DAMAGED ROW") == 3
    assert "content is not JSON" in shown.stdout and "meta field 'interrupted' has the wrong type" in shown.stdout

    scripted_api.push(reply("still talking"))
    proc = run_cli("run", "--instance", "rows", "--no-tui", input="next message\n")
    assert proc.returncode == 0, proc.stderr
    assert "still talking" in proc.stdout and "Traceback" not in proc.stderr
    assert "are damaged and were left out of the context" in proc.stderr
    sent = scripted_api.last.user_text()
    assert "good row" in sent and "next message" in sent
    assert not any(marker in sent for marker in ("BROKEN-CONTENT", "WRONG-META-TEXT", "META-NOT-OBJECT"))
