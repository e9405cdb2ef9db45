"""Atom status: superseded / deprecated in memory/status.json; day files never rewritten."""
from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from mnemara.core.errors import ConfigError, UsageError
from mnemara.store.instance import Instance
from mnemara.memory.notes import append_note
from mnemara.memory.status import (StatusBook, all_atoms, chunk_id, inactive_atoms, set_status)
from tests.conftest import run_cli


def _two(mem: Path) -> tuple:
    append_note(mem, "Staging DB is db-stage-01.", "infra", datetime(2026, 4, 20, 9, tzinfo=timezone.utc))
    append_note(mem, "Staging DB moved to db-stage-02.", "infra", datetime(2026, 4, 20, 10, tzinfo=timezone.utc))
    old, new = all_atoms(mem)
    return old, new


def _days(mem: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(mem.glob("*.md"))}


def test_cli_supersede_deprecate_restore_keep_day_files() -> None:
    inst = Instance.create("s")
    old, new = _two(inst.memory_dir)
    before = _days(inst.memory_dir)
    out = run_cli("memory", "supersede", "-i", "s", old.id, chunk_id(new), "--reason", "host moved")
    assert out.returncode == 0, out.stderr
    assert inactive_atoms(inst.memory_dir)[chunk_id(old)]["superseded_by"] == new.id
    listing = run_cli("memory", "status", "-i", "s").stdout
    assert f"superseded by {new.id}: {old.id} (host moved)" in listing
    assert run_cli("memory", "deprecate", "-i", "s", new.id).returncode == 0
    assert set(inactive_atoms(inst.memory_dir)) == {chunk_id(old), chunk_id(new)}
    assert run_cli("memory", "restore", "-i", "s", old.id).returncode == 0
    assert set(inactive_atoms(inst.memory_dir)) == {chunk_id(new)}
    entry = StatusBook.load(inst.memory_dir).entry(old)
    assert entry["status"] == "active" and entry["history"][0]["status"] == "superseded"
    assert _days(inst.memory_dir) == before
    events = [json.loads(line)["event"] for line in inst.debug_log_path.read_text().splitlines()]
    assert {"atom_superseded", "atom_deprecated", "atom_restored"} <= set(events)


def test_status_survives_offsets_moving(tmp_path: Path) -> None:
    old, new = _two(tmp_path)
    set_status(tmp_path, old, "deprecated", reason="x")
    day = tmp_path / "2026-04-20.md"
    day.write_text("Some preface typed by hand.\n\n" + day.read_text())
    moved = all_atoms(tmp_path)[0]
    assert moved.offset != old.offset
    assert StatusBook.load(tmp_path).status_of(moved) == "deprecated"


@pytest.mark.parametrize("args,message", [
    (["nonsense", "x"], "not a note id"),
    (["memory:2030-01-01.md#0", "memory:2030-01-01.md#1"], "does not exist"),
    (["memory:2026-04-20.md#5", "memory:2026-04-20.md#0"], "the file changed since"),
])
def test_cli_refusals(args: list[str], message: str) -> None:
    inst = Instance.create("r")
    _two(inst.memory_dir)
    out = run_cli("memory", "supersede", "-i", "r", *args)
    assert out.returncode == 2 and message in out.stderr, out.stderr
    assert not (inst.memory_dir / "status.json").exists()


def test_self_and_cycle_refused(tmp_path: Path) -> None:
    old, new = _two(tmp_path)
    with pytest.raises(UsageError, match="itself"):
        set_status(tmp_path, old, "superseded", new=old)
    set_status(tmp_path, old, "superseded", new=new)
    with pytest.raises(UsageError, match="cycle"):
        set_status(tmp_path, new, "superseded", new=old)
    with pytest.raises(UsageError, match="unknown status"):
        set_status(tmp_path, old, "gone")


def test_corrupt_sidecar_is_a_clear_error_and_left_alone() -> None:
    inst = Instance.create("c")
    old, new = _two(inst.memory_dir)
    (inst.memory_dir / "status.json").write_text("{not json")
    out = run_cli("memory", "supersede", "-i", "c", old.id, new.id)
    assert out.returncode == 2 and "status.json" in out.stderr and "cannot read note status" in out.stderr
    assert (inst.memory_dir / "status.json").read_text() == "{not json"
    with pytest.raises(ConfigError):
        StatusBook.load(inst.memory_dir)


@pytest.mark.e2e
def test_supersede_memory_tool_then_superseded_atom_absent_from_rag_query(scripted_api, session_factory) -> None:
    """Two turns of one session (one CLI start): the status tools, then rag_query on their result."""
    from mnemara.testing.scripted_api import reply, tool_use

    session = session_factory("tool")
    old, new = _two(session.instance.memory_dir)
    scripted_api.push(
        reply(tool_use("mcp__mnemara__supersede_memory", {"old": chunk_id(old), "new": chunk_id(new), "reason": "moved"})),
        reply(tool_use("mcp__mnemara__deprecate_memory", {"atom": "bogus"})),
        reply("Done."),
        reply(tool_use("mcp__mnemara__rag_query", {"question": "staging DB", "k": 5})),
        reply(tool_use("mcp__mnemara__rag_query", {"question": "staging DB", "k": 5, "include_superseded": True})),
        reply("ok"),
    )
    session.turn("the staging db moved")
    first, second = _tool_answers(scripted_api.message_requests()[1:3])
    assert first["ok"] and first["superseded_by"] == new.id
    assert second["ok"] is False and "not a note id" in second["error"]
    assert list(inactive_atoms(session.instance.memory_dir)) == [chunk_id(old)]

    # the superseded note is left out of rag_query unless asked for
    session.turn("where is the staging db?")
    plain, everything = _tool_answers(scripted_api.message_requests()[4:6])
    assert [h["id"] for h in plain["hits"]] == [chunk_id(new)] and plain["skipped_inactive"] == 1
    marked = {h["id"]: h.get("status") for h in everything["hits"]}
    assert marked == {chunk_id(new): None, chunk_id(old): "superseded"}


def _tool_answers(requests: list) -> list[dict]:
    """The JSON answer of the newest tool_result of each request (the CLI may append a reminder)."""
    texts = [r.tool_results()[-1]["content"] for r in requests]
    return [json.JSONDecoder().raw_decode(t if isinstance(t, str) else t[0]["text"])[0] for t in texts]


def test_broken_sidecar_does_not_take_recall_down(tmp_path: Path) -> None:
    from mnemara.memory.search.rag import RagIndex
    from mnemara.memory.status import query_active

    (tmp_path / "memory").mkdir()
    old, new = _two(tmp_path / "memory")
    (tmp_path / "memory" / "status.json").write_text("[broken")
    answer = query_active(RagIndex(tmp_path), tmp_path / "memory", "staging DB", 5)
    assert len(answer["hits"]) == 2 and "not filtered" in answer["warning"]


def test_a_correction_cannot_be_hidden_by_an_older_or_deprecated_replacement() -> None:
    """Trust audit: `memory supersede NEW OLD` (arguments swapped, by a person or the agent's
    supersede_memory) hid the newer note, the correction, from recall; so did a deprecated replacement."""
    inst = Instance.create("sw")
    old, new = _two(inst.memory_dir)
    swapped = run_cli("memory", "supersede", "-i", "sw", new.id, old.id)
    assert swapped.returncode == 2 and "is older than" in swapped.stderr and "deprecate" in swapped.stderr
    assert not (inst.memory_dir / "status.json").exists()
    append_note(inst.memory_dir, "Staging DB moved to db-stage-03.", "infra", datetime(2026, 4, 20, 11, tzinfo=timezone.utc))
    third = all_atoms(inst.memory_dir)[-1]
    set_status(inst.memory_dir, third, "deprecated", reason="typo")
    with pytest.raises(UsageError, match="deprecated itself"):
        set_status(inst.memory_dir, new, "superseded", new=third)
    assert StatusBook.load(inst.memory_dir).status_of(new) == "active"
    assert run_cli("memory", "supersede", "-i", "sw", old.id, new.id).returncode == 0  # the right way round
