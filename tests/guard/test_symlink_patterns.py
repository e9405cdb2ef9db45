"""A file tool's allowed pattern must allow the file the path reaches, not only the path as written
(audit 4: tools and permissions).

Reproduction (real CLI, before the fix): with ``Write: ask`` and the pattern ``^<home>/proj/``, a
repository holding the symlink ``proj/docs -> ~`` let ``Write proj/docs/.bashrc`` rewrite ``~/.bashrc``
unasked, and a prompt for that path showed only ``proj/docs/.bashrc``.
"""
from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from mnemara.core.config import Config, ToolPolicy
from mnemara.store.instance import Instance
from mnemara.guard.gate import PermissionGate, PermissionRequest


@pytest.fixture
def inst(mnemara_home: Path) -> Instance:
    return Instance.create("links")


@pytest.fixture
def proj(isolated_home: Path) -> Path:
    folder = isolated_home / "proj"
    folder.mkdir()
    (folder / "docs").symlink_to(isolated_home)  # as a cloned repository may hold it
    (folder / "notes.md").write_text("n\n")
    return folder


def _gate(inst: Instance, proj: Path, prompt=None) -> PermissionGate:
    policy = ToolPolicy(tool="Write", mode="ask", allowed_patterns=[f"^{re.escape(str(proj))}/"])
    return PermissionGate(Config(allowed_tools=[policy]), inst, prompt=prompt)


def test_a_folder_pattern_does_not_reach_through_a_symlink_out_of_the_folder(inst, proj, isolated_home) -> None:
    gate = _gate(inst, proj)
    decision = gate.decide("Write", {"file_path": str(proj / "docs" / ".bashrc"), "content": "x"})
    assert decision.verdict == "ask", decision
    assert str(isolated_home / ".bashrc") in decision.reason
    assert gate.decide("Write", {"file_path": str(proj / "notes.md"), "content": "x"}).verdict == "allow"
    assert gate.decide("Write", {"file_path": str(proj / "new" / "file.md"), "content": "x"}).verdict == "allow"


def test_a_pattern_for_each_form_allows_a_link_the_user_means(inst, proj, isolated_home) -> None:
    """Both forms allowed (say, a home reached through a symlinked folder): the call runs."""
    policy = ToolPolicy(tool="Write", mode="ask", allowed_patterns=[f"^{re.escape(str(proj))}/",
                                                                      f"^{re.escape(str(isolated_home))}/\\.bashrc$"])
    gate = PermissionGate(Config(allowed_tools=[policy]), inst)
    assert gate.decide("Write", {"file_path": str(proj / "docs" / ".bashrc")}).verdict == "allow"


def test_the_prompt_names_the_file_the_path_reaches_and_always_saves_both(inst, proj, isolated_home) -> None:
    asked: list[PermissionRequest] = []
    gate = PermissionGate(Config(), inst, prompt=lambda request: asked.append(request) or "a")
    link = str(proj / "docs" / ".profile")
    assert asyncio.run(gate.ask("Write", {"file_path": link, "content": "x"}))
    request = asked[0]
    assert request.resolved == str(isolated_home / ".profile")
    lines = request.question().split("\n")
    assert lines[1] == f"  {link}" and lines[2] == f"  resolves to: {isolated_home / '.profile'}"
    saved = json.loads(inst.permissions_path.read_text())["allowed_patterns"]["Write"]
    assert saved == [rf"\A{re.escape(link)}\Z", rf"\A{re.escape(str(isolated_home / '.profile'))}\Z"]
    assert gate.decide("Write", {"file_path": link}).verdict == "allow"
    (proj / "docs").unlink()
    (proj / "docs").symlink_to(proj)  # the same path now reaches another file: asked again
    assert gate.decide("Write", {"file_path": link}).verdict == "ask"
    plain = PermissionRequest("Write", "Write", str(proj / "notes.md"), {"file_path": str(proj / "notes.md")})
    assert "resolves to" not in plain.question()


async def test_modal_names_the_file_the_path_reaches(proj, isolated_home) -> None:
    from textual.widgets import Static

    from tests.guard.test_permission_display import ModalApp

    link = str(proj / "docs" / ".bashrc")
    app = ModalApp(PermissionRequest("Write", "Write", link, {"file_path": link}, file_args=("file_path",),
                                     resolved=str(isolated_home / ".bashrc")))
    async with app.run_test(size=(80, 30)) as pilot:
        await pilot.pause()
        shown = str(app.screen.query_one("#permission-resolved", Static).render())
    assert shown == f"resolves to: {isolated_home / '.bashrc'}"
