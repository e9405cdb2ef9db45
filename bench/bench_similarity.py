"""Issue 15: copies vs corrections, the local embedder, the recall gate and channel weights.

Run: python bench/bench_similarity.py [--notes 10000] [--turns 30] [--skip-scale]

1. Local embedder (WordLlama from its wheel): load time and embed throughput
   on 2,000 short notes, against the tokenizer over the same texts as the
   same-run baseline. Goals: load < 2 s, >= 500 texts/s.
2. Retrieval on the golden set (bench/data/rag_golden.json, notes dated by
   their 'day'), for keyword-only, the local embedder and the loopback fake
   embedder: recall@1/@5 and MRR, overall and for the issue-15 queries; the
   vector channel alone (MRR) beside the weights in use (chosen on LoCoMo
   by bench/bench_locomo.py, see mnemara/memory/search/embedders.py).
3. Auto-recall on the golden queries plus 15 off-topic messages (default bar):
   injection rate, precision (injections that hold the expected note) and
   off-topic false positives.
4. Copy-vs-correction (bench/data/claims.json): dedupe on write and replay
   (keyword-only, local, fake) under issue 31's rule: exact copies refused or
   archived, other copies proposed, distinct facts wrongly refused/archived.
   Goals: 0 traps refused or archived, every copy refused or proposed on write.
5. At N notes: the latency auto-recall adds to a turn (context_blocks with
   auto_recall off as the baseline) keyword-only and with the local embedder.

Exits 1 when a goal is missed (what missed is printed last).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

GOLDEN = json.loads((ROOT / "bench" / "data" / "rag_golden.json").read_text())
CLAIMS = json.loads((ROOT / "bench" / "data" / "claims.json").read_text())["pairs"]
START = datetime(2026, 1, 1, tzinfo=timezone.utc)
MISSES: list[str] = []


def goal(ok: bool, what: str) -> str:
    if not ok:
        MISSES.append(what)
    return "ok" if ok else "MISSED"


# -- 1. the local embedder -------------------------------------------------------------------
def embedder_speed() -> None:
    from mnemara.memory.search.embedders import LocalEmbedder
    from mnemara.memory.search.similarity import tokens

    print("== 1. local embedder (wordllama l2_supercat 256, weights from the installed wheel)")
    texts = [f"The {w} service on host-{i % 97} times out after {i % 90} seconds when the queue is full"
             for i, w in enumerate(["billing", "deploy", "lease", "search", "ledger"] * 400)]
    emb = LocalEmbedder()
    t0, c0 = time.perf_counter(), time.process_time()
    emb.embed(["warm"])
    load, load_cpu = time.perf_counter() - t0, time.process_time() - c0
    t0 = time.perf_counter()
    emb.embed_array(texts)
    took = time.perf_counter() - t0
    t0 = time.perf_counter()
    for text in texts:
        tokens(text)
    base = time.perf_counter() - t0
    rate = len(texts) / took
    print(f"   import + load: {load:.2f} s wall, {load_cpu:.2f} s CPU (goal < 2 s of CPU, wall is inflated "
          f"by other jobs on a shared machine: {goal(load_cpu < 2.0, 'local embedder load < 2 s CPU')})")
    print(f"   embed {len(texts)} short notes: {took * 1000:.0f} ms = {rate:,.0f} texts/s "
          f"(goal >= 500/s: {goal(rate >= 500, 'embed >= 500 texts/s')}); tokenizer baseline "
          f"{len(texts) / base:,.0f} texts/s, ratio embed/tokenize time {took / base:.2f}")


# -- 2. retrieval ------------------------------------------------------------------------------
def write_golden(memory: Path) -> dict[str, str]:
    from mnemara.memory.notes import append_note

    by_text = {}
    for n, note in enumerate(GOLDEN["notes"]):
        when = START + timedelta(days=note.get("day", n % 7), minutes=n)
        append_note(memory, note["text"], note["category"], when=when)
        by_text[note["text"]] = note["id"]
    return by_text


def show(label: str, m: dict[str, float]) -> str:
    return (f"{label:28s} recall@1 {m['recall@1']:.2f}  recall@5 {m['recall@5']:.2f}  MRR {m['MRR']:.3f}  "
            f"({m['n']:.0f} queries)")


def vector_only(embedder: object) -> dict[str, float]:
    """Rank of the expected note by cosine alone (search text = category + text, as indexed)."""
    import numpy as np
    from bench_rag import metrics

    from mnemara.memory.search.tfidf import call_embedder

    notes = GOLDEN["notes"]
    docs = call_embedder(embedder, [f"{n['category']}\n{n['text']}" for n in notes])
    queries = call_embedder(embedder, [q["q"] for q in GOLDEN["queries"]])
    ranks: list[int | None] = []
    for q, vec in zip(GOLDEN["queries"], queries):
        order = np.argsort(-(docs @ vec), kind="stable")
        ids = [notes[i]["id"] for i in order[:5]]
        ranks.append(ids.index(q["expect"]) + 1 if q["expect"] in ids else None)
    return metrics(ranks)


def retrieval(modes: dict[str, object]) -> dict[str, dict[str, float]]:
    from bench_rag import golden_ranks, metrics

    from mnemara.memory.search.embedders import ranking_weights
    from mnemara.memory.search.rag import RagIndex

    print("\n== 2. retrieval on the golden set "
          f"({len(GOLDEN['queries'])} queries, {sum(q['type'].startswith('i15') for q in GOLDEN['queries'])} new)")
    out = {}
    for label, embedder in modes.items():
        with tempfile.TemporaryDirectory() as tmp:
            by_text = write_golden(Path(tmp) / "memory")
            rag = RagIndex(Path(tmp), embedder=embedder)
            rag.catch_up(embed_budget=None)
            typed, degraded = golden_ranks(rag, by_text, GOLDEN["queries"])
            new = [rank for kind, rank in typed if kind.startswith("i15")]
            out[label] = metrics([rank for _, rank in typed])
            channels = "keyword only" if degraded else "keyword + vector"
            print("   " + show(f"{label} ({channels})", out[label]))
            print("      " + show("new (i15) queries only", metrics(new)))
    keyword = out["keyword-only"]["MRR"]
    for label, embedder in modes.items():
        if embedder is None:
            continue
        vec = vector_only(embedder)
        derived = vec["MRR"] / keyword if keyword else 0.0
        used, why = ranking_weights(embedder)
        print(f"   vector channel alone, {label}: MRR {vec['MRR']:.3f} (recall@5 {vec['recall@5']:.2f}); vector/keyword "
              f"MRR ratio {derived:.3f}; in use: keyword {used.keyword}, vector {used.vector} ({why[:70]}...)")
    return out


# -- 3. auto-recall ------------------------------------------------------------------------------
OFF_TOPIC = [
    "Please write a short poem about autumn leaves.", "What's a good name for a cat?",
    "Translate 'good morning' into French.", "How many legs does a spider have?",
    "Tell me a joke about penguins.", "Summarise the plot of Hamlet in two lines.",
    "What is the capital of Australia?", "Suggest a recipe with lentils and spinach.",
    "Explain photosynthesis to a child.", "Which planet has the most moons?",
    "Give me three tips for a job interview.", "What rhymes with orange?",
    "How do I fold a paper crane?", "Recommend a board game for four players.",
    "Why is the sky blue?",
]


def auto_recall(settings: dict[str, dict[str, object]]) -> None:
    from mnemara.core.config import update_config
    from mnemara.store.instance import Instance
    from mnemara.memory.status import all_atoms, chunk_id
    from mnemara.session.agent import AgentSession

    print(f"\n== 3. auto-recall on the golden queries + {len(OFF_TOPIC)} off-topic messages (default bar)")
    for label, cfg in settings.items():
        inst = Instance.create(f"recall-{label.replace(' ', '-')}")
        by_text = write_golden(inst.memory_dir)
        ids = {by_text[a.text]: chunk_id(a) for a in all_atoms(inst.memory_dir)}
        update_config(inst.config_path, auto_recall=True, graph_enabled=False, **cfg)
        session = AgentSession(inst, warm_spare=False)
        try:
            session.reload_config()
            fired = right = fired_new = right_new = 0
            for q in GOLDEN["queries"]:
                got = [h["id"] for h in session.auto_recall.run(session, q["q"]).injected]
                fired += bool(got)
                right += ids[q["expect"]] in got
                if q["type"].startswith("i15"):
                    fired_new += bool(got)
                    right_new += ids[q["expect"]] in got
            false = sum(bool(session.auto_recall.run(session, m).injected) for m in OFF_TOPIC)
        finally:
            session.close()
        n, n_new = len(GOLDEN["queries"]), sum(q["type"].startswith("i15") for q in GOLDEN["queries"])
        precision = right / fired if fired else 0.0
        print(f"   {label:22s} injected for {fired}/{n} queries ({fired / n:.0%}), expected note injected "
              f"{right}/{n}, precision {precision:.2f}; new queries {right_new}/{n_new} (fired {fired_new}); "
              f"off-topic injections {false}/{len(OFF_TOPIC)} (goal 0: "
              f"{goal(false == 0, f'0 off-topic injections ({label})')})")


# -- 4. copies vs corrections --------------------------------------------------------------------
def copies_vs_corrections(modes: dict[str, object]) -> None:
    """Issue 31's rule on issue 15's set: only exact copies are refused or archived; every other copy
    is written and proposed (merge or supersession); no trap is ever refused or archived."""
    from mnemara.store.instance import Instance
    from mnemara.memory.dedupe import assess
    from mnemara.memory.notes import append_note
    from mnemara.memory.status import all_atoms
    from mnemara.replay import run_replay

    traps = [p for p in CLAIMS if p["kind"] == "trap"]
    copies = [p for p in CLAIMS if p["kind"] == "copy"]
    print(f"\n== 4. copy-vs-correction set: {len(copies)} true copies, {len(traps)} distinct-fact traps")
    day = datetime(2026, 5, 1, 9, tzinfo=timezone.utc)
    for label, embedder in modes.items():
        with tempfile.TemporaryDirectory() as tmp:
            merged = refused = proposed = conflicts_named = 0
            for kind, pairs in (("trap", traps), ("copy", copies)):
                memory = Path(tmp) / kind
                for n, pair in enumerate(pairs):
                    append_note(memory, pair["older"], "fact", when=day + timedelta(minutes=n))
                for pair in pairs:
                    check = assess(memory, pair["newer"], embedder=embedder, threshold=0.97)  # type: ignore[arg-type]
                    named = pair["older"] in [c.atom.text for c in check.conflicts + check.copies]
                    if kind == "trap":
                        merged += check.duplicate is not None
                        conflicts_named += pair["older"] in [c.atom.text for c in check.conflicts]
                    else:
                        refused += check.duplicate is not None
                        proposed += check.duplicate is None and named
        handled = refused + proposed
        print(f"   dedupe on write, {label:13s}: exact copies refused {refused}/{len(copies)}, other copies proposed "
              f"{proposed}/{len(copies)}, traps wrongly refused {merged}/{len(traps)}, traps written and proposed "
              f"{conflicts_named}/{len(traps)}  (goals: 0 {goal(merged == 0, f'dedupe refuses 0 traps ({label})')}, "
              f"100% handled {goal(handled == len(copies), f'dedupe handles or proposes every copy ({label})')})")
        now = day + timedelta(days=2)
        results = {}
        for kind, pairs in (("trap", traps), ("copy", copies)):
            inst = Instance.create(f"claims-{kind}-{label.replace(' ', '-')}")
            for n, pair in enumerate(pairs):
                append_note(inst.memory_dir, pair["older"], "fact", when=day + timedelta(minutes=n))
                append_note(inst.memory_dir, pair["newer"], "fact", when=day + timedelta(days=1, minutes=n))
            plan = run_replay(inst, apply=True, embed=embedder, now=now, today=now.date())
            live = {a.text for a in all_atoms(inst.memory_dir)}
            offered = {(c.older.atom.text, c.newer.atom.text) for c in plan.conflicts}
            gone = [p for p in pairs if p["newer"] not in live or p["older"] not in live]
            asked = [p for p in pairs if p not in gone and (p["older"], p["newer"]) in offered]
            results[kind] = (len(gone), len(asked))
        merged, conflicts = results["trap"]
        archived, asked = results["copy"]
        print(f"   replay --apply,   {label:13s}: exact copies archived {archived}/{len(copies)}, other copies "
              f"proposed {asked}/{len(copies)}, traps wrongly archived {merged}/{len(traps)}, traps proposed "
              f"{conflicts}/{len(traps)}  (goals: 0 {goal(merged == 0, f'replay archives 0 traps ({label})')}; "
              f"copies handled or proposed {archived + asked}/{len(copies)}, reported)")


# -- 5. latency at scale --------------------------------------------------------------------------
def latency(count: int, turns: int) -> None:
    from bench_recall import messages, time_auto_recall, write_notes

    from mnemara.core.config import update_config
    from mnemara.store.instance import Instance

    print(f"\n== 5. auto-recall latency per turn at {count} notes ({turns} messages, half off-topic)")
    added_by: dict[str, float] = {}
    for label, cfg in (("keyword-only", {"rag_embedder": "none"}), ("local embedder", {"rag_embedder": "local"})):
        inst = Instance.create(f"lat-{label.replace(' ', '-')}")
        write_notes(inst.memory_dir, count)
        update_config(inst.config_path, graph_enabled=False, **cfg)
        msgs = messages(turns)
        t = time_auto_recall(inst, msgs, warm_after_on=True)
        added_by[label] = statistics.median(t.added)
        ratio = f" = {added_by[label] / added_by['keyword-only']:.1f} x keyword-only" if len(added_by) > 1 else ""
        print(f"   [{label}] index built in {t.build_s:.1f} s ({t.chunks} chunks); turn context off: median "
              f"{statistics.median(t.base):.1f} ms, on: median {statistics.median(t.on):.1f} ms; added per turn: median "
              f"{added_by[label]:.1f} ms{ratio}; injected on {t.injected}/{len(msgs)} (synthetic notes)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--skip-scale", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["MNEMARA_HOME"] = str(Path(tmp) / "home")
        from mnemara.memory.search.embed import OllamaEmbedder
        from mnemara.memory.search.embedders import local_embedder
        from mnemara.testing.ollama import FakeOllama

        embedder_speed()
        with FakeOllama(dim=256) as fake:
            fake_embedder = OllamaEmbedder(fake.url("/api/embed"), "fake-lexical", timeout=60)
            modes = {"keyword-only": None, "local embedder": local_embedder(), "fake embedder": fake_embedder}
            retrieval(modes)
            auto_recall({"keyword-only": {"rag_embedder": "none"}, "local embedder": {"rag_embedder": "local"},
                         "fake embedder": {"rag_embedder": "ollama", "rag_embed_url": fake.url("/api/embed"),
                                           "rag_embed_model": "fake-lexical"}})
            copies_vs_corrections(modes)
        if not args.skip_scale:
            latency(args.notes, args.turns)
    if MISSES:
        print("\nMISSED: " + "; ".join(MISSES))
        sys.exit(1)
    print("\nall goals met")


if __name__ == "__main__":
    main()
