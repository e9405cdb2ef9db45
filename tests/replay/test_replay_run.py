"""run_replay end to end on a real instance folder: dry run, apply, idempotence, drafts."""
from __future__ import annotations

import json

import pytest

from mnemara.core.config import update_config
from mnemara.replay import run_replay
from mnemara.memory.notes import all_notes
from mnemara.replay.archive import read_entries

from replay_helpers import LEASE, NOW, POLLING, add, make_instance, tree_hash, where_is_every_atom


def _seed(inst):
    for i, text in enumerate(LEASE):
        add(inst, text, "insight", hours_ago=30 - i)
    add(inst, LEASE[0], "insight", hours_ago=2)  # exact repeat -> near-duplicate
    for i, text in enumerate(POLLING):
        add(inst, text, "self_observation", hours_ago=20 - i)
    add(inst, "Buy milk on the way home.", "todo", hours_ago=5)


def test_dry_run_writes_nothing_and_lists_every_action():
    inst = make_instance()
    _seed(inst)
    before = tree_hash(inst.root)
    plan = run_replay(inst, now=NOW)
    assert tree_hash(inst.root) == before
    kinds = [a.kind for a in plan.actions]
    assert kinds.count("write_wiki_proposal") == 2
    assert kinds.count("write_role_proposal") == 1
    assert kinds.count("archive") == 1
    assert kinds[-1] == "append_digest"
    assert plan.method.startswith("lexical TF-IDF")
    assert not plan.applied and plan.result is None


def test_apply_does_exactly_what_the_dry_run_listed():
    inst = make_instance()
    _seed(inst)
    dry = run_replay(inst, now=NOW)
    done = run_replay(inst, now=NOW, apply=True)
    planned = sorted(a.path for a in dry.actions if a.kind.startswith("write_"))
    assert sorted(done.result.written) == planned
    for path in planned:
        assert (inst.root / path).is_file()
    assert len(done.result.archived) == 1
    assert (inst.root / f"sleep/{NOW.date().isoformat()}.md").is_file()
    assert done.result.problems == []


def test_archive_moves_the_duplicate_verbatim_with_a_pointer():
    inst = make_instance()
    _seed(inst)
    day = inst.memory_dir / f"{NOW.date().isoformat()}.md"
    before = day.read_bytes()
    run_replay(inst, now=NOW, apply=True)
    entries = read_entries(inst.archive_dir / day.name)
    assert len(entries) == 1
    entry = entries[0]
    assert LEASE[0].encode() in entry.raw and entry.raw in before
    keeper = next(a for a in all_notes(inst.memory_dir) if a.timestamp == "2026-05-09T16:00:00+00:00")
    assert entry.keeper == keeper.id  # the first copy, 30 hours earlier
    after = day.read_bytes()
    assert after == before.replace(entry.raw, b"", 1)
    assert all(n == 1 for n in where_is_every_atom(inst).values())


def test_second_apply_drafts_and_archives_nothing_new():
    inst = make_instance()
    _seed(inst)
    run_replay(inst, now=NOW, apply=True)
    snapshot = {p: p.read_bytes() for p in inst.root.rglob("*.md") if "sleep" not in p.parts}
    again = run_replay(inst, now=NOW.replace(hour=23), apply=True)
    assert again.result.written == [] and again.result.archived == []
    assert [a.kind for a in again.actions] == ["append_digest"]
    assert {p: p.read_bytes() for p in inst.root.rglob("*.md") if "sleep" not in p.parts} == snapshot
    digest = (inst.root / f"sleep/{NOW.date().isoformat()}.md").read_text()
    assert digest.count("## Replay run") == 2


def test_wiki_proposal_cites_members_by_file_and_timestamp():
    inst = make_instance()
    _seed(inst)
    plan = run_replay(inst, now=NOW, apply=True)
    lease = next(p for p in plan.patterns if "lease" in p.members[0].atom.text.lower())
    text = "".join((inst.root / w).read_text() for w in plan.result.written if w.startswith("wiki_proposals/"))
    for member in lease.members:
        assert f"memory/{member.atom.file.name} @ {member.atom.timestamp}" in text
    assert "because the load balancer drops idle connections" in text  # causal phrasing surfaced


def test_role_proposal_only_when_self_observations_cluster():
    inst = make_instance()
    _seed(inst)
    plan = run_replay(inst, now=NOW, apply=True)
    role = [w for w in plan.result.written if w.startswith("role_proposals/")]
    assert len(role) == 1 and role[0].startswith("role_proposals/20260510T220000Z_replay-")
    body = (inst.root / role[0]).read_text()
    assert "I polled the build status" in body and "Lease timeout" not in body

    other = make_instance("other")
    for i, text in enumerate(POLLING):
        add(other, text, "insight", hours_ago=5 - i)
    plan = run_replay(other, now=NOW)
    assert not any(a.kind == "write_role_proposal" for a in plan.actions)


def test_existing_wiki_page_covers_a_pattern():
    inst = make_instance()
    _seed(inst)
    (inst.wiki_dir / "ops").mkdir()
    (inst.wiki_dir / "ops" / "lease.md").write_text(
        "# Lease timeout\n\nThe lease timeout in server.py is 30 seconds: the load balancer drops idle connections.\n"
    )
    plan = run_replay(inst, now=NOW)
    lease = next(p for p in plan.patterns if "lease" in p.members[0].atom.text.lower())
    assert lease.covered_by == "wiki/ops/lease.md"
    assert sum(a.kind == "write_wiki_proposal" for a in plan.actions) == 1


def test_threshold_and_days_limit_what_counts():
    inst = make_instance()
    _seed(inst)
    assert run_replay(inst, now=NOW, threshold=5).counts["patterns"] == 0
    one_day = run_replay(inst, now=NOW, days=1)
    assert one_day.counts["files"] == 1  # the 30-hours-ago notes sit in yesterday's file
    with pytest.raises(Exception, match="threshold must be at least 2"):
        run_replay(inst, now=NOW, threshold=1)


def test_config_defaults_are_used():
    inst = make_instance()
    _seed(inst)
    update_config(inst.config_path, replay_default_threshold=4, replay_default_days=1)
    plan = run_replay(inst, now=NOW)
    assert (plan.days, plan.threshold) == (1, 4)


def test_embedder_is_used_and_its_failure_degrades_to_lexical():
    inst = make_instance()
    _seed(inst)
    calls = []

    def embed(texts):
        calls.append(len(texts))
        # two fixed directions: notes mentioning "lease" vs everything else
        return [[1.0, 0.0, 0.0] if "lease" in t.lower() else [0.0, 1.0, 0.1 * (len(t) % 3)] for t in texts]

    plan = run_replay(inst, now=NOW, embed=embed)
    assert plan.method.startswith("embeddings")
    assert calls and sum(calls) >= 8
    assert max(len(p.members) for p in plan.patterns) == 4

    def broken(texts):
        raise ConnectionError("cannot reach http://127.0.0.1:9/api/embed")

    plan = run_replay(inst, now=NOW, embed=broken)
    assert plan.method == "lexical TF-IDF (embedder failed: cannot reach http://127.0.0.1:9/api/embed)"
    assert plan.counts["patterns"] == 2


def test_graph_lookup_adds_entities_and_a_broken_graph_degrades():
    inst = make_instance()
    _seed(inst)

    def lookup(atoms):
        return {a.index: ["server.py", "load-balancer"] for a in atoms if "lease" in a.atom.text.lower()}

    plan = run_replay(inst, now=NOW, entity_lookup=lookup)
    lease = next(p for p in plan.patterns if "lease" in p.members[0].atom.text.lower())
    assert ("server.py", 4) in lease.augmentation.entities
    assert plan.graph_status.startswith("graph used")

    def broken(atoms):
        raise RuntimeError("Graph backend unavailable: database is locked")

    plan = run_replay(inst, now=NOW, entity_lookup=broken)
    assert plan.graph_status == "graph unavailable: Graph backend unavailable: database is locked"
    assert plan.counts["patterns"] == 2


def test_applies_to_lines_give_entities_without_a_graph():
    inst = make_instance()
    for i, text in enumerate(LEASE):
        add(inst, text + "\napplies_to: server.py, haproxy", hours_ago=5 - i)
    plan = run_replay(inst, now=NOW)
    assert plan.patterns[0].augmentation.entities == [("haproxy", 3), ("server.py", 3)]


def test_plan_to_dict_is_json():
    inst = make_instance()
    _seed(inst)
    data = json.loads(json.dumps(run_replay(inst, now=NOW).to_dict()))
    assert data["applied"] is False and data["counts"]["duplicates"] == 1
    assert {a["kind"] for a in data["actions"]} == {"write_wiki_proposal", "write_role_proposal", "archive",
                                                  "propose_supersession", "append_digest"}


def test_lint_statuses_are_honoured():
    from mnemara.memory.notes import parse_file
    from mnemara.memory.status import mark_distinct, set_status

    inst = make_instance()
    _seed(inst)
    atoms = [a for p in sorted(inst.memory_dir.glob("*.md")) for a in parse_file(p)]
    first, repeat = atoms[0], next(a for a in atoms[1:] if a.text == atoms[0].text)
    mark_distinct(inst.memory_dir, first, repeat)  # the user said: not the same note
    assert run_replay(inst, now=NOW).counts["duplicates"] == 0
    polls = [a for a in atoms if a.category == "self_observation"]
    set_status(inst.memory_dir, polls[0], "deprecated")
    plan = run_replay(inst, now=NOW)
    assert plan.counts["excluded"] == 1
    assert not any(a.kind == "write_role_proposal" for a in plan.actions)  # 2 left, below threshold


def test_unreadable_status_sidecar_is_reported_not_fatal():
    inst = make_instance()
    _seed(inst)
    (inst.memory_dir / "status.json").write_text("{not json")
    plan = run_replay(inst, now=NOW)
    assert plan.issues[0].file == "status.json" and "statuses ignored" in plan.issues[0].reason
    assert plan.counts["duplicates"] == 1


def test_embedding_near_duplicates_must_also_match_in_wording():
    inst = make_instance()
    add(inst, "The lease timeout in server.py is 30 seconds.", hours_ago=3)
    add(inst, "The lease timeout in server.py is 60 seconds.", hours_ago=2)
    add(inst, "The lease timeout in server.py is 30 seconds.", hours_ago=1)  # restated after 60 s: stays
    add(inst, "The lease timeout in server.py is 30 seconds.", hours_ago=0.5)  # a plain copy: archived

    def same_vector(texts):  # an embedder that cannot tell the numbers apart
        return [[1.0, 0.0] for _ in texts]

    plan = run_replay(inst, now=NOW, embed=same_vector)
    moves = [a.detail for a in plan.actions if a.kind == "archive"]
    assert len(moves) == 1 and moves[0].startswith("20260510-213000-"), moves


def test_phases_run_in_order_and_the_plan_lists_actions_in_that_order():
    from mnemara.replay.plan import build_plan

    inst = make_instance()
    _seed(inst)
    add(inst, "The lease timeout in server.py is 60 seconds because the load balancer drops idle connections.",
        hours_ago=1)  # a conflict with LEASE[0]: proposed for supersession, never archived
    seen: list[str] = []
    plan = build_plan(inst, now=NOW, embed=lambda texts: [[1.0, float("lease" in t)] for t in texts],
                      progress=lambda phase, done, total: seen.append(phase))
    assert list(dict.fromkeys(seen)) == ["load", "embed", "cluster", "augment"]
    kinds = list(dict.fromkeys(a.kind for a in plan.actions))
    assert kinds[-3:] == ["archive", "propose_supersession", "append_digest"]
    assert set(kinds[:-3]) == {"write_wiki_proposal", "write_role_proposal"}
