"""Replay dry run over generated memories: 1k vs 10k atoms.

    /work/venv/bin/python bench/bench_replay.py [--sizes 1000 10000] [--dense]

Notes are generated as topics of ~8 paraphrased notes each (topics grow with the
number of notes, as a real memory's do), spread over 7 day files, with ~5%
exact repeats. For each size it reports the wall time of a dry run (best of
--repeat), the tracemalloc peak of a separate run, pairs/patterns/duplicates
found, and the 10k/1k time ratio against the 100x of all-pairs comparison.
``--dense`` also runs the embedding path with a local deterministic embedder.
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

from mnemara.instance import Instance  # noqa: E402
from mnemara.memory.notes import format_note  # noqa: E402
from mnemara.replay import run_replay  # noqa: E402

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


if __name__ == "__main__":
    main()
