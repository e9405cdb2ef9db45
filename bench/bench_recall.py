"""Auto-recall benchmark (issue 10): the latency it adds to a turn at 10k notes.

Run: python bench/bench_recall.py [--notes 10000] [--turns 40]

Builds an instance with N notes over 50 topics (written straight into day
files, then indexed once), opens a real AgentSession (no model call is made)
and times ``session.context_blocks(message)``, which is what a turn does
before it calls the model, with auto_recall off (the baseline) and on; the
difference is the added latency. Done keyword-only and with the loopback fake
Ollama as embedder (hybrid). Also prints how many of the messages got an
injection and the median latency of ``mnemara note`` with dedupe at that size.

First, injection quality: the notes and queries of bench/data/rag_golden.json
(each query has the note it should find) plus 15 off-topic messages, at three
values of auto_recall_min_score.
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TOPICS = ["lease manager", "billing ledger", "staging deploy", "kafka consumer", "oauth token", "redis cache",
          "postgres vacuum", "nginx proxy", "terraform state", "grafana alert"]
WORDS = ("timeout retry budget shard replica latency window quota rotate secret schema index backup restore "
         "canary rollout rollback metric trace span queue batch worker cron lock lease owner region").split()


def write_notes(memory: Path, count: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    per_day: dict[str, list[str]] = {}
    for i in range(count):
        day = f"2026-{1 + (i // 2000) % 12:02d}-{1 + (i // 80) % 28:02d}"
        topic = f"{TOPICS[i % len(TOPICS)]} {i % 5}"
        body = f"The {topic} note {i}: " + " ".join(rng.choice(WORDS) for _ in range(14)) + f" id-{i:05d}."
        per_day.setdefault(day, []).append(f"## {day}T{(i % 24):02d}:{(i % 60):02d}:{(i * 7) % 60:02d}+00:00 fact\n{body}\n\n")
    for day, notes in per_day.items():
        (memory / f"{day}.md").write_text("".join(notes), encoding="utf-8")


def messages(n: int, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        if i % 2:
            out.append(f"What did we decide about the {rng.choice(TOPICS)} {rng.choice(WORDS)}?")
        else:
            out.append(f"Please write a short poem about {rng.choice(['autumn', 'the sea', 'coffee', 'trains'])}.")
    return out


def time_turns(session, msgs: list[str]) -> tuple[list[float], int]:
    times, injected = [], 0
    for msg in msgs:
        t0 = time.perf_counter()
        session.context_blocks(msg)
        times.append((time.perf_counter() - t0) * 1000)
        last = getattr(session.auto_recall, "last", None)
        injected += bool(last and last.injected)
    return times, injected


def real_turns(session, msgs: list[str]) -> tuple[list[float], list[float]]:
    """Whole turns through the real Claude CLI against the scripted API, off and on alternating."""
    from mnemara.core.config import update_config
    from mnemara.testing.scripted_api import ScriptedAPI

    out: tuple[list[float], list[float]] = ([], [])
    with ScriptedAPI() as api:
        os.environ.update(api.env())
        session.turn("warm-up")
        for msg in msgs:
            for flag, bucket in ((False, out[0]), (True, out[1])):
                update_config(session.instance.config_path, auto_recall=flag)
                t0 = time.perf_counter()
                session.turn(msg)
                bucket.append((time.perf_counter() - t0) * 1000)
    return out


@dataclass
class RecallTiming:
    """What :func:`time_auto_recall` measured on one instance."""

    chunks: int
    build_s: float
    base: list[float]  # ms per turn context, auto_recall off
    on: list[float]  # ms per turn context, auto_recall on
    injected: int
    last: Any  # the last auto-recall result (says whether recall was degraded to keyword-only)
    turn_base: list[float] = field(default_factory=list)
    turn_on: list[float] = field(default_factory=list)

    @property
    def added(self) -> list[float]:
        return [b - a for a, b in zip(self.base, self.on)]


def time_auto_recall(inst: Any, msgs: list[str], *, warm_after_on: bool = False,
                     turn_samples: int = 0) -> RecallTiming:
    """Build ``inst``'s RAG index, then time each message's turn context with auto_recall off
    (the baseline) and on, in one session; ``turn_samples`` whole turns through the real CLI too."""
    from mnemara.core.config import Config, update_config
    from mnemara.memory.search.rag import RagIndex
    from mnemara.session.agent import AgentSession

    t0 = time.perf_counter()
    stats = RagIndex.for_instance(inst, Config.load(inst.config_path)).rebuild()
    build = time.perf_counter() - t0
    session = AgentSession(inst, warm_spare=False)
    try:
        session.context_blocks("warm up the index and the embedder")
        base, _ = time_turns(session, msgs)
        update_config(inst.config_path, auto_recall=True)
        session.reload_config()
        if warm_after_on:
            session.context_blocks("warm up the term statistics")
        on, injected = time_turns(session, msgs)
        turn_base, turn_on = real_turns(session, msgs[:turn_samples]) if turn_samples else ([], [])
    finally:
        session.close()
    return RecallTiming(stats["chunks"], build, base, on, injected, session.auto_recall.last, turn_base, turn_on)


def run(home: Path, notes: int, turns: int, embed_url: str, label: str, turn_samples: int = 0) -> None:
    from mnemara.core.config import update_config
    from mnemara.store.instance import Instance

    inst = Instance.create(f"bench-{label}")
    write_notes(inst.memory_dir, notes)
    update_config(inst.config_path, rag_embedder="ollama", rag_embed_url=embed_url)
    msgs = messages(turns)
    t = time_auto_recall(inst, msgs, turn_samples=turn_samples)
    channels = "keyword-only" if (t.last and t.last.degraded) else "keyword + vector"
    print(f"[{label}] {notes} notes ({t.chunks} chunks, index built in {t.build_s:.1f} s; recall used {channels})")
    print(f"  turn context, auto_recall off: median {statistics.median(t.base):.1f} ms")
    print(f"  turn context, auto_recall on : median {statistics.median(t.on):.1f} ms "
          f"(p90 {sorted(t.on)[int(len(t.on) * 0.9) - 1]:.1f} ms)")
    print(f"  added per turn: median {statistics.median(t.added):.1f} ms; "
          f"injected on {t.injected}/{len(msgs)} messages (half are off-topic on purpose)")
    if t.turn_base:
        mb, mo = statistics.median(t.turn_base), statistics.median(t.turn_on)
        print(f"  whole turns via the real CLI + scripted API: off {mb:.0f} ms, on {mo:.0f} ms "
              f"({(mo - mb) / mb:+.1%}; {len(t.turn_base)} turns each, noisy)")


def note_latency(notes: int) -> None:
    """`mnemara note` (exact dedupe over every atom) at this size, against `mnemara list`."""
    from mnemara.store.instance import Instance

    inst = Instance.open("bench-keyword")
    env = dict(os.environ, PYTHONPATH=str(ROOT))

    def cli(*args: str) -> float:
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "mnemara", *args], env=env, capture_output=True, check=True)
        return (time.perf_counter() - t0) * 1000

    lists = [cli("list") for _ in range(5)]
    adds = [cli("note", "-i", inst.name, f"bench note number {i} about nothing") for i in range(5)]
    print(f"[note] mnemara note at {notes} notes: median {statistics.median(adds):.0f} ms "
          f"vs mnemara list {statistics.median(lists):.0f} ms (same-run baseline)")


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


def quality(embed_url: str, label: str) -> None:
    """Injection quality on the RAG golden set (bench/data/rag_golden.json) plus off-topic messages."""
    import json

    from mnemara.core.config import update_config
    from mnemara.store.instance import Instance
    from mnemara.memory.notes import append_note
    from mnemara.memory.status import all_atoms, chunk_id
    from mnemara.session.agent import AgentSession

    golden = json.loads((ROOT / "bench" / "data" / "rag_golden.json").read_text())
    inst = Instance.create(f"quality-{label}")
    for note in golden["notes"]:
        append_note(inst.memory_dir, note["text"], note.get("category") or "note")
    ids = {note["id"]: chunk_id(atom) for note, atom in zip(golden["notes"], all_atoms(inst.memory_dir))}
    update_config(inst.config_path, rag_embedder="ollama", rag_embed_url=embed_url, auto_recall=True)
    session = AgentSession(inst, warm_spare=False)
    try:
        for bar in (0.4, 0.6, 0.8):
            update_config(inst.config_path, auto_recall_min_score=bar)
            session.reload_config()
            fired = right = injected = 0
            for q in golden["queries"]:
                record = session.auto_recall.run(session, q["q"])
                got = [h["id"] for h in record.injected]
                fired += bool(got)
                right += ids[q["expect"]] in got
                injected += len(got)
            false = sum(bool(session.auto_recall.run(session, m).injected) for m in OFF_TOPIC)
            print(f"[{label}] bar {bar}: golden queries with an injection {fired}/{len(golden['queries'])}, "
                  f"expected note injected {right}/{len(golden['queries'])} ({injected} notes injected in all); "
                  f"off-topic messages with an injection {false}/{len(OFF_TOPIC)}")
    finally:
        session.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--real-turns", type=int, default=8, help="whole turns through the CLI per setting (0: skip)")
    parser.add_argument("--quality-only", action="store_true", help="only the golden-set injection quality")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["MNEMARA_HOME"] = str(Path(tmp) / "home")
        from mnemara.testing.ollama import FakeOllama

        quality("http://127.0.0.1:9/api/embed", "keyword")
        with FakeOllama() as fake:
            quality(fake.url("/api/embed"), "hybrid")
        if args.quality_only:
            return
        run(Path(tmp), args.notes, args.turns, "http://127.0.0.1:9/api/embed", "keyword", args.real_turns)

        with FakeOllama() as fake:
            run(Path(tmp), args.notes, args.turns, fake.url("/api/embed"), "hybrid")
        note_latency(args.notes)


if __name__ == "__main__":
    main()
