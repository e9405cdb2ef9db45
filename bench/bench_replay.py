"""Replay dry run over generated memories: 1k vs 10k atoms.

    /work/venv/bin/python bench/bench_replay.py [--sizes 1000 10000] [--dense] [--baseline]

Notes are generated as topics of ~8 paraphrased notes each (topics grow with the
number of notes, as a real memory's do), spread over 7 day files, with ~5%
exact repeats. For each size it reports the wall time of a dry run (best of
--repeat), the tracemalloc peak of a separate run, pairs/patterns/duplicates
found, and the 10k/1k time ratio against the 100x of all-pairs comparison.
``--dense`` also runs the embedding path with a local deterministic embedder;
``--baseline`` times the pair search alone against an all-pairs search with the
same dot-product kernel (and checks both find the same pairs).
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
import tracemalloc
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from mnemara.store.instance import Instance  # noqa: E402
from mnemara.memory.notes import format_note  # noqa: E402
from mnemara.replay import run_replay  # noqa: E402
from mnemara.replay.cluster import _dots, sparse_pairs  # noqa: E402
from mnemara.replay.load import load_atoms  # noqa: E402
from mnemara.memory.search.tfidf import TfidfSpace  # noqa: E402

NOW = datetime(2026, 5, 10, 23, 0, tzinfo=timezone.utc)
CATEGORIES = ["insight", "decision", "self_observation", "todo", "note"]


def _word(rng: random.Random) -> str:
    return "".join(rng.choice("bcdfghjklmnprstvz") + rng.choice("aeiou") for _ in range(rng.randint(2, 4)))


def generate(root: Path, count: int, seed: int = 7) -> Instance:
    """An instance with ``count`` notes written straight into 7 day files."""
    rng = random.Random(seed)
    vocabulary = sorted({_word(rng) for _ in range(20000)})
    inst = Instance.create("bench", home=root)
    topics = [rng.sample(vocabulary, 6) for _ in range(max(1, count // 8))]
    by_day: dict[str, list[str]] = {}
    previous: list[str] = []
    for i in range(count):
        when = NOW - timedelta(seconds=int(i * 7 * 86400 / count) + 1)
        if previous and rng.random() < 0.05:
            text = rng.choice(previous)
        else:
            topic = rng.choice(topics)
            words = rng.sample(topic, 5) + [rng.choice(vocabulary) for _ in range(rng.randint(1, 4))]
            rng.shuffle(words)
            text = " ".join(words).capitalize() + "."
        previous = (previous + [text])[-50:]
        by_day.setdefault(when.date().isoformat(), []).append(format_note(text, rng.choice(CATEGORIES), when))
    for day, notes in by_day.items():
        (inst.memory_dir / f"{day}.md").write_text("".join(reversed(notes)), encoding="utf-8")
    return inst


def hashed_embedder(dim: int = 256):
    """A local stand-in for Ollama: hashed bag of words, deterministic."""

    def embed(texts: list[str]) -> list[list[float]]:
        out = np.zeros((len(texts), dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in text.lower().split():
                out[row, hash(token) % dim] += 1.0
        return out.tolist()

    embed.name = f"hashed-bow-{dim}"  # type: ignore[attr-defined]
    return embed


def all_pairs(rows, bound: float) -> int:
    """Baseline: every row against every earlier row, with the same dot-product kernel."""
    scratch = np.zeros(rows.width, dtype=np.float32)
    found = 0
    for j in range(1, len(rows)):
        idx, val = rows.row(j)
        sims = _dots(rows, np.arange(j, dtype=np.int64), idx, val, scratch)
        found += int((sims >= bound - 1e-6).sum())
    return found


def pair_phase(inst: Instance) -> dict:
    """Time only the pair search on the TF-IDF rows: prefix filtering vs the all-pairs baseline."""
    loaded = load_atoms(inst.memory_dir, 7, NOW.date())
    rows = TfidfSpace([a.atom.text for a in loaded.atoms if a.atom.text.strip()]).rows
    stats: dict[str, int] = {}
    start = time.perf_counter()
    filtered = len(sparse_pairs(rows, 0.65, stats=stats))
    mid = time.perf_counter()
    brute = all_pairs(rows, 0.65)
    end = time.perf_counter()
    assert filtered == brute, (filtered, brute)
    n = len(rows)
    return {"filtered": mid - start, "brute": end - mid, "pairs": filtered,
            "candidates": stats.get("candidates", 0), "all": n * (n - 1) // 2}


def measure(inst: Instance, repeat: int, embed=None) -> dict:
    best = float("inf")
    plan = None
    for _ in range(repeat):
        start = time.perf_counter()
        plan = run_replay(inst, now=NOW, embed=embed)
        best = min(best, time.perf_counter() - start)
    tracemalloc.start()
    run_replay(inst, now=NOW, embed=embed)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    c = plan.counts
    return {
        "seconds": best, "peak_mb": peak / 2**20, "atoms": c["atoms"], "pairs": c["pairs"],
        "patterns": c["patterns"], "duplicates": c["duplicates"], "method": plan.method,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dense", action="store_true", help="also time the embedding path")
    parser.add_argument("--baseline", action="store_true", help="also time the pair search against all-pairs")
    parser.add_argument("--apply", action="store_true", help="also time --apply and the idempotent second run")
    args = parser.parse_args()
    os.environ.setdefault("PYTHONHASHSEED", "0")
    modes = [("tfidf", None)] + ([("dense", hashed_embedder())] if args.dense else [])
    for label, embed in modes:
        results = {}
        for size in args.sizes:
            with tempfile.TemporaryDirectory() as home:
                inst = generate(Path(home), size)
                results[size] = r = measure(inst, args.repeat, embed)
            print(
                f"[{label}] {size:>6} atoms: dry run {r['seconds']:.3f} s, peak {r['peak_mb']:.1f} MiB, "
                f"{r['pairs']} pairs, {r['patterns']} patterns, {r['duplicates']} duplicates ({r['method']})"
            )
        small, large = min(results), max(results)
        if small != large:
            ratio = results[large]["seconds"] / results[small]["seconds"]
            scale = large / small
            print(
                f"[{label}] ratio {large}/{small}: time x{ratio:.1f}, peak memory "
                f"x{results[large]['peak_mb'] / results[small]['peak_mb']:.1f} "
                f"(linear would be x{scale:.0f}, all-pairs x{scale * scale:.0f})"
            )


    if args.apply:
        for size in args.sizes:
            with tempfile.TemporaryDirectory() as home:
                inst = generate(Path(home), size)
                start = time.perf_counter()
                first = run_replay(inst, now=NOW, apply=True)
                mid = time.perf_counter()
                second = run_replay(inst, now=NOW, apply=True)
                end = time.perf_counter()
            print(
                f"[apply] {size:>6} atoms: first apply {mid - start:.3f} s ({len(first.result.written)} written, "
                f"{len(first.result.archived)} archived); second apply {end - mid:.3f} s "
                f"({len(second.result.written)} written, {len(second.result.archived)} archived)"
            )
    if args.baseline:
        phases = {}
        for size in args.sizes:
            with tempfile.TemporaryDirectory() as home:
                phases[size] = r = pair_phase(generate(Path(home), size))
            print(
                f"[pairs] {size:>6} atoms: prefix-filtered {r['filtered']:.3f} s ({r['candidates']} dot products), "
                f"all-pairs {r['brute']:.3f} s ({r['all']} dot products); same {r['pairs']} pairs"
            )
        small, large = min(phases), max(phases)
        if small != large:
            print(
                f"[pairs] ratio {large}/{small}: prefix-filtered time x{phases[large]['filtered'] / phases[small]['filtered']:.1f} "
                f"(dot products x{phases[large]['candidates'] / max(phases[small]['candidates'], 1):.1f}), "
                f"all-pairs time x{phases[large]['brute'] / phases[small]['brute']:.1f}"
            )


if __name__ == "__main__":
    main()
