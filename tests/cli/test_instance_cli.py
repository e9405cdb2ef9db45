"""Instances and the instance CLI: init, list, show, clear, delete, role, note, migrate."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from mnemara.core.errors import UsageError
from mnemara.store.instance import SUBDIRS, Instance, list_instances, validate_name


@pytest.mark.parametrize("name", ["work", "a", "A.b_c-1", "x" * 64])
def test_valid_names(name: str) -> None:
    assert validate_name(name) == name


@pytest.mark.parametrize("name", ["", "../x", "a/b", ".hidden", "x" * 65, "sp ace", "é", "a\\b", "..", "."])
def test_invalid_names_refused(name: str) -> None:
    with pytest.raises(UsageError):
        validate_name(name)


@pytest.mark.parametrize("name", ["../x", "a/b", "", ".x"])
def test_init_refuses_bad_name_and_touches_nothing(cli, mnemara_home: Path, name: str) -> None:
    r = cli("init", "--instance", name)
    assert r.returncode == 2
    assert r.stderr.startswith("error: invalid instance name")
    assert len(r.stderr.strip().splitlines()) == 1
    assert not mnemara_home.exists() or not any(mnemara_home.iterdir())
    assert not (mnemara_home.parent / "x").exists()


def test_init_creates_full_layout(cli, mnemara_home: Path) -> None:
    r = cli("init", "--instance", "work")
    assert r.returncode == 0, r.stderr
    root = mnemara_home / "work"
    for sub in SUBDIRS:
        assert (root / sub).is_dir(), sub
    for f in ("config.json", "turns.sqlite", "permissions.json", "debug.log", ".prompt_history"):
        assert (root / f).is_file(), f
    cfg = json.loads((root / "config.json").read_text())
    assert cfg["max_window_turns"] == 20 and cfg["role_doc_path"] == ""
    assert json.loads((root / "debug.log").read_text().splitlines()[0])["event"] == "instance_created"


def test_init_refuses_to_overwrite(cli, mnemara_home: Path) -> None:
    assert cli("init", "--instance", "work").returncode == 0
    cfg = mnemara_home / "work" / "config.json"
    cfg.write_text(cfg.read_text().replace('"max_window_turns": 20', '"max_window_turns": 7'))
    before = cfg.read_bytes()
    r = cli("init", "--instance", "work")
    assert r.returncode == 2 and "already exists" in r.stderr
    assert cfg.read_bytes() == before


def test_init_with_role(cli, mnemara_home: Path, tmp_path: Path) -> None:
    role = tmp_path / "r.md"
    role.write_text("You are terse.")
    assert cli("init", "--instance", "w", "--role", str(role)).returncode == 0
    assert json.loads((mnemara_home / "w" / "config.json").read_text())["role_doc_path"] == str(role.resolve())


def test_init_with_missing_role_creates_nothing(cli, mnemara_home: Path) -> None:
    r = cli("init", "--instance", "w", "--role", "/nonexistent/role.md")
    assert r.returncode == 2 and "role doc not found" in r.stderr
    assert not (mnemara_home / "w").exists()


def test_list_and_delete(cli, mnemara_home: Path) -> None:
    assert "no instances" in cli("list").stdout
    for n in ("b", "a"):
        assert cli("init", "--instance", n).returncode == 0
    (mnemara_home / "not-an-instance").mkdir()
    assert [line.split()[0] for line in cli("list").stdout.splitlines()] == ["a", "b"]
    assert "model=claude-sonnet-4-6  role=(none)" in cli("list").stdout
    r = cli("delete", "--instance", "a")
    assert r.returncode == 2 and "--force" in r.stderr
    assert (mnemara_home / "a").is_dir()
    assert cli("delete", "--instance", "a", "--force").returncode == 0
    assert list_instances() == ["b"]


def test_commands_on_missing_instance(cli) -> None:
    for args in (["show", "-i", "ghost"], ["note", "-i", "ghost", "x"], ["clear", "-i", "ghost"], ["delete", "-i", "ghost", "--force"]):
        r = cli(*args)
        assert r.returncode == 2 and "no instance 'ghost'" in r.stderr, args


def test_note_format_and_refusals(cli, mnemara_home: Path) -> None:
    cli("init", "--instance", "w")
    r = cli("note", "--instance", "w", "--category", "insight", "Worth", "remembering.")
    assert r.returncode == 0, r.stderr
    files = list((mnemara_home / "w" / "memory").glob("*.md"))
    assert len(files) == 1
    text = files[0].read_text()
    lines = text.splitlines()
    assert lines[0].startswith("## ") and lines[0].endswith(" insight")
    from datetime import datetime

    datetime.fromisoformat(lines[0].split()[1])  # an ISO-8601 timestamp
    assert lines[1] == "Worth remembering."
    assert cli("note", "--instance", "w", "   ").returncode == 2
    assert cli("note", "--instance", "w", "-c", "../etc", "x").returncode == 2
    assert files[0].read_text() == text


def test_role_set_and_refusals(cli, mnemara_home: Path, tmp_path: Path) -> None:
    cli("init", "--instance", "w")
    cfg = mnemara_home / "w" / "config.json"
    role = tmp_path / "role.md"
    role.write_text("# Role\nBe kind.")
    assert cli("role", "-i", "w", "--set", str(role)).returncode == 0
    assert json.loads(cfg.read_text())["role_doc_path"] == str(role.resolve())
    before = cfg.read_bytes()
    binary = tmp_path / "bin.md"
    binary.write_bytes(b"\xff\xfe\x00bad")
    for bad, msg in ((str(tmp_path / "nope.md"), "not found"), (str(tmp_path), "not a file"), (str(binary), "not UTF-8")):
        r = cli("role", "-i", "w", "--set", bad)
        assert r.returncode == 2 and msg in r.stderr, r.stderr
    for url, msg in (("http://example.com/r.md", "only https"), ("ftp://x/y", "only https"), ("not a url", "only https"), ("https://", "only https")):
        r = cli("role", "-i", "w", "--set-from-url", url)
        assert r.returncode == 2 and msg in r.stderr, r.stderr
    assert cfg.read_bytes() == before
    assert cli("role", "-i", "w").stdout.strip() == str(role.resolve())


def test_show_and_clear(cli, mnemara_home: Path) -> None:
    cli("init", "--instance", "w")
    from mnemara.store.turns import TurnStore

    inst = Instance.open("w")
    with TurnStore(inst.turns_path) as store:
        for i in range(25):
            store.append("user" if i % 2 == 0 else "assistant", f"message number {i}")
        store.upsert_slot("health", "system", "HP: 73 / 100")
    out = cli("show", "--instance", "w").stdout
    assert "slot: health" in out and "HP: 73 / 100" in out
    # 25 live rows pass max_window_turns 20: the window (what the next turn sends) is cut to
    # window_trim_to 0.25 of the cap, the newest 5 rows
    assert "message number 24" in out and "message number 20" in out and "message number 19" not in out
    assert out.index("health") < out.index("message number 20")
    out3 = cli("show", "--instance", "w", "-n", "3").stdout
    assert "message number 22" in out3 and "message number 21" not in out3
    assert cli("show", "--instance", "w", "-n", "0").returncode == 2
    r = cli("clear", "--instance", "w")
    assert r.returncode == 0 and "cleared 25 rows" in r.stdout
    out = cli("show", "--instance", "w").stdout
    assert "HP: 73" in out and "message number" not in out
    assert "message number 0" in cli("show", "--instance", "w", "--all").stdout  # nothing lost


def test_migrate_idempotent(cli, mnemara_home: Path) -> None:
    cli("init", "--instance", "a")
    cli("init", "--instance", "b")
    cfg = mnemara_home / "a" / "config.json"
    raw = json.loads(cfg.read_text())
    del raw["schema_version"]
    raw["max_window"] = 9
    del raw["max_window_turns"]
    raw["my_annotation"] = {"keep": True}
    cfg.write_text(json.dumps(raw))
    r = cli("migrate", "--all")
    assert r.returncode == 0, r.stderr
    after = json.loads(cfg.read_text())
    assert after["schema_version"] == 1 and after["max_window_turns"] == 9 and after["my_annotation"] == {"keep": True}
    first = cfg.read_bytes()
    assert cli("migrate", "--instance", "a").returncode == 0
    assert cfg.read_bytes() == first
    assert cli("migrate").returncode == 2
    assert cli("migrate", "--all", "--instance", "a").returncode == 2
    assert cli("migrate", "--instance", "../a").returncode == 2


def test_heavy_libraries_not_imported_by_light_commands(cli, mnemara_home: Path) -> None:
    cli("init", "--instance", "w")
    probe = (
        "import sys\n"
        "from mnemara.cli import main\n"
        "for args in (['--help'], ['list'], ['show', '-i', 'w'], ['note', '-i', 'w', 'hi']):\n"
        "    try:\n"
        "        main(args, standalone_mode=False)\n"
        "    except SystemExit:\n"
        "        pass\n"
        "heavy = [m for m in ('lancedb', 'kuzu', 'textual', 'prompt_toolkit', 'claude_agent_sdk', 'wordllama',\n"
        "                      'tokenizers') if m in sys.modules]\n"
        "print('HEAVY', heavy)\n"
    )
    import subprocess
    import sys

    from tests.conftest import cli_env

    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=cli_env())
    assert r.returncode == 0, r.stderr
    assert "HEAVY []" in r.stdout, r.stdout


def test_errors_are_logged_as_json_lines(cli, mnemara_home: Path) -> None:
    cli("init", "--instance", "w")
    assert cli("role", "-i", "w", "--set", "/nope.md").returncode == 2
    records = [json.loads(line) for line in (mnemara_home / "w" / "debug.log").read_text().splitlines()]
    assert records[-1]["event"] == "cli_error" and records[-1]["level"] == "error"
    assert "role doc not found" in records[-1]["message"] and records[-1]["command"] == "role"


def test_filesystem_trouble_is_one_error_line_not_a_traceback(cli, mnemara_home, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    r = cli("init", "--instance", "x", env={"MNEMARA_HOME": str(blocker)})
    assert r.returncode == 2 and r.stderr.startswith("error: ") and len(r.stderr.strip().splitlines()) == 1
    assert "Traceback" not in r.stderr and str(blocker) in r.stderr and blocker.read_text() == "x"
    assert cli("init", "--instance", "m").returncode == 0
    import shutil

    memory = mnemara_home / "m" / "memory"
    shutil.rmtree(memory)
    memory.write_text("")  # a file where the notes folder belongs
    r = cli("note", "--instance", "m", "a note")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    assert memory.read_text() == ""


def test_a_folder_without_config_json_is_named_as_such(cli, mnemara_home):
    assert cli("init", "--instance", "c").returncode == 0
    (mnemara_home / "c" / "config.json").unlink()
    r = cli("show", "--instance", "c")
    assert r.returncode == 2 and "has no config.json" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_relative_mnemara_home_is_reported_as_an_absolute_path(cli, tmp_path):
    from tests.conftest import ROOT

    r = cli("init", "--instance", "rel", env={"MNEMARA_HOME": "rel-home"})
    try:
        assert r.returncode == 0 and f"at {ROOT / 'rel-home' / 'rel'}" in r.stdout
    finally:
        import shutil

        shutil.rmtree(ROOT / "rel-home", ignore_errors=True)


@pytest.mark.parametrize("args", [
    ("note", "--instance", "n", "caf\udce9 opens at 9"),  # crashed with UnicodeEncodeError and a traceback
    ("forget", "--instance", "n", "caf\udce9", "--yes"),  # said "no note contains" a text nobody typed
    ("init", "--instance", "x\udce9"),
])
def test_an_argument_that_is_not_utf8_is_refused_naming_its_bytes(cli, mnemara_home: Path, args) -> None:
    """A shell hands over bytes that are not UTF-8 (a Latin-1 terminal, a pasted file name) as they are;
    every command refuses them in one line showing the argument with those bytes escaped."""
    cli("init", "--instance", "n")
    before = sorted(p.relative_to(mnemara_home) for p in mnemara_home.rglob("*"))
    out = cli(*args)
    assert out.returncode == 2, out.stdout + out.stderr
    assert "is not UTF-8 text" in out.stderr and "\\xe9" in out.stderr and "Traceback" not in out.stderr
    assert sorted(p.relative_to(mnemara_home) for p in mnemara_home.rglob("*")) == before
