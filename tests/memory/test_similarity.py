"""Issue 15: a copy is not a correction (issue 31: only an exact copy is acted on; a possible copy is proposed). Claim guard, replay/dedupe on the trap set, recency,
the local embedder as the default vector channel, and the auto-recall gate.

Real parts: LanceDB on a temp folder and the bundled local embedder (WordLlama from its wheel).
"""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from mnemara.core.config import Config, ConfigError, update_config
from mnemara.store.instance import Instance
from mnemara.memory.notes import append_note
from mnemara.memory.search.recency import apply_recency
from mnemara.memory.search.similarity import CONFLICT, COPY, POSSIBLE_COPY, claim_differences, relate, tokens
from mnemara.memory.search.exact import is_exact_copy
from mnemara.memory.status import all_atoms, chunk_id

ROOT = Path(__file__).resolve().parents[2]
PAIRS = json.loads((ROOT / "bench" / "data" / "claims.json").read_text())["pairs"]
TRAPS = [p for p in PAIRS if p["kind"] == "trap"]
COPIES = [p for p in PAIRS if p["kind"] == "copy"]
DAY1 = datetime(2026, 5, 1, 9, 0, tzinfo=timezone.utc)


def _local():
    from mnemara.memory.search.embedders import local_embedder

    return local_embedder()


@pytest.mark.parametrize("pair", TRAPS, ids=[p["why"] for p in TRAPS])
def test_guard_never_calls_a_trap_a_copy_even_at_similarity_one(pair: dict) -> None:
    rel = relate(pair["older"], pair["newer"], similarity=1.0, copy_at=0.5)
    assert rel.kind == CONFLICT and rel.reasons, rel
    assert claim_differences(pair["older"], pair["newer"])


def test_guard_lets_true_copies_through() -> None:
    agreeing = [p for p in COPIES if not claim_differences(p["older"], p["newer"])]
    # a verb swapped for a synonym ("owns" / "maintains") is left to a person, like any swapped word
    assert [p["why"] for p in COPIES if p not in agreeing] == ["synonym verb"]
    assert relate("The lease timeout is 30 seconds.", "The lease timeout is 30 s.").kind == POSSIBLE_COPY
    assert relate("The lease timeout is 30 seconds.", "the lease  timeout is 30 seconds").kind == COPY


def test_an_aside_that_claims_nothing_is_detail_and_any_other_aside_counts() -> None:
    base = "Redis runs on port 6379 in every environment."
    assert relate(base, "Redis runs on port 6379 in every environment (dev, staging, prod).").kind == POSSIBLE_COPY
    # a name in an aside is detail of the one claim (issue 40, round 4): the merge that keeps the longer wording loses nothing
    assert relate(base, base.rstrip(".") + " (in EU).").kind == POSSIBLE_COPY
    for aside, why in (("(except prod)", "limits differ"), ("(v7 only)", "numbers differ"),
                       ("(disabled on Sundays)", "polarity"), ("(not on the replicas)", "negation")):
        rel = relate(base, base.rstrip(".") + f" {aside}.", similarity=1.0, copy_at=0.5)
        assert rel.kind == CONFLICT and any(why in r for r in rel.reasons), (aside, rel)


def test_a_limiter_on_one_side_is_a_conflict_never_a_copy() -> None:
    for older, newer in (("Admins can deploy.", "Only admins can deploy."),
                         ("Deploys need approval.", "Deploys need approval unless it is a hotfix."),
                         ("Redis runs everywhere.", "Redis runs everywhere except prod.")):
        rel = relate(older, newer, similarity=1.0, copy_at=0.5)
        assert rel.kind == CONFLICT and "limits differ" in rel.reasons[0], (newer, rel)


def test_numbers_compare_as_written_with_their_signs_and_bounds() -> None:
    """Trust audit: "-5" was "5", "3.10" was "3.1", "1,5" was "15" and "> 500" was "< 500" to the guard."""
    for older, newer in (("The alarm fires at -5 degrees.", "The alarm fires at 5 degrees."),
                         ("The office clock is on UTC-5.", "The office clock is on UTC+5."),
                         ("Alert when p99 is > 500 ms.", "Alert when p99 is <= 500 ms."),
                         ("Pin the ratio at 3.50 for the report.", "Pin the ratio at 3.5 for the report."),
                         ("Reads outnumber writes 1,5 to one.", "Reads outnumber writes 15 to one.")):
        rel = relate(older, newer, similarity=1.0, copy_at=0.5)
        assert rel.kind == CONFLICT and any("numbers differ" in r for r in rel.reasons), (older, rel)
    for older, newer in (("The budget is 1,000,000 dollars.", "The budget is 1000000 dollars."),
                         ("The alarm fires at \u22125 degrees.", "The alarm fires at -5 degrees."),
                         ("We ship on 2026-03-05 once INC-4432 is closed.", "Once INC-4432 is closed, we ship on 2026-03-05."),
                         ("Port 08080 is open to the office.", "Port 8080 is open to the office.")):
        assert relate(older, newer).kind == POSSIBLE_COPY, (older, newer, relate(older, newer))


def test_tokenizer_spells_identifiers_every_way_and_stems() -> None:
    for spelling in ("INC 4432", "INC-4432", "inc4432"):
        assert {"inc", "4432", "inc4432"} <= set(tokens(spelling)), spelling
    assert {"cust", "80417", "cust80417"} <= set(tokens("CUST-80417")) and "cust80417" in tokens("CUST80417")
    assert len({tokens(w)[0] for w in ("renews", "renewed", "renewal", "renewing", "renew")}) == 1
    assert "is30" not in tokens("the timeout is 30 s")


def test_recency_orders_conflicts_newest_first_and_leaves_other_hits_alone() -> None:
    hits = [
        {"id": "a", "kind": "memory", "text": "The deploy timeout is 30 seconds.", "created_at": "2026-05-01T09:00:00+00:00"},
        {"id": "b", "kind": "memory", "text": "Invoices live in the ledger table.", "created_at": "2026-05-02T09:00:00+00:00"},
        {"id": "c", "kind": "memory", "text": "The deploy timeout is 60 seconds.", "created_at": "2026-05-03T09:00:00+00:00"},
        {"id": "d", "kind": "memory", "text": "Backups run at night.", "created_at": "2026-04-01T09:00:00+00:00"},
    ]
    out = apply_recency([dict(h) for h in hits])
    assert [h["id"] for h in out] == ["c", "b", "a", "d"]
    assert out[2]["may_conflict_with"] == ["c"] and out[0]["may_conflict_with"] == ["a"] and "numbers" in out[2]["conflict"]
    assert "may_conflict_with" not in out[1] and "may_conflict_with" not in out[3]
    plain = [h for h in hits if h["id"] in "bd"]
    assert [h["id"] for h in apply_recency([dict(h) for h in plain])] == ["b", "d"]


def test_rag_embedder_setting_is_validated(tmp_path: Path) -> None:
    assert Config().rag_embedder == "local"
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"rag_embedder": "bert"}))
    with pytest.raises(ConfigError, match="rag_embedder"):
        Config.load(path)


def test_local_embedder_loads_from_the_wheel_and_embeds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    vectors = _local().embed(["renew the TLS certificate", "certificate renewal steps", "a poem about autumn"])
    assert len(vectors) == 3 and len(vectors[0]) == 256
    import numpy as np

    m = np.asarray(vectors)
    assert m[0] @ m[1] > m[0] @ m[2]


# -- real LanceDB + real local embedder --------------------------------------------------
def _instance(name: str) -> Instance:
    inst = Instance.create(name)
    update_config(inst.config_path, graph_enabled=False)
    return inst


def _write_pairs(inst: Instance, pairs: list[dict]) -> None:
    for n, pair in enumerate(pairs):
        append_note(inst.memory_dir, pair["older"], "fact", when=DAY1 + timedelta(minutes=n))
        append_note(inst.memory_dir, pair["newer"], "fact", when=DAY1 + timedelta(days=1, minutes=n))


def test_replay_never_archives_a_trap_and_keeps_the_earliest_copy() -> None:
    from mnemara.memory.lint import supersession_candidates
    from mnemara.replay import run_replay

    now = DAY1 + timedelta(days=2)
    traps, copies = _instance("rp-traps"), _instance("rp-copies")
    _write_pairs(traps, TRAPS)
    _write_pairs(copies, COPIES)
    plan = run_replay(traps, apply=True, embed=_local(), now=now, today=now.date())
    assert plan.method.startswith("embeddings (wordllama") and plan.counts["duplicates"] == 0
    texts = {a.text for a in all_atoms(traps.memory_dir)}
    for pair in TRAPS:
        assert pair["older"] in texts and pair["newer"] in texts, pair["why"]
    assert not (traps.memory_dir / "archive").exists() or not list((traps.memory_dir / "archive").glob("*.md"))
    # conflicts: in the digest and proposed for supersession, confirmed in lint --fix
    digest = (traps.root / "sleep" / f"{now.date().isoformat()}.md").read_text()
    assert "### Conflicts (not archived" in digest
    offered = supersession_candidates(traps.memory_dir, limit=200)
    proposed = {(c.older_text, c.newer_text) for c in offered if c.proposed_by == "replay"}
    assert ("The lease timeout is 30 seconds.", "The lease timeout is 300 seconds.") in proposed
    assert all(c.conflict for c in offered if c.proposed_by)

    run_replay(copies, apply=True, embed=_local(), now=now, today=now.date())
    live = {a.text for a in all_atoms(copies.memory_dir)}
    archived_text = "".join(p.read_text() for p in (copies.memory_dir / "archive").glob("*.md"))
    archived = [p for p in COPIES if p["newer"] not in live]
    proposed = {(c.older_text, c.newer_text) for c in supersession_candidates(copies.memory_dir, limit=200)}
    for pair in COPIES:  # only an exact copy is archived (the earliest stays and is named); the rest is proposed
        assert pair["older"] in live
        exact = is_exact_copy(pair["older"], pair["newer"])
        assert (pair in archived) == exact, pair["why"]
        assert exact or (pair["older"], pair["newer"]) in proposed, pair["why"]
    assert not archived or "duplicate-of=20260501-" in archived_text  # the pointer names the earliest copy


def test_dedupe_on_write_refuses_only_exact_copies_and_proposes_the_rest(tmp_path: Path) -> None:
    from mnemara.memory.dedupe import assess

    traps, copies = tmp_path / "traps", tmp_path / "copies"
    for n, pair in enumerate(TRAPS):
        append_note(traps, pair["older"], "fact", when=DAY1 + timedelta(minutes=n))
    for n, pair in enumerate(COPIES):
        append_note(copies, pair["older"], "fact", when=DAY1 + timedelta(minutes=n))
    for pair in TRAPS:
        check = assess(traps, pair["newer"], embedder=_local(), threshold=0.97)
        assert check.duplicate is None, pair["why"]
        assert pair["older"] in [c.atom.text for c in check.conflicts], pair["why"]
    for pair in COPIES:  # refused only when an exact copy; otherwise written and proposed
        check = assess(copies, pair["newer"], embedder=_local(), threshold=0.97)
        assert (check.duplicate is not None) == is_exact_copy(pair["older"], pair["newer"]), pair["why"]
        assert check.duplicate or pair["older"] in [c.atom.text for c in check.copies + check.conflicts], pair["why"]


def test_write_memory_tool_reports_the_conflict(tmp_path: Path) -> None:
    from tests.memory_support import context, make_instance
    from mnemara.tools.memory_notes import specs

    write_memory = specs()[0].handler  # the validating handler the SDK calls

    inst, cfg = make_instance("wm", graph_enabled=False)
    append_note(inst.memory_dir, "The canary receives 5% of traffic for one hour.", "fact", when=DAY1)
    answer = write_memory(context(inst, cfg), {"text": "The canary receives 10% of traffic for one hour."})
    assert answer["ok"] and answer.get("written", True) is not False
    assert "it may correct " + all_atoms(inst.memory_dir)[0].id in answer["conflict_message"]
    assert [a.text for a in all_atoms(inst.memory_dir)][-1] == "The canary receives 10% of traffic for one hour."


def test_rag_query_is_hybrid_with_no_ollama_and_keeps_both_conflicting_notes_newer_first() -> None:
    from mnemara.memory.search.rag import RagIndex
    from mnemara.memory.status import query_active

    inst = _instance("rq")
    update_config(inst.config_path, rag_embed_url="http://127.0.0.1:9/api/embed")  # nothing listens there
    append_note(inst.memory_dir, "The deploy timeout is 30 seconds.", "fact", when=DAY1)
    append_note(inst.memory_dir, "Invoices live in the ledger table.", "fact", when=DAY1 + timedelta(hours=1))
    append_note(inst.memory_dir, "The deploy timeout is 60 seconds.", "fact", when=DAY1 + timedelta(days=3))
    append_note(inst.memory_dir, "All pipelines run on Jenkins.", "fact", when=DAY1)
    append_note(inst.memory_dir, "Jenkins was decommissioned; all pipelines run elsewhere now.", "fact",
                when=DAY1 + timedelta(days=5))
    rag = RagIndex.for_instance(inst, Config.load(inst.config_path))
    answer = query_active(rag, inst.memory_dir, "what is the deploy timeout?", 5)
    assert answer["channels"] == ["keyword", "vector"] and "degraded" not in answer
    assert 0 < answer["weights"]["vector"] <= 1 and "wordllama" in answer["weights_from"]
    hits = answer["hits"]
    assert hits[0]["text"] == "The deploy timeout is 60 seconds."
    older = next(h for h in hits if h["text"] == "The deploy timeout is 30 seconds.")
    assert older["may_conflict_with"] == [hits[0]["id"]] and hits[0]["may_conflict_with"] == [older["id"]]
    # the question names the old value, so the old note ranks first; with k=1 it stays (the best match is
    # never pushed out) and the newer note that may correct it joins it, first, both flagged
    assert [h["text"] for h in query_active(rag, inst.memory_dir, "is the deploy timeout 30 seconds?", 1)["hits"]] \
        == ["The deploy timeout is 60 seconds.", "The deploy timeout is 30 seconds."]
    jenkins = query_active(rag, inst.memory_dir, "which CI runs our pipelines? Jenkins?", 5)["hits"]
    assert jenkins[0]["text"].startswith("Jenkins was decommissioned")
    assert next(h for h in jenkins if h["text"] == "All pipelines run on Jenkins.")["may_conflict_with"]


def test_a_deprecated_correction_does_not_mark_the_live_note_stale() -> None:
    """Trust audit: recency ran before inactive notes were skipped, so the only live answer came back
    "stale_candidate", "conflicts_with" a deprecated note the caller could not even see."""
    from mnemara.memory.search.rag import RagIndex
    from mnemara.memory.status import query_active, set_status

    inst = _instance("rq-dep")
    append_note(inst.memory_dir, "The deploy timeout is 30 seconds.", "fact", when=DAY1)
    append_note(inst.memory_dir, "The deploy timeout is 60 seconds.", "fact", when=DAY1 + timedelta(days=3))
    append_note(inst.memory_dir, "Invoices live in the ledger table.", "fact", when=DAY1)
    wrong = next(a for a in all_atoms(inst.memory_dir) if "60" in a.text)
    set_status(inst.memory_dir, wrong, "deprecated", reason="a typo: it is still 30")
    rag = RagIndex.for_instance(inst, Config.load(inst.config_path))
    hits = query_active(rag, inst.memory_dir, "what is the deploy timeout?", 3)["hits"]
    live = next(h for h in hits if h["text"] == "The deploy timeout is 30 seconds.")
    assert "may_conflict_with" not in live, live
    assert all("60 seconds" not in h["text"] for h in hits)


def test_rag_query_finds_an_identifier_however_it_is_spelt() -> None:
    from mnemara.memory.search.rag import RagIndex

    inst = _instance("ids")
    update_config(inst.config_path, rag_embedder="none")
    append_note(inst.memory_dir, "Customer CUST-80417 is on the enterprise plan.", "fact")
    append_note(inst.memory_dir, "Incident inc4432 came from an expired certificate.", "fact")
    append_note(inst.memory_dir, "The staging database is rebuilt nightly.", "fact")
    rag = RagIndex.for_instance(inst, Config.load(inst.config_path))
    for question, expect in (("CUST80417", "CUST-80417"), ("cust 80417", "CUST-80417"), ("INC 4432", "inc4432"),
                             ("INC-4432", "inc4432")):
        hits = rag.query(question)["hits"]
        assert hits and expect in hits[0]["text"], question


def test_an_index_from_before_fts_text_is_rebuilt_once(tmp_path: Path) -> None:
    import lancedb
    import pyarrow as pa

    from mnemara.memory.search.rag import RagIndex

    append_note(tmp_path / "memory", "The quokka lives on Rottnest island.", "fact")
    db = lancedb.connect(str(tmp_path / "index"))
    names = ("id", "source", "kind", "category", "path", "title", "text", "search_text", "hash", "sig", "created_at")
    db.create_table("chunks", schema=pa.schema([pa.field(n, pa.string()) for n in names]))
    (tmp_path / "index" / "sources.json").write_text(json.dumps({"sources": {"memory/x.md": {}}}))
    hits = RagIndex(tmp_path).query("quokka")["hits"]
    assert hits and "quokka" in hits[0]["text"]


# -- auto-recall ---------------------------------------------------------------------------
def _recall_session(session_factory, name: str, notes: list[tuple[str, datetime]]):
    session = session_factory(name)
    for text, when in notes:
        append_note(session.instance.memory_dir, text, "fact", when=when)
    update_config(session.instance.config_path, auto_recall=True, graph_enabled=False)
    session.reload_config()
    return session


def test_auto_recall_injects_both_conflicting_notes_newest_first_and_flagged(session_factory) -> None:
    session = _recall_session(session_factory, "arc", [
        ("The deploy timeout is 30 seconds.", DAY1),
        ("The deploy timeout is 60 seconds.", DAY1 + timedelta(days=2)),
        ("Invoices live in the ledger table.", DAY1),
    ])
    record = session.auto_recall.run(session, "What is the deploy timeout?")
    injected = [h["text"] for h in record.injected]
    assert injected == ["The deploy timeout is 60 seconds.", "The deploy timeout is 30 seconds."]
    by_text = {a.text: chunk_id(a) for a in all_atoms(session.instance.memory_dir)}
    old, new = by_text["The deploy timeout is 30 seconds."], by_text["The deploy timeout is 60 seconds."]
    assert record.left_out == [] and any(f"may conflict with {old}" in line for line in record.describe())
    assert f"may conflict with {new}" in record.block and "30 seconds" in record.block


def test_auto_recall_gate_identifiers_inflections_and_long_messages(session_factory) -> None:
    session = _recall_session(session_factory, "arg", [
        ("Incident INC-4432 was caused by an expired TLS certificate on the edge proxy.", DAY1),
        ("The billing cron renews the Stripe webhook secret every month.", DAY1),
        ("Point-in-time recovery for Postgres keeps seven days of WAL.", DAY1),
        ("Deploys to staging run every Tuesday after the standup.", DAY1),
    ])
    atoms = all_atoms(session.instance.memory_dir)

    def injected(message: str) -> list[str]:
        return [h["id"] for h in session.auto_recall.run(session, message).injected]

    assert chunk_id(atoms[0]) in injected("what happened in INC 4432?")
    assert chunk_id(atoms[0]) in injected("remind me about inc4432")
    assert chunk_id(atoms[1]) in injected("when was the stripe webhook secret renewed?")
    long = ("I am cleaning up the runbooks this afternoon and want to get the details right. "
            "How much WAL does point in time recovery keep for Postgres? Thanks a lot for checking.")
    assert chunk_id(atoms[2]) in injected(long)
    for chat in ("Tell me a joke about penguins.", "What is the capital of Australia?",
                 "Please write a short poem about autumn leaves.", "How do I fold a paper crane?"):
        assert injected(chat) == [], chat


def test_replay_conflict_is_offered_by_lint_fix_and_superseded_on_confirmation() -> None:
    from click.testing import CliRunner

    from mnemara.cli import main as cli_main
    from mnemara.memory.status import StatusBook
    from mnemara.replay import run_replay

    inst = _instance("lf")
    update_config(inst.config_path, rag_embedder="none")
    append_note(inst.memory_dir, "Postgres listens on port 5432 on the replica.", "fact", when=DAY1)
    append_note(inst.memory_dir, "Postgres listens on port 5433 on the replica.", "fact", when=DAY1 + timedelta(days=1))
    now = DAY1 + timedelta(days=2)
    plan = run_replay(inst, apply=True, now=now, today=now.date())
    assert plan.result is not None and plan.result.archived == [] and len(plan.result.proposed) == 1
    older, newer = all_atoms(inst.memory_dir)
    shown = CliRunner().invoke(cli_main, ["lint", "--instance", "lf"])
    assert f"possible correction, proposed by replay: does {newer.id} supersede {older.id}?" in shown.output
    assert "[-5432-]" in shown.output and "{+5433+}" in shown.output
    assert "numbers differ: 5432 vs 5433" in shown.output
    fixed = CliRunner().invoke(cli_main, ["lint", "--instance", "lf", "--fix"], input="s\n")
    assert "applied 1 fixes" in fixed.output, fixed.output
    book = StatusBook.load(inst.memory_dir)
    assert book.status_of(older) == "superseded" and book.status_of(newer) == "active"
    # nothing was deleted: both notes are still in the day files
    assert [a.text for a in all_atoms(inst.memory_dir)] == [older.text, newer.text]


@pytest.mark.parametrize("embedded", [True, False], ids=["local-embedder", "keyword-only"])
def test_replay_keeps_a_copy_that_restates_a_claim_after_a_contrary_note(embedded: bool) -> None:
    """Trust audit: "30 s" (day 1), "300 s" (day 2), "30 s" again (day 3). The day-3 note is a copy of
    day 1's, but the newest word: replay archived it, so "300 s" became the newest active note (first
    in recall, offered by lint as the correction). A copy after that (day 4) still goes to the archive."""
    from mnemara.memory.lint import supersession_candidates
    from mnemara.replay import run_replay

    inst = _instance(f"rp-restate-{embedded}")
    texts = ["The lease timeout is 30 seconds.", "The lease timeout is 300 seconds.",
             "The lease timeout is 30 seconds.", "The lease timeout is 30 seconds."]
    for day, text in enumerate(texts):
        append_note(inst.memory_dir, text, "fact", when=DAY1 + timedelta(days=day))
    now = DAY1 + timedelta(days=5)
    # keyword-only, the numbers used to outweigh every shared word: the pair was never even compared
    run_replay(inst, apply=True, embed=_local() if embedded else None, now=now, today=now.date())
    live = [(a.timestamp[:10], a.text) for a in all_atoms(inst.memory_dir)]
    assert live == [("2026-05-01", texts[0]), ("2026-05-02", texts[1]), ("2026-05-03", texts[2])]
    archived = "".join(p.read_text() for p in (inst.memory_dir / "archive").glob("*.md"))
    assert "2026-05-04T09:00:00+00:00" in archived and "2026-05-03T09:00:00" not in archived
    offered = {(c.older_text, c.newer_text) for c in supersession_candidates(inst.memory_dir) if c.proposed_by}
    assert (texts[1], texts[2]) in offered  # "does the restated 30 s supersede 300 s?"


def test_contradicts_means_opposite_claims_not_more_or_less_detail() -> None:
    """What lets a restated claim through dedupe and replay (see the two tests above and test_dedupe)."""
    from mnemara.memory.search.similarity import contradicts

    assert contradicts("The lease timeout is 30 seconds.", "The lease timeout is 300 seconds.")
    assert contradicts("Shadow writes are enabled.", "Shadow writes are disabled.")
    assert contradicts("We deploy on Fridays.", "We do not deploy on Fridays.")
    assert contradicts("Production runs Postgres 15.", "Production runs Postgres 16.")
    assert not contradicts("Shadow writes must never be enabled in production.",
                           "The flag ENABLE_SHADOW_WRITES is off in production.")  # a negated pole, an identifier
    assert not contradicts("The canary gets 5% of traffic for one hour.", "The canary gets 5% of traffic.")
    assert not contradicts("The lease timeout is 30 seconds.", "The lease timeout was raised.")


def test_a_heading_without_a_zone_is_utc_on_a_machine_west_of_greenwich(tmp_path, monkeypatch) -> None:
    """Notes are written in UTC. Replay's order and recall's recency read a heading without a zone (a
    hand edit) as the machine's local time, so in California a note of 12:00 sorted after one of 13:00
    UTC, and the older claim was taken for the correction."""
    import time

    from mnemara.memory.notes import parse_file
    from mnemara.memory.search.recency import hit_moment
    from mnemara.replay import plan
    from mnemara.replay.load import LoadedAtom

    day = tmp_path / "2026-05-01.md"
    day.write_text("## [2026-05-01T12:00:00] fact\nThe lease timeout is 30 s.\n\n"  # 0.18's heading, zone cut
                   "## 2026-05-01T10:00:00-03:00 fact\nThe lease timeout is 300 s.\n", encoding="utf-8")
    monkeypatch.setenv("TZ", "America/Los_Angeles")
    time.tzset()
    try:
        assert hit_moment({"created_at": "2026-05-01T12:00:00"}) == "2026-05-01T12:00:00+00:00"
        naive, aware = (LoadedAtom(atom=a, raw=b"", index=i) for i, a in enumerate(parse_file(day)))
        assert plan._when(naive) < plan._when(aware), "12:00 UTC came after 13:00 UTC"
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()


def test_a_short_line_naming_the_same_people_is_not_a_conflict_and_keeps_its_rank() -> None:
    """A one-line reply is inside a long note that names the same people, yet not about what it
    says: recall must not call it a conflict and move it into the long note's better slot."""
    long_note = ("Jon: Hey Gina! Good to see you too. Lost my job as a banker yesterday, so I'm gonna take "
                 "a shot at starting my own business.")
    short = "Gina: Remember Jon, Just do it!"
    assert relate(long_note, short).kind != CONFLICT
    assert relate("Gina: Thanks! Got the tattoo a few years ago.", "Gina: ;)").kind != CONFLICT
    hits = [{"id": "a", "kind": "memory", "text": long_note, "created_at": "2023-01-20T10:00:00+00:00"},
            {"id": "b", "kind": "memory", "text": short, "created_at": "2023-07-23T10:00:00+00:00"}]
    assert [h["id"] for h in apply_recency(hits)] == ["a", "b"]
    # the same subject told differently is still a conflict, newest first
    old = {"id": "c", "kind": "memory", "text": "The deploy window is Friday", "created_at": "2023-01-01T00:00:00+00:00"}
    new = {"id": "d", "kind": "memory", "text": "The deploy window is Monday", "created_at": "2023-02-01T00:00:00+00:00"}
    assert relate(old["text"], new["text"]).kind == CONFLICT
    assert [h["id"] for h in apply_recency([old, new])] == ["d", "c"]
