"""Dedupe on write: `mnemara note` and write_memory do not append a note an atom already holds."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from mnemara.instance import Instance
from mnemara.memory.dedupe import find_duplicate, find_same_text
from mnemara.memory.notes import append_note, day_files, parse_file
from mnemara.memory.similar import normalize
from tests.conftest import run_cli


def _atoms(inst: Instance) -> list:
    return [a for f in day_files(inst.memory_dir) for a in parse_file(f)]


def test_normalize_ignores_case_space_emphasis_and_final_punctuation() -> None:
    assert normalize("  The lease  timeout is **30s**. ") == normalize("the lease timeout is 30s")
    assert normalize("timeout is 30s") != normalize("timeout is 31s")


def test_same_text_found_and_different_text_not(tmp_path: Path) -> None:
    append_note(tmp_path, "The lease timeout is 30s.", "insight")
    append_note(tmp_path, "Deploys happen on Tuesdays.", "fact")
    hit = find_same_text(tmp_path, "the lease TIMEOUT is 30s")
    assert hit is not None and hit.text == "The lease timeout is 30s."
    assert find_same_text(tmp_path, "The lease timeout is 45s.") is None
    dup, note = find_duplicate(tmp_path, "Deploys happen on tuesdays!")
    assert dup is not None and dup.how == "same text" and "no embedder" not in note


def test_cli_note_refuses_duplicate_and_names_the_atom() -> None:
    assert run_cli("init", "--instance", "d").returncode == 0
    first = run_cli("note", "--instance", "d", "The", "build", "uses", "uv.")
    assert first.returncode == 0 and "noted in" in first.stdout
    again = run_cli("note", "--instance", "d", "-c", "other", "the build uses UV")
    inst = Instance.open("d")
    atoms = _atoms(inst)
    assert again.returncode == 0 and "not appended" in again.stdout and atoms[0].id in again.stdout
    assert len(atoms) == 1
    forced = run_cli("note", "--instance", "d", "--allow-duplicate", "the build uses UV")
    assert forced.returncode == 0 and len(_atoms(inst)) == 2


def test_cli_note_bad_category_refused_before_anything() -> None:
    run_cli("init", "--instance", "d2")
    out = run_cli("note", "--instance", "d2", "-c", "../x", "text")
    assert out.returncode == 2 and "invalid category" in out.stderr
    assert _atoms(Instance.open("d2")) == []


@pytest.mark.e2e
def test_write_memory_duplicate_not_appended(scripted_api, session_factory) -> None:
    from mnemara.testing import reply, tool_use

    session = session_factory("wm")
    append_note(session.instance.memory_dir, "The lease timeout is 30s.", "insight")
    scripted_api.push(
        reply(tool_use("mcp__mnemara__write_memory", {"text": "the lease timeout is 30s", "category": "fact"})),
        reply("Already known."),
    )
    session.turn("remember the lease timeout")
    atoms = _atoms(session.instance)
    assert [a.text for a in atoms] == ["The lease timeout is 30s."]
    result = scripted_api.message_requests()[1].tool_results()[0]
    content = result["content"] if isinstance(result["content"], str) else result["content"][0]["text"]
    answer = json.JSONDecoder().raw_decode(content)[0]  # the CLI may append a reminder
    assert answer["written"] is False and answer["duplicate"] is True
    assert answer["existing"]["id"] == atoms[0].id and answer["existing"]["how"] == "same text"
