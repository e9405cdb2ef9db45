"""A role doc edited while a turn's tool loop runs reaches the turn's next API call."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from mnemara.core.config import update_config
from mnemara.core.debuglog import read_events
from mnemara.claude.role_refresh import RoleDocWatch
from mnemara.testing.scripted_api import reply, tool_use


def test_watch_reports_each_edit_once(tmp_path: Path) -> None:
    role = tmp_path / "role.md"
    role.write_text("one", encoding="utf-8")
    watch = RoleDocWatch(str(role), "one")
    assert watch.changed_text() is None
    role.write_text("two!", encoding="utf-8")
    assert watch.changed_text() == "two!"
    assert watch.changed_text() is None
    role.unlink()
    assert watch.changed_text() is None  # a vanished file is not "new text"
    assert RoleDocWatch("", "").changed_text() is None


@pytest.mark.e2e
def test_edit_during_tool_loop_reaches_next_call(scripted_api, session_factory, tmp_path: Path) -> None:
    role = tmp_path / "role.md"
    role.write_text("You are ROLE-BEFORE.", encoding="utf-8")
    session = session_factory()
    cfg = session.instance.config_path
    raw = json.loads(cfg.read_text())
    raw["role_doc_path"] = str(role)
    for policy in raw["allowed_tools"]:
        if policy["tool"] == "Bash":
            policy["mode"] = "allow"
    cfg.write_text(json.dumps(raw))
    command = f"printf 'You are ROLE-AFTER.' > {role}"
    scripted_api.push(reply(tool_use("Bash", {"command": command})), reply("done"))
    result = session.turn("please update the role doc")
    assert result.ok
    first, second = scripted_api.message_requests()[-2:]
    assert "ROLE-BEFORE" in first.system_text
    assert "ROLE-AFTER" not in json.dumps(first.messages)
    assert "<role_doc_updated>" in json.dumps(second.messages) and "ROLE-AFTER" in json.dumps(second.messages)
    assert any(e["event"] == "role_doc_refreshed_mid_turn" for e in read_events(session.instance.debug_log_path))
    # The next turn starts from the edited role doc and does not repeat the refresh. What it would
    # send is read here without a second CLI: a process started for another system prompt is never
    # reused (tests/e2e/test_cli_reuse_e2e.py::test_an_edited_role_doc_or_a_swap_gets_a_new_process).
    assert session.system_prompt(session.read_role()).endswith("You are ROLE-AFTER.")
    assert "<role_doc_updated>" not in json.dumps(session.context_blocks("and now?"))
    update_config(cfg, role_doc_path="")
