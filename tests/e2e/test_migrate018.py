"""Mnemara 0.18 instances, written by the real 0.18 package (kept as test data), migrated and used here."""
from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest

from mnemara.core.config import LEGACY_SILENT_TYPES, Config
from mnemara.store.instance import Instance
from mnemara.store.turns import TurnStore
from mnemara.testing.scripted_api import reply, tool_use
from tests.conftest import run_cli
from tests.legacy018_support import DATA, EMPTY_FOLDERS, built_by_018, instance018


@pytest.fixture
def old_instance(isolated_home: Path) -> tuple[Path, Path]:
    """A 0.18 instance ``old`` under $MNEMARA_HOME and the 0.18 /export file of its window."""
    return instance018(isolated_home)


@pytest.mark.e2e
def test_a_real_018_instance_migrates_and_then_works(old_instance, scripted_api, isolated_home: Path) -> None:
    root, _export = old_instance
    assert "needs migrate" in run_cli("list").stdout
    refused = run_cli("show", "-i", "old")
    assert refused.returncode == 2 and "mnemara migrate --instance old" in refused.stderr
    before = {p.name: p.read_bytes() for p in root.iterdir() if p.is_file()}

    done = run_cli("migrate", "--instance", "old")
    assert done.returncode == 0, done.stderr
    backup = Path(done.stdout.split("originals copied to ")[1].split()[0])
    assert backup.parent == root and backup.name.startswith("pre-migrate-")
    for name in ("config.json", "permissions.json"):
        assert (backup / name).read_bytes() == before[name]
    with sqlite3.connect(backup / "turns.sqlite") as conn:
        assert conn.execute("SELECT COUNT(*) FROM turns").fetchone()[0] == 7
    listed = run_cli("list").stdout
    assert "needs migrate" not in listed and "model=claude-opus-4-7" in listed and "role=" in listed
    again = run_cli("migrate", "--instance", "old")
    assert again.returncode == 0 and "up to date" in again.stdout
    assert sorted(p.name for p in root.iterdir() if p.name.startswith("pre-migrate-")) == [backup.name]

    shown = run_cli("show", "-i", "old")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.index("SLOT-GOAL") < shown.stdout.index("SLOT-STATUS") < shown.stdout.index("HISTORY-MARK")

    scripted_api.push(
        reply(tool_use("Bash", {"command": "echo migrated-ok"})), reply("ran it"),
        # the second turn searches the 0.18 notes
        reply(tool_use("mcp__mnemara__rag_query", {"question": "billing database port"})), reply("found it"),
    )
    proc = run_cli("run", "--instance", "old", "--no-tui", input="run the check\nwhat do you remember?\n",
                   timeout=180)
    assert proc.returncode == 0, proc.stderr
    assert "permission:" not in proc.stderr  # the 0.18 "always" pattern allows it without asking
    first, after_bash, _second, after_rag = scripted_api.message_requests()
    assert first.body["model"] == "claude-opus-4-7" and "ROLE-018" in first.system_text
    assert "SLOT-GOAL" in first.user_text() and "HISTORY-MARK: billing listens on 5433." in first.user_text()
    bash = after_bash.tool_results()[0]
    assert not bash.get("is_error") and "migrated-ok" in json.dumps(bash)
    assert "port 5433 since the cutover" in json.dumps(after_rag.tool_results())


def test_migration_keeps_every_row_pin_slot_and_config_key(old_instance, isolated_home: Path) -> None:
    from click.testing import CliRunner

    from mnemara.cli import main

    root, _ = old_instance
    raw = json.loads((root / "config.json").read_text())
    result = CliRunner().invoke(main, ["migrate", "--instance", "old"])
    assert result.exit_code == 0, result.output
    cfg = Config.load(root / "config.json")
    assert cfg.peer_poll_silent_types == list(LEGACY_SILENT_TYPES)  # 0.18's null = its built-in list
    assert cfg.peer_poll_roles == ["panel_a", "panel_b"]
    data = cfg.to_dict()
    for key, value in raw.items():  # every 0.18 key is still there, mapped or kept
        assert key in data, key
        if key not in ("peer_poll_roles", "peer_poll_silent_types", "allowed_tools", "peer_poll_interval_seconds"):
            assert data[key] == value, key
    with TurnStore(root / "turns.sqlite") as store:
        rows = store.history()
        pinned = store.pinned()
    assert [t.id for t in rows] == [1, 2, 3, 4, 5, 6, 7]
    assert [(t.pin_label, t.text) for t in pinned] == [("00_goal", "SLOT-GOAL ship v2"), ("01_status", "SLOT-STATUS green")]
    by_id = {t.id: t for t in rows}
    assert by_id[1].role == "user" and by_id[1].meta["legacy_role"] == "Status"
    assert by_id[2].meta["tokens_in"] == 120 and by_id[2].meta["tokens_out"] == 9
    assert by_id[5].evicted and by_id[5].meta["legacy_marker"] == "debugging"
    assert by_id[6].meta["segment"] == "debugging" and by_id[7].meta["segment"] == "debugging"
    assert [b["type"] for b in by_id[7].blocks] == ["thinking", "tool_use"]
    assert by_id[7].meta["tool_uses"] == [{"name": "Bash"}]
    assert all(t.created_at.startswith("20") for t in rows)
    perms = json.loads((root / "permissions.json").read_text())
    assert perms == {"allowed_patterns": {"Bash": [r"^echo migrated\b"]}}
    mark = json.loads((root / "peer_watermark.json").read_text())
    assert mark == {"db": str(root / "peers.sqlite"), "watermark": 42}
    assert not (root / "peer_poll_watermark").exists()


def test_018_export_file_imports(old_instance, isolated_home: Path) -> None:
    from mnemara.commands import dispatch
    from mnemara.session.agent import AgentSession

    _root, export = old_instance
    inst = Instance.create("fresh")
    session = AgentSession(inst)
    try:
        # its allowed_tools only name 0.18's per-tool policies and default allows, so no tool's answer
        # changes; its model and peer settings differ, and those are shown and asked (issue 25)
        asked = dispatch(session, f"/import {export}")
        assert not asked.ok and '+ model: "claude-opus-4-7"' in asked.text, asked.text
        assert not [line for line in asked.text.splitlines() if line.startswith("  ~ ")], asked.text
        assert "mud_host" not in asked.text  # keys Mnemara does not read change nothing
        result = dispatch(session, f"/import --accept-permissions {export}")
        assert result.ok, result.text
        rows = session.store.history()
    finally:
        session.close()
    texts = [t.text for t in rows]
    assert "HISTORY-MARK: billing listens on 5433." in texts and "SLOT-GOAL ship v2" in texts
    assert Config.load(inst.config_path).model == "claude-opus-4-7"


def _hand_made_018(root: Path, **config: object) -> None:
    """A minimal 0.18-shaped instance (config keys as 0.18 writes them) for the refusal paths."""
    root.mkdir(parents=True)
    raw = {"role_doc_path": "", "model": "claude-opus-4-7", "max_window_turns": 100, "max_window_tokens": 500000,
           "allowed_tools": [], "peer_poll_silent_types": None, "mud_host": "127.0.0.1", **config}
    (root / "config.json").write_text(json.dumps(raw, indent=2))
    (root / "permissions.json").write_text('{"Bash": {"allowed_patterns": ["^ls"]}}\n')
    with sqlite3.connect(root / "turns.sqlite") as conn:
        conn.execute("CREATE TABLE turns (id INTEGER PRIMARY KEY AUTOINCREMENT, ts TEXT NOT NULL, role TEXT NOT NULL, "
                     "content TEXT NOT NULL, tool_uses TEXT, tokens_in INTEGER, tokens_out INTEGER, pin_label TEXT)")
        conn.execute("INSERT INTO turns (ts, role, content) VALUES ('2026-01-01T00:00:00+00:00', 'user', 'hi')")
    conn.close()


def test_all_goes_past_a_bad_instance_and_leaves_it_untouched(mnemara_home: Path) -> None:
    from click.testing import CliRunner

    from mnemara.cli import main

    _hand_made_018(mnemara_home / "bad", max_window_turns="lots")
    _hand_made_018(mnemara_home / "good")
    before = {p.name: p.read_bytes() for p in (mnemara_home / "bad").iterdir()}
    result = CliRunner().invoke(main, ["migrate", "--all"])
    assert result.exit_code == 1
    assert "bad: FAILED" in result.output and "max_window_turns" in result.output
    assert "nothing was changed" in result.output and "mnemara migrate --instance bad" in result.output
    assert "good: migrated from Mnemara 0.18" in result.output and "1 of 2 instances failed: bad" in result.output
    assert {p.name: p.read_bytes() for p in (mnemara_home / "bad").iterdir() if p.is_file()} == before
    assert not (mnemara_home / "bad" / ".migrate-staging").exists()
    with TurnStore(mnemara_home / "good" / "turns.sqlite") as store:
        assert [t.text for t in store.history()] == ["hi"]


def test_a_corrupt_018_store_stops_the_migration_with_originals_in_place(mnemara_home: Path) -> None:
    from click.testing import CliRunner

    from mnemara.cli import main

    root = mnemara_home / "broken"
    _hand_made_018(root)
    (root / "turns.sqlite").write_bytes((root / "turns.sqlite").read_bytes()[:2048])  # truncated file
    before = {p.name: p.read_bytes() for p in root.iterdir() if p.is_file()}
    result = CliRunner().invoke(main, ["migrate", "--instance", "broken"])
    assert result.exit_code == 1, result.output
    assert "turns.sqlite cannot be read" in result.output and "nothing was changed" in result.output, result.output
    assert "run `mnemara migrate --instance broken` again" in result.output
    assert {p.name: p.read_bytes() for p in root.iterdir() if p.is_file() and p.name != "debug.log"} == before


_STAMP = re.compile(r"\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([+-]\d{2}:?\d{2}|Z)?)?")


def _rows(db: Path) -> dict[str, list[tuple]]:
    con = sqlite3.connect(db)
    try:
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")]
        return {t: [tuple(_STAMP.sub("T", v) if isinstance(v, str) else v for v in row)
                    for row in con.execute(f"SELECT * FROM {t}")] for t in tables}
    finally:
        con.close()


def test_the_kept_018_data_is_what_018_itself_writes(tmp_path_factory) -> None:
    """tests/data/legacy018 is the output of BUILD_SCRIPT under the real mnemara==0.18.0 (installed for
    this run): same files, same config, same rows, same notes and export, up to times and the build path."""
    built = built_by_018(tmp_path_factory)
    fresh, kept = built / ".mnemara" / "old", DATA / "instance"
    files = sorted(str(p.relative_to(fresh)) for p in fresh.rglob("*") if p.is_file())
    assert [_STAMP.sub("T", f) for f in files] == \
        [_STAMP.sub("T", str(p.relative_to(kept))) for p in sorted(kept.rglob("*")) if p.is_file()]
    assert sorted(p.name for p in fresh.iterdir() if p.is_dir() and not any(p.iterdir())) == sorted(EMPTY_FOLDERS)
    for name in files:
        if name == "turns.sqlite":
            assert _rows(fresh / name) == _rows(kept / name)
            continue
        ours = (kept / _STAMP.sub(lambda m: next(kept.glob("memory/*.md")).stem, name) if name.startswith("memory/")
                else kept / name).read_text(encoding="utf-8")
        assert _STAMP.sub("T", (fresh / name).read_text(encoding="utf-8").replace(str(built), "@BUILT@")) == \
            _STAMP.sub("T", ours), name
    assert _STAMP.sub("T", (built / "export018.md").read_text(encoding="utf-8").replace(str(built), "@BUILT@")) == \
        _STAMP.sub("T", (DATA / "export018.md").read_text(encoding="utf-8"))


def test_the_018_venv_sees_this_venv_and_not_the_base_interpreter(tmp_path_factory) -> None:
    """Issue 32: with ``--system-site-packages`` a venv made from a venv's Python sees the *base*
    interpreter's packages, which a fresh machine does not have. 0.18 must run on this run's own
    packages (and what pip added for it), whatever the base Python happens to hold."""
    import subprocess
    import sys
    import sysconfig

    from tests.legacy018_support import python018

    python = python018(tmp_path_factory)
    seen = subprocess.run([python, "-c", "import sys; print('\\n'.join(sys.path))"], capture_output=True,
                          text=True, check=True, timeout=60).stdout.split()
    base = sysconfig.get_paths(vars={"base": sys.base_prefix, "platbase": sys.base_prefix})["purelib"]
    if sys.prefix != sys.base_prefix:  # the tests run in a venv (as .ci/run does): its base must stay out
        assert base not in seen, seen
    assert sysconfig.get_paths()["purelib"] in seen, seen
