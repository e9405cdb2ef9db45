"""The shipped role docs: present, readable as role docs, and sentinel.md covers what it promises."""
from __future__ import annotations

from pathlib import Path

import pytest

from mnemara.core.roledoc import read_role_doc

ROLES = Path(__file__).resolve().parents[2] / "examples" / "roles"


@pytest.mark.parametrize("name", ["sentinel.md", "coder.md", "researcher.md"])
def test_role_doc_reads_cleanly(name):
    role = read_role_doc(str(ROLES / name))
    assert role.warning is None and len(role.text) > 500


def test_sentinel_covers_four_failure_modes_and_the_halt_format():
    text = (ROLES / "sentinel.md").read_text(encoding="utf-8")
    headings = [line for line in text.splitlines() if line.startswith("### ")]
    assert headings == ["### 1. No progress", "### 2. Polling", "### 3. Drift", "### 4. Sycophancy"]
    for field in ("SENTINEL HALT", "trigger:", "turn:", "context:", "proposed next step:", "question:"):
        assert field in text
