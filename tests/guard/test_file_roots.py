"""A project folder outside $HOME (issue 27): ``file_tool_roots`` in config.json, ``/add-dir PATH``
(asked, then saved; one implementation for panel, REPL and tests) and ``mnemara run --dir`` (this
session only). Roots follow home-only's symlink rules; every bad folder is refused in one line."""
from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from mnemara.commands import dispatch
from mnemara.core.config import Config
from mnemara.store.instance import Instance
from mnemara.guard.file_roots import FileRoots, check_root, real_homes
from mnemara.guard.gate import PermissionGate
from mnemara.ui.repl.app import run_repl
from tests.tui_support import instance, make_app  # noqa: F401  (fixtures)


@pytest.fixture
def project(tmp_path: Path, isolated_home: Path) -> Path:
    folder = tmp_path / "srv" / "proj"
    folder.mkdir(parents=True)
    (folder / "main.py").write_text("print('hi')\n", encoding="utf-8")
    return folder


def _refusal(path: str) -> str:
    home, instances = real_homes()
    with pytest.raises(ValueError) as caught:
        check_root(path, home, instances)
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_bad_folders_are_refused_in_one_line(tmp_path: Path, isolated_home: Path, project: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a_file").write_text("x", encoding="utf-8")
    (tmp_path / "to_etc").symlink_to("/etc")
    (tmp_path / "to_root").symlink_to("/")
    (tmp_path / "to_proc_self").symlink_to("/proc/self")
    assert "does not exist" in _refusal(str(tmp_path / "missing"))
    assert "is not a folder" in _refusal(str(tmp_path / "a_file"))
    assert "relative" in _refusal("srv/proj")
    assert "relative" in _refusal("./proj")
    assert "/proc, a system folder" in _refusal("/proc")
    assert "/sys, a system folder" in _refusal("/sys/kernel")
    assert "/dev, a system folder" in _refusal("/dev")
    assert "whole file system" in _refusal("/")
    escaping = _refusal(str(tmp_path / "to_etc"))
    assert "/etc, a system folder" in escaping and "resolves to /etc" in escaping
    assert "whole file system" in _refusal(str(tmp_path / "to_root"))
    assert "system folder" in _refusal(str(tmp_path / "to_proc_self"))
    assert "holds $HOME" in _refusal(str(isolated_home.parent))
    monkeypatch.setenv("MNEMARA_HOME", str(tmp_path / "instances"))
    (tmp_path / "instances" / "mine").mkdir(parents=True)
    assert "Mnemara's instances" in _refusal(str(tmp_path / "instances" / "mine"))
    assert "Mnemara's instances" in _refusal(str(tmp_path))
    assert "a folder path is needed" in _refusal("  ")
    assert "NUL" in _refusal("/srv\x00x")
    home, instances = real_homes()
    assert check_root(str(project), home, instances) == str(project.resolve())


def _gate(inst: Instance, roots: list[str], prompt=None) -> PermissionGate:
    return PermissionGate(Config(file_tool_roots=roots), inst, prompt=prompt)


def test_a_root_lets_file_tools_in_with_home_only_symlink_rules(mnemara_home: Path, project: Path,
                                                                 tmp_path: Path) -> None:
    inst = Instance.create("roots")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "secret").write_text("s\n", encoding="utf-8")
    (project / "escape").symlink_to(outside / "secret")
    closed = _gate(inst, [])
    assert closed.decide("Read", {"file_path": str(project / "main.py")}).verdict == "deny"
    gate = _gate(inst, [str(project)])
    assert gate.decide("Read", {"file_path": str(project / "main.py")}).verdict == "allow"
    assert gate.decide("Write", {"file_path": str(project / "new.py"), "content": "x"}).verdict == "ask"
    escaped = gate.decide("Read", {"file_path": str(project / "escape")})
    assert escaped.verdict == "deny" and "outside $HOME and file_tool_roots" in escaped.reason
    dotted = gate.decide("Read", {"file_path": str(project / ".." / ".." / "elsewhere" / "secret")})
    assert dotted.verdict == "deny"
    assert gate.decide("Read", {"file_path": "/etc/passwd"}).verdict == "deny"


def test_a_root_reached_through_a_link_counts_where_it_leads(mnemara_home: Path, project: Path,
                                                              tmp_path: Path) -> None:
    inst = Instance.create("linked")
    (tmp_path / "proj_link").symlink_to(project)
    gate = _gate(inst, [str(tmp_path / "proj_link")])
    assert gate.decide("Read", {"file_path": str(project / "main.py")}).verdict == "allow"
    assert gate.decide("Read", {"file_path": str(tmp_path / "proj_link" / "main.py")}).verdict == "allow"


def test_a_bad_entry_in_config_is_reported_and_not_used(mnemara_home: Path, project: Path) -> None:
    inst = Instance.create("badroot")
    gate = _gate(inst, ["/", "relative/dir", str(project), "/proc/1"])
    problems = gate.startup_problems
    assert any("file_tool_roots[0]" in p and "whole file system" in p for p in problems)
    assert any("file_tool_roots[1]" in p and "relative" in p for p in problems)
    assert any("file_tool_roots[3]" in p and "system folder" in p for p in problems)
    assert all("\n" not in p for p in problems)
    assert gate.decide("Read", {"file_path": "/etc/hostname"}).verdict == "deny"
    assert gate.decide("Read", {"file_path": str(project / "main.py")}).verdict == "allow"
    roots = FileRoots.from_entries([str(project), str(project)], *real_homes())
    assert roots.roots == [str(project.resolve())]


def test_add_dir_asks_then_saves_and_the_gate_follows(session_factory, project: Path) -> None:
    session = session_factory("adddir")
    asked = dispatch(session, f"/add-dir {project}")
    assert asked.action == "confirm" and str(project) in asked.text
    assert Config.load(session.instance.config_path).file_tool_roots == []  # asking saves nothing
    assert session.gate.decide("Read", {"file_path": str(project / "main.py")}).verdict == "deny"
    done = dispatch(session, str(asked.payload.command))
    assert done.ok and "file tools may use" in done.text
    assert Config.load(session.instance.config_path).file_tool_roots == [str(project.resolve())]
    assert session.gate.decide("Read", {"file_path": str(project / "main.py")}).verdict == "allow"
    again = dispatch(session, f"/add-dir {project}")
    assert not again.ok and "already" in again.text
    listed = dispatch(session, "/add-dir")
    assert listed.ok and f"{project.resolve()} (saved)" in listed.text and "$HOME" in listed.text


@pytest.mark.parametrize("args, says", [
    ("a b", "give one folder"),
    ("relative/x", "relative"),
    ("/proc", "system folder"),
    ("/", "whole file system"),
    ("/nonexistent-habits-dir", "does not exist"),
    ("'/unclosed", "quotation"),
    ("/tmp --force", "unknown option"),
])
def test_add_dir_refusals_change_nothing(session_factory, args: str, says: str) -> None:
    session = session_factory("adddirbad")
    before = session.instance.config_path.read_bytes()
    result = dispatch(session, f"/add-dir {args}".rstrip())
    assert not result.ok and says in result.text, result.text
    assert result.text.split("\n")[0].startswith("/add-dir: ")
    assert session.instance.config_path.read_bytes() == before


def test_add_dir_inside_home_has_nothing_to_add(session_factory, isolated_home: Path) -> None:
    session = session_factory("adddirhome")
    (isolated_home / "code").mkdir()
    result = dispatch(session, f"/add-dir {isolated_home / 'code'}")
    assert not result.ok and "inside $HOME" in result.text


def test_add_dir_in_the_piped_repl_asks_and_saves_on_yes(session_factory, project: Path) -> None:
    session = session_factory("adddirrepl")
    out, err = io.StringIO(), io.StringIO()
    code = run_repl(session, stdin=io.StringIO(f"/add-dir {project}\ny\n"), stdout=out, stderr=err)
    assert code == 0
    assert Config.load(session.instance.config_path).file_tool_roots == [str(project.resolve())]
    assert "file tools may use" in out.getvalue()


def test_add_dir_keeps_this_sessions_dirs_unsaved(session_factory, project: Path, tmp_path: Path) -> None:
    session = session_factory("adddirtemp")
    other = tmp_path / "other"
    other.mkdir()
    session.override_config(file_tool_roots=[str(other.resolve())])  # what mnemara run --dir does
    dispatch(session, f"/add-dir {project} --yes")
    assert Config.load(session.instance.config_path).file_tool_roots == [str(project.resolve())]
    assert set(session.config.file_tool_roots) == {str(project.resolve()), str(other.resolve())}
    assert session.gate.decide("Read", {"file_path": str(other / "x")}).verdict == "allow"


def test_run_dir_refuses_a_bad_folder_before_starting(cli, mnemara_home: Path, tmp_path: Path) -> None:
    Instance.create("rundir")
    result = cli("run", "-i", "rundir", "--no-tui", "--dir", str(tmp_path / "missing"), input="")
    assert result.returncode == 2
    assert "does not exist" in result.stderr and result.stderr.count("Error") == 1
    config = json.loads((mnemara_home / "rundir" / "config.json").read_text(encoding="utf-8"))
    assert config.get("file_tool_roots", []) == []


def test_run_dir_lets_this_session_in_without_saving(cli, mnemara_home: Path, project: Path) -> None:
    Instance.create("rundir2")
    result = cli("run", "-i", "rundir2", "--no-tui", "--dir", str(project), input="/add-dir\n")
    assert result.returncode == 0, result.stderr
    assert f"{project.resolve()} (this session only)" in result.stdout
    config = json.loads((mnemara_home / "rundir2" / "config.json").read_text(encoding="utf-8"))
    assert config.get("file_tool_roots", []) == []
    assert os.path.isdir(project)


async def test_add_dir_in_the_panel_asks_in_a_modal_then_saves(make_app, instance, project: Path) -> None:
    from mnemara.ui.tui.screens.confirm import ConfirmScreen
    from tests.tui_support import type_text, wait_for

    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        app.chat_input.focus()
        await type_text(pilot, f"/add-dir {project}")
        await pilot.press("ctrl+s")
        modal = await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen) and app.screen, what="the question")
        assert modal.title_text == "Let file tools use this folder?" and str(project) in modal.question
        assert Config.load(instance.config_path).file_tool_roots == []
        await pilot.press("y")
        await wait_for(pilot, lambda: Config.load(instance.config_path).file_tool_roots, what="the folder saved")
        await wait_for(pilot, lambda: "file tools may use" in app.chat_log.plain_text(), what="the answer")
    assert Config.load(instance.config_path).file_tool_roots == [str(project.resolve())]
    assert app.session.gate.decide("Read", {"file_path": str(project / "main.py")}).verdict == "allow"
