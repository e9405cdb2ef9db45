"""`mnemara replay` on the command line (a real subprocess)."""
from __future__ import annotations

import json

from mnemara.core.config import update_config
from mnemara.store.instance import Instance

from tests.conftest import run_cli
from datetime import datetime, timedelta, timezone

from mnemara.memory.notes import append_note

from replay_helpers import LEASE, POLLING, tree_hash


def add(inst, text, category="insight", hours_ago=1.0):
    """The CLI replays around the real clock, so notes are dated from it."""
    append_note(inst.memory_dir, text, category, when=datetime.now(timezone.utc) - timedelta(hours=hours_ago))


def _instance():
    inst = Instance.create("cli")
    update_config(inst.config_path, rag_enabled=False, graph_enabled=False)
    for i, text in enumerate(LEASE):
        add(inst, text, hours_ago=30 - i)
    add(inst, LEASE[0], hours_ago=2)
    for i, text in enumerate(POLLING):
        add(inst, text, "self_observation", hours_ago=20 - i)
    return inst


def test_dry_run_prints_the_plan_and_writes_nothing():
    inst = _instance()
    before = tree_hash(inst.root)
    out = run_cli("replay", "--instance", "cli", "--days", "30")
    assert out.returncode == 0, out.stderr
    assert tree_hash(inst.root) == before
    assert out.stdout.startswith("replay dry run: nothing written")
    assert "similarity: lexical TF-IDF (no embedder)" in out.stdout
    assert "would:\n" in out.stdout and "  write wiki_proposals/" in out.stdout
    assert "  archive memory/archive/" in out.stdout and "  append sleep/" in out.stdout
    assert "replay: load" in out.stderr and "replay: cluster" in out.stderr


def test_apply_then_json_shows_nothing_left_to_do():
    inst = _instance()
    applied = run_cli("replay", "--instance", "cli", "--days", "30", "--apply")
    assert applied.returncode == 0, applied.stderr
    assert "done:\n" in applied.stdout and "  archived " in applied.stdout
    assert len(list(inst.wiki_proposals_dir.glob("*.md"))) == 2
    again = run_cli("replay", "--instance", "cli", "--days", "30", "--json")
    assert again.returncode == 0, again.stderr
    data = json.loads(again.stdout)
    assert data["applied"] is False
    assert [a["kind"] for a in data["actions"]] == ["append_digest"]
    assert data["counts"]["archived_atoms"] == 1


def test_bad_arguments_and_inputs_are_refused_with_one_line():
    inst = _instance()
    before = tree_hash(inst.root)
    out = run_cli("replay", "--instance", "cli", "--threshold", "1")
    assert out.returncode == 2 and "--threshold" in out.stderr
    out = run_cli("replay", "--instance", "cli", "--days", "0")
    assert out.returncode == 2 and "--days" in out.stderr
    out = run_cli("replay", "--instance", "cli", "--days", "99999999")
    assert out.returncode == 2 and "--days" in out.stderr
    out = run_cli("replay", "--instance", "ghost")
    assert out.returncode == 2 and out.stderr.startswith("error: no instance 'ghost'")
    out = run_cli("replay", "--instance", "../etc")
    assert out.returncode == 2 and "invalid instance name" in out.stderr
    (inst.wiki_dir / "replay_policy.md").write_text("threshold: lots\n")
    before = tree_hash(inst.root, skip=("debug.log",))
    out = run_cli("replay", "--instance", "cli", "--apply")
    assert out.returncode == 2
    assert out.stderr.strip().splitlines()[-1].startswith("error: ") and "threshold must be a whole number" in out.stderr
    assert tree_hash(inst.root, skip=("debug.log",)) == before  # only the error was logged
    assert "threshold must be a whole number" in inst.debug_log_path.read_text()


def test_dry_run_flag_is_accepted_and_conflicts_with_apply():
    from click.testing import CliRunner

    from mnemara.cli import main

    inst = _instance()
    before = tree_hash(inst.root, skip=("debug.log",))
    out = CliRunner().invoke(main, ["replay", "--instance", "cli", "--days", "30", "--dry-run"])
    assert out.exit_code == 0 and "replay dry run: nothing written" in out.output
    both = CliRunner().invoke(main, ["replay", "--instance", "cli", "--dry-run", "--apply"])
    assert both.exit_code == 2 and "not both" in both.output
    assert tree_hash(inst.root, skip=("debug.log",)) == before
