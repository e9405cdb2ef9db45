"""``migrate`` refuses a folder holding links, special files or over-size files, naming each (issue 25)."""
from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path

import pytest

from mnemara.core import folder_check
from mnemara.store.instance import Instance
from mnemara.legacy.migrate import MigrationError, migrate_instance


def _old_instance() -> Instance:
    """A fresh instance whose permissions.json is in 0.18's shape, so migrate has work to do."""
    inst = Instance.create("old")
    inst.permissions_path.write_text(json.dumps({"Bash": {"allowed_patterns": ["^ls$"]}}))
    return inst


def test_planted_link_special_file_and_big_file_are_each_named_and_nothing_changes(monkeypatch) -> None:
    inst = _old_instance()
    bashrc = Path(os.path.expanduser("~")) / ".bashrc"
    bashrc.write_text("# mine\n")
    day = inst.memory_dir / f"{datetime.now(timezone.utc).date().isoformat()}.md"
    day.symlink_to(bashrc)
    os.mkfifo(inst.wiki_dir / "pipe.md")
    (inst.wiki_dir / "big.md").write_text("x" * 5000)
    monkeypatch.setattr(folder_check, "MAX_FILE_BYTES", 4096)
    before = inst.permissions_path.read_text()
    with pytest.raises(MigrationError) as refused:
        migrate_instance(inst)
    message = str(refused.value)
    assert "nothing was changed" in message
    assert f"memory/{day.name}: a symbolic link (to {bashrc})" in message
    assert "wiki/pipe.md: a special file" in message
    assert "wiki/big.md: 5000 bytes, over the" in message
    assert inst.permissions_path.read_text() == before
    assert not [p for p in inst.root.iterdir() if p.name.startswith("pre-migrate-")]
    assert bashrc.read_text() == "# mine\n"


def test_a_linked_folder_is_named_too(tmp_path: Path) -> None:
    inst = _old_instance()
    outside = tmp_path / "outside"
    outside.mkdir()
    (inst.root / "sleep").rmdir()
    (inst.root / "sleep").symlink_to(outside)
    with pytest.raises(MigrationError, match=r"sleep: a symbolic link"):
        migrate_instance(inst)


def test_a_clean_folder_migrates() -> None:
    inst = _old_instance()
    assert migrate_instance(inst).changed
    assert json.loads(inst.permissions_path.read_text()) == {"allowed_patterns": {"Bash": ["^ls$"]}}


def test_migrate_lists_every_change_in_what_the_agent_may_do() -> None:
    """Issue 25 item 3: the migration names each tool the gate answers differently than for a new
    instance, the patterns permissions.json allows, and the other fields that differ."""
    inst = _old_instance()
    raw = json.loads(inst.config_path.read_text())
    raw["allowed_tools"] = [{"tool": "Bash", "mode": "allow"}, {"tool": "GraphAddNode", "mode": "deny"}]
    raw["model"] = "claude-opus-4-7"
    inst.config_path.write_text(json.dumps(raw))
    text = "\n".join(migrate_instance(inst).lines())
    assert "~ Bash: ask -> allow" in text
    assert "~ mcp__mnemara__graph_add_node: allow -> deny" in text
    assert '+ permissions.json allowed_patterns[Bash]: "^ls$"' in text
    assert '+ model: "claude-opus-4-7"' in text
