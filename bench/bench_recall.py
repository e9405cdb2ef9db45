"""Auto-recall benchmark (issue 10): the latency it adds to a turn at 10k notes.

Run: python bench/bench_recall.py [--notes 10000] [--turns 40]

Builds an instance with N notes over 50 topics (written straight into day
files, then indexed once), opens a real AgentSession (no model call is made)
and times ``session.context_blocks(message)``, which is what a turn does
before it calls the model, with auto_recall off (the baseline) and on; the
difference is the added latency. Done keyword-only and with the loopback fake
Ollama as embedder (hybrid). Also prints how many of the messages got an
injection and the median latency of ``mnemara note`` with dedupe at that size.
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
from pathlib import Path

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
    """Whole turns through the real Claude CLI against the scripted API: off, then on."""
    from mnemara.config import update_config
    from mnemara.testing import ScriptedAPI

    out: tuple[list[float], list[float]] = ([], [])
    with ScriptedAPI() as api:
        os.environ.update(api.env())
        for flag, bucket in ((False, out[0]), (True, out[1])):
            update_config(session.instance.config_path, auto_recall=flag)
            session.turn("warm-up")
            for msg in msgs:
                t0 = time.perf_counter()
                session.turn(msg)
                bucket.append((time.perf_counter() - t0) * 1000)
    return out


def run(home: Path, notes: int, turns: int, embed_url: str, label: str, turn_samples: int = 0) -> None:
    from mnemara.config import Config, update_config
    from mnemara.instance import Instance
    from mnemara.memory.rag import RagIndex
    from mnemara.session import AgentSession

    name = f"bench-{label}"
    inst = Instance.create(name)
    write_notes(inst.memory_dir, notes)
    update_config(inst.config_path, rag_embed_url=embed_url)
    t0 = time.perf_counter()
    stats = RagIndex.for_instance(inst, Config.load(inst.config_path)).rebuild()
    build = time.perf_counter() - t0
    session = AgentSession(inst, warm_spare=False)
    try:
        msgs = messages(turns)
        session.context_blocks("warm up the index and the embedder")
        base, _ = time_turns(session, msgs)
        update_config(inst.config_path, auto_recall=True)
        session.reload_config()
        on, injected = time_turns(session, msgs)
        turn_base, turn_on = real_turns(session, msgs[:turn_samples]) if turn_samples else ([], [])
    finally:
        session.close()
    added = [b - a for a, b in zip(base, on)]
    last = session.auto_recall.last
    channels = "keyword-only" if (last and last.degraded) else "keyword + vector"
    print(f"[{label}] {notes} notes ({stats['chunks']} chunks, index built in {build:.1f} s; recall used {channels})")
    print(f"  turn context, auto_recall off: median {statistics.median(base):.1f} ms")
    print(f"  turn context, auto_recall on : median {statistics.median(on):.1f} ms "
          f"(p90 {sorted(on)[int(len(on) * 0.9) - 1]:.1f} ms)")
    print(f"  added per turn: median {statistics.median(added):.1f} ms; "
          f"injected on {injected}/{len(msgs)} messages (half are off-topic on purpose)")
    if turn_base:
        mb, mo = statistics.median(turn_base), statistics.median(turn_on)
        print(f"  whole turns via the real CLI + scripted API: off {mb:.0f} ms, on {mo:.0f} ms "
              f"({(mo - mb) / mb:+.1%}; {len(turn_base)} turns each, noisy)")


def note_latency(notes: int) -> None:
    """`mnemara note` (exact dedupe over every atom) at this size, against `mnemara list`."""
    from mnemara.instance import Instance

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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--real-turns", type=int, default=8, help="whole turns through the CLI per setting (0: skip)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["MNEMARA_HOME"] = str(Path(tmp) / "home")
        run(Path(tmp), args.notes, args.turns, "http://127.0.0.1:9/api/embed", "keyword", args.real_turns)
        from mnemara.testing_ollama import FakeOllama

        with FakeOllama() as fake:
            run(Path(tmp), args.notes, args.turns, fake.url("/api/embed"), "hybrid")
        note_latency(args.notes)


if __name__ == "__main__":
    main()
