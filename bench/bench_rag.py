"""Retrieval quality and speed of the memory layer (issue 6).

Run: python bench/bench_rag.py [--notes 10000] [--edges 100000] [--skip-scale]

1. Quality on the golden set (bench/data/rag_golden.json: notes written as memory
   atoms, queries with the note that must rank first): recall@1, recall@5 and MRR,
   overall and per query type, for keyword-only (BM25) and for hybrid with the
   loopback fake embedder (lexical-fuzzy vectors, NOT a semantic model), and with
   a real Ollama on localhost:11434 when one answers.
2. Speed at scale: indexing throughput of N synthetic notes (keyword only, and
   the embedding pass through the fake's HTTP), rag_query median latency with
   a baseline in the same run (a plain Python token scan over the same notes),
   and the cost of the no-change catch-up that precedes every query.
3. graph_neighbors on a Kuzu graph with E edges (depth 1 and 2) against a Python
   adjacency-dict BFS baseline.

The machine is shared and noisy: compare ratios, not absolute times.
"""
from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mnemara.memory.search.embed import EmbedError, OllamaEmbedder  # noqa: E402
from mnemara.memory.notes import append_note, format_note  # noqa: E402
from mnemara.memory.search.rag import RagIndex  # noqa: E402
from mnemara.testing.ollama import FakeOllama  # noqa: E402

GOLDEN = ROOT / "bench" / "data" / "rag_golden.json"
START = datetime(2026, 1, 1, tzinfo=timezone.utc)


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


# -- 1. quality ----------------------------------------------------------------------
def write_golden(root: Path) -> dict[str, str]:
    """Write the golden notes as memory atoms; returns note text -> golden id."""
    data = json.loads(GOLDEN.read_text())
    by_text = {}
    for n, note in enumerate(data["notes"]):
        append_note(root / "memory", note["text"], note["category"], when=START + timedelta(days=n % 7, minutes=n))
        by_text[note["text"]] = note["id"]
    return by_text


def golden_ranks(rag: RagIndex, by_text: dict[str, str], queries: list[dict]) -> tuple[list[tuple[str, int | None]], str]:
    """``(query type, rank of the expected note in the top 5 or None)`` per golden query, and
    why the index answered keyword-only ('' when it was hybrid)."""
    ranks: list[tuple[str, int | None]] = []
    degraded = ""
    for query in queries:
        res = rag.query(query["q"], k=5)
        degraded = degraded or res.get("degraded", "")
        ids = [by_text.get(h["text"]) for h in res["hits"]]
        ranks.append((query["type"], ids.index(query["expect"]) + 1 if query["expect"] in ids else None))
    return ranks, degraded


def metrics(ranks: list[int | None]) -> dict[str, float]:
    """recall@1, recall@5 and MRR of a list of ranks (None: not in the top 5)."""
    n = len(ranks) or 1
    return {"recall@1": sum(r == 1 for r in ranks) / n, "recall@5": sum(bool(r) for r in ranks) / n,
            "MRR": sum(1 / r for r in ranks if r) / n, "n": len(ranks)}


def score(rag: RagIndex, by_text: dict[str, str]) -> tuple[dict[str, float], dict[str, dict[str, float]], str]:
    ranks, degraded = golden_ranks(rag, by_text, json.loads(GOLDEN.read_text())["queries"])
    per_type = {t: metrics([r for k, r in ranks if k == t]) for t in sorted({t for t, _ in ranks})}
    return metrics([r for _, r in ranks]), per_type, degraded


def quality() -> None:
    print("== retrieval quality on the golden set", GOLDEN.relative_to(ROOT))
    runs: list[tuple[str, object]] = [("keyword-only (BM25)", None)]
    fake = FakeOllama(dim=256).start()
    runs.append(("hybrid, fake embedder", OllamaEmbedder(fake.url("/api/embed"), "fake-lexical")))
    from mnemara.memory.search.embedders import local_embedder

    runs.append(("hybrid, local embedder (default)", local_embedder()))
    real = OllamaEmbedder("http://localhost:11434/api/embed", "nomic-embed-text", timeout=2)
    try:
        real.embed(["probe"])
        runs.append(("hybrid, Ollama nomic-embed-text", real))
    except EmbedError as exc:
        print(f"   (no real Ollama here: {exc}; hybrid with a real model not measured)")
    try:
        for label, embedder in runs:
            with tempfile.TemporaryDirectory() as tmp:
                root = Path(tmp)
                by_text = write_golden(root)
                rag = RagIndex(root, embedder=embedder)  # type: ignore[arg-type]
                rag.catch_up(embed_budget=None)
                overall, per_type, degraded = score(rag, by_text)
                if embedder is None:
                    assert degraded.startswith("keyword-only")
                print(f"   {label:34s} recall@1 {overall['recall@1']:.2f}  recall@5 {overall['recall@5']:.2f}"
                      f"  MRR {overall['MRR']:.3f}  ({overall['n']} queries)")
                for kind, m in per_type.items():
                    print(f"      {kind:31s} recall@1 {m['recall@1']:.2f}  recall@5 {m['recall@5']:.2f}"
                          f"  MRR {m['MRR']:.3f}  ({m['n']})")
    finally:
        fake.stop()


# -- 2. speed at scale ------------------------------------------------------------------
WORDS = ("lease timeout server cache index query deploy rollback config secret token vault cluster node shard "
         "replica backup restore migrate schema table column invoice payment customer order report metric alert "
         "latency throughput queue worker retry budget quota tenant region zone router switch packet kernel "
         "thread lock mutex channel socket buffer parser lexer compiler module package release branch merge "
         "review test fixture mock sample garden tomato bread coffee piano travel train hotel passport").split()


def synthetic_notes(count: int, seed: int = 7) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    notes = []
    for n in range(count):
        words = rng.choices(WORDS, k=rng.randint(12, 40))
        words.insert(rng.randrange(len(words)), f"ID-{n:06d}")
        notes.append((" ".join(words), rng.choice(("insight", "decision", "ops", "todo"))))
    return notes


def write_day_files(root: Path, notes: list[tuple[str, str]], per_day: int = 100) -> None:
    memory = root / "memory"
    memory.mkdir(parents=True, exist_ok=True)
    for start in range(0, len(notes), per_day):
        day = START + timedelta(days=start // per_day)
        chunk = "".join(format_note(text, cat, day + timedelta(seconds=i))
                        for i, (text, cat) in enumerate(notes[start:start + per_day]))
        (memory / f"{day.date().isoformat()}.md").write_text(chunk)


def scan_baseline(notes: list[tuple[str, str]], question: str, k: int = 5) -> list[int]:
    """The naive alternative: count query-token hits in every note, in Python."""
    terms = set(re.findall(r"[a-z0-9-]+", question.lower()))
    scored = []
    for i, (text, _) in enumerate(notes):
        tokens = re.findall(r"[a-z0-9-]+", text.lower())
        hits = sum(1 for t in tokens if t in terms)
        if hits:
            scored.append((-hits, i))
    return [i for _, i in sorted(scored)[:k]]


def scale(count: int) -> None:
    print(f"\n== rag at scale: {count} notes in {count // 100} day files")
    notes = synthetic_notes(count)
    rng = random.Random(11)
    questions = [" ".join(rng.choices(WORDS, k=3)) for _ in range(30)] + \
                [f"ID-{rng.randrange(count):06d}" for _ in range(10)]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_day_files(root, notes)
        rag = RagIndex(root)
        t0 = time.perf_counter()
        stats = rag.catch_up()
        took = time.perf_counter() - t0
        print(f"   index (keyword, from files): {stats['added']} chunks in {took:.2f} s = {stats['added'] / took:,.0f} notes/s")
        rag.query("warm up")
        catch = []
        for _ in range(20):
            t0 = time.perf_counter()
            rag.catch_up()
            catch.append(time.perf_counter() - t0)
        keyword, base = [], []
        for q in questions:
            t0 = time.perf_counter()
            res = rag.query(q, k=5)
            keyword.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            scan_baseline(notes, q)
            base.append(time.perf_counter() - t0)
        ids_found = sum(1 for q in questions[30:] if q in rag.query(q, k=1)["hits"][0]["text"])
        print(f"   no-change catch-up before each query: median {median_ms(catch):.2f} ms")
        print(f"   rag_query keyword-only (incl. catch-up): median {median_ms(keyword):.1f} ms"
              f"  (goal < 50 ms)  | Python scan baseline {median_ms(base):.1f} ms"
              f"  | ratio query/baseline {statistics.median(keyword) / statistics.median(base):.2f}")
        print(f"   rare identifiers at rank 1: {ids_found}/10;  degraded says: {res.get('degraded', '')[:60]}")
        with FakeOllama(dim=256) as fake:
            hybrid_rag = RagIndex(root, embedder=OllamaEmbedder(fake.url("/api/embed"), "fake-lexical", timeout=60))
            t0 = time.perf_counter()
            emb = hybrid_rag.catch_up(embed_budget=None)  # nothing changed on disk: fills vectors only
            emb = hybrid_rag._sync_vectors(None)
            took = time.perf_counter() - t0
            print(f"   embedding pass through HTTP (fake embedder): {fake.texts_embedded()} texts in {took:.1f} s"
                  f" = {fake.texts_embedded() / took:,.0f} texts/s ({emb})")
            hybrid = []
            for q in questions:
                t0 = time.perf_counter()
                hybrid_rag.query(q, k=5)
                hybrid.append(time.perf_counter() - t0)
            print(f"   rag_query hybrid (fake embedder, in-memory cosine over LanceDB-stored vectors): median {median_ms(hybrid):.1f} ms"
                  f"  | ratio hybrid/keyword {statistics.median(hybrid) / statistics.median(keyword):.2f}")
        t0 = time.perf_counter()
        append_note(root / "memory", "a brand new note about the zanzibar protocol", "insight")
        res = rag.query("zanzibar")
        print(f"   note appended by another writer, then query: {1000 * (time.perf_counter() - t0):.1f} ms, "
              f"found at rank 1: {'zanzibar' in res['hits'][0]['text']}")


# -- 3. graph -------------------------------------------------------------------------------
def graph(edges: int) -> None:
    from mnemara.memory.graph.store import Graph

    nodes = max(edges // 5, 10)
    print(f"\n== graph_neighbors on Kuzu: {nodes} nodes, {edges} edges")
    rng = random.Random(3)
    pairs = [(rng.randrange(nodes), rng.randrange(nodes)) for _ in range(edges)]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        g = Graph(root / "graph")
        conn = g._connection()
        (root / "nodes.csv").write_text("".join(f"n{i},entity,{{}},2026-01-01\n" for i in range(nodes)))
        (root / "edges.csv").write_text("".join(f"n{a},n{b},e{j},rel{j % 4},{{}},2026-01-01\n"
                                                for j, (a, b) in enumerate(pairs)))
        t0 = time.perf_counter()
        conn.execute(f"COPY Node FROM '{root / 'nodes.csv'}' (HEADER=false, QUOTE='\"')")
        conn.execute(f"COPY Edge FROM '{root / 'edges.csv'}' (HEADER=false)")
        print(f"   bulk load (COPY): {time.perf_counter() - t0:.2f} s; counts {g.counts()}")
        t0 = time.perf_counter()
        for j in range(200):
            g.add_edge(f"n{j}", f"n{j + 1}", "bench")
        print(f"   add_edge through the API: {1000 * (time.perf_counter() - t0) / 200:.2f} ms per edge")
        adjacency: dict[str, set[str]] = {}
        for a, b in pairs:
            adjacency.setdefault(f"n{a}", set()).add(f"n{b}")
            adjacency.setdefault(f"n{b}", set()).add(f"n{a}")
        starts = [f"n{rng.randrange(nodes)}" for _ in range(30)]
        for depth in (1, 2):
            times, base, sizes = [], [], []
            for s in starts:
                t0 = time.perf_counter()
                res = g.neighbors(s, depth=depth, limit=1000)
                times.append(time.perf_counter() - t0)
                sizes.append(len(res["neighbors"]))
                t0 = time.perf_counter()
                seen, frontier = {s}, [s]
                for _ in range(depth):
                    frontier = [n for f in frontier for n in adjacency.get(f, ()) if n not in seen and not seen.add(n)]
                base.append(time.perf_counter() - t0)
            print(f"   neighbors depth {depth}: median {median_ms(times):.1f} ms (median {statistics.median(sizes):.0f}"
                  f" nodes) | Python dict BFS baseline {median_ms(base):.3f} ms")
        t0 = time.perf_counter()
        path = g.shortest_path(starts[0], starts[1], max_depth=10)
        print(f"   shortest_path: {1000 * (time.perf_counter() - t0):.1f} ms (length {path['length']})")
        g.close()
        t0 = time.perf_counter()
        g.counts()
        print(f"   reopen after release (a session closes the file after 1.5 s without graph calls): "
              f"{1000 * (time.perf_counter() - t0):.1f} ms")
        g.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--edges", type=int, default=100_000)
    parser.add_argument("--skip-scale", action="store_true", help="golden-set quality only")
    args = parser.parse_args()
    quality()
    if not args.skip_scale:
        scale(args.notes)
        graph(args.edges)


if __name__ == "__main__":
    main()
