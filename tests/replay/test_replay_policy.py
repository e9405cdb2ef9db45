"""replay_policy.md: thresholds and exclusions honoured; bad values refused with nothing changed."""
from __future__ import annotations

import pytest

from mnemara.core.config import update_config
from mnemara.core.errors import ConfigError
from mnemara.replay import run_replay
from mnemara.replay.policy import parse_policy

from replay_helpers import LEASE, NOW, POLLING, add, make_instance, tree_hash


def _seed(inst):
    for i, text in enumerate(LEASE):
        add(inst, text, "insight", hours_ago=5 - i)
    add(inst, LEASE[0], "decision", hours_ago=1)
    for i, text in enumerate(POLLING):
        add(inst, text, "self_observation", hours_ago=4 - i)


def test_parse_policy_reads_known_keys_in_prose_and_lists():
    policy = parse_policy(
        "---\nthreshold: 4\n---\n# Replay policy\nWe like prose: it is ignored.\n"
        "- **Exclude categories**: scratch, todo\n* exclude_categories: `secret`\n- archive: off\n"
        "- cluster distance: 0.3\n- duplicate-distance: 0.05\n"
    )
    assert policy.threshold == 4
    assert policy.exclude_categories == ["scratch", "todo", "secret"]
    assert policy.archive is False
    assert (policy.cluster_distance, policy.duplicate_distance) == (0.3, 0.05)


@pytest.mark.parametrize(
    "line, message",
    [
        ("threshold: many", "threshold must be a whole number >= 2, got 'many'"),
        ("threshold: 1", "threshold must be a whole number >= 2"),
        ("days: 0", "days must be a whole number >= 1"),
        ("cluster_distance: 2", "cluster_distance must be a number between 0 and 1"),
        ("archive: maybe", "archive must be on/off"),
    ],
)
def test_bad_policy_values_are_refused_and_nothing_changes(line, message):
    inst = make_instance()
    _seed(inst)
    (inst.wiki_dir / "replay_policy.md").write_text(f"# policy\n\n- {line}\n")
    before = tree_hash(inst.root)
    with pytest.raises(ConfigError, match=message) as info:
        run_replay(inst, now=NOW, apply=True)
    assert "replay_policy.md line 3" in str(info.value)
    assert tree_hash(inst.root) == before


def test_duplicate_distance_above_cluster_distance_is_refused():
    with pytest.raises(ConfigError, match="duplicate_distance"):
        parse_policy("duplicate_distance: 0.5\ncluster_distance: 0.3\n")


def test_policy_not_utf8_is_refused(tmp_path):
    inst = make_instance()
    (inst.wiki_dir / "replay_policy.md").write_bytes(b"threshold: \xff")
    with pytest.raises(ConfigError, match="not valid UTF-8"):
        run_replay(inst, now=NOW)


def test_policy_threshold_and_exclusions_are_honoured():
    inst = make_instance()
    _seed(inst)
    baseline = run_replay(inst, now=NOW)
    assert baseline.counts["patterns"] == 2 and baseline.counts["duplicates"] == 1
    (inst.wiki_dir / "replay_policy.md").write_text("- exclude_categories: self_observation\n")
    plan = run_replay(inst, now=NOW)
    assert plan.counts["excluded"] == 3 and plan.counts["patterns"] == 1
    assert not any(a.kind == "write_role_proposal" for a in plan.actions)
    (inst.wiki_dir / "replay_policy.md").write_text("- threshold: 5\n")
    assert run_replay(inst, now=NOW).counts["patterns"] == 0
    assert run_replay(inst, now=NOW, threshold=3).counts["patterns"] == 2  # explicit argument wins


def test_policy_protect_and_archive_off_stop_archiving():
    inst = make_instance()
    for i, text in enumerate(LEASE):
        add(inst, text, "insight", hours_ago=5 - i)
    add(inst, LEASE[0], "decision", hours_ago=1)
    assert run_replay(inst, now=NOW).counts["duplicates"] == 1
    (inst.wiki_dir / "replay_policy.md").write_text("- protect_categories: decision\n")
    assert run_replay(inst, now=NOW).counts["duplicates"] == 0
    (inst.wiki_dir / "replay_policy.md").write_text("- archive: no\n")
    assert run_replay(inst, now=NOW).counts["duplicates"] == 0


def test_replay_policy_path_from_config_is_used():
    inst = make_instance()
    _seed(inst)
    (inst.wiki_dir / "replay_policy.md").write_text("- threshold: 2\n")
    (inst.root / "my_policy.md").write_text("- threshold: 9\n")
    update_config(inst.config_path, replay_policy_path="my_policy.md")
    plan = run_replay(inst, now=NOW)
    assert plan.threshold == 9 and plan.policy_source.endswith("my_policy.md")


def test_missing_policy_means_defaults():
    inst = make_instance()
    update_config(inst.config_path, replay_policy_path="/nonexistent/policy.md")
    plan = run_replay(inst, now=NOW)
    assert plan.threshold == 3 and plan.policy_source == "" and plan.cluster_distance == 0.35
