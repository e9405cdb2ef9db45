"""Benchmark of context discipline: /compress and /evict on a 10k-row window, tokens freed per strategy.

Run: /work/venv/bin/python bench/bench_context.py [--rows 10000] [--repeat 3]

Times are reported against a baseline measured in the same run: a plain read
of the whole table (``SELECT content FROM turns`` plus JSON decoding), the
least any pass over every row must do. Tokens freed are measured on a
deterministic synthetic tool-heavy session (tests/sample_session.py)
and on a session recorded through the real Claude CLI against the scripted
Messages API (bench/record_session.py: real Read/Edit/Write/Bash on real files).
"""
from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mnemara.commands import dispatch  # noqa: E402
from mnemara.core.config import Config  # noqa: E402
from mnemara.core.live_config import LiveConfig  # noqa: E402
from mnemara.context import compress, eviction  # noqa: E402
from tests.sample_session import fill_store  # noqa: E402
from mnemara.store.instance import Instance  # noqa: E402
from mnemara.store.turns import TurnStore  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record_session import record  # noqa: E402


def make_master(folder: Path, rows: int, seed: int = 7) -> Path:
    path = folder / "master.sqlite"
    with TurnStore(path) as store:
        store.upsert_slot("state", "system", "HP: 73 / 100")
        fill_store(store, turns=rows // 2, seed=seed)
    return path


def fresh_ctx(master: Path, folder: Path, tag: str) -> SimpleNamespace:
    inst = Instance.at(folder / tag, name="bench")
    shutil.copy(master, inst.turns_path)
    store = TurnStore(inst.turns_path)
    return SimpleNamespace(instance=inst, config=Config.load(inst.config_path), store=store)


def baseline_read(path: Path) -> float:
    conn = sqlite3.connect(path)
    t0 = time.perf_counter()
    rows = [json.loads(r[0]) for r in conn.execute("SELECT content FROM turns")]
    dt = time.perf_counter() - t0
    conn.close()
    assert rows
    return dt


def timed(master: Path, folder: Path, line: str, repeat: int) -> tuple[float, str]:
    times, text = [], ""
    for i in range(repeat):
        ctx = fresh_ctx(master, folder, f"{line.strip('/').replace(' ', '_')}_{i}")
        t0 = time.perf_counter()
        res = dispatch(ctx, line)
        times.append(time.perf_counter() - t0)
        text = res.text.splitlines()[0]
        assert res.ok, res.text
        ctx.store.close()
    return statistics.median(times), text


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--record", type=int, default=18, help="turns to record through the real CLI (0: skip)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        master = make_master(folder, args.rows)
        base = statistics.median(baseline_read(master) for _ in range(max(3, args.repeat)))
        print(f"# {args.rows} rows + 1 pinned slot; baseline full-table read + JSON decode: {base * 1000:.1f} ms")
        print(f"{'command':<20} {'median ms':>10} {'x baseline':>11}  result")
        for line in ("/evict", "/evict tools", "/evict thinking", "/evict writes", "/compress", "/compress 50k",
                     "/compress reads", "/compress smart", "/clear"):
            dt, text = timed(master, folder, line, args.repeat)
            print(f"{line:<20} {dt * 1000:>10.1f} {dt / base:>11.1f}  {text[:90]}")

        hook_cost(folder)
        small = folder / "small.sqlite"
        with TurnStore(small) as s:
            fill_store(s, turns=60, seed=7)
        freed_table(folder, small, "synthetic tool-heavy session (sample_session: 60 turns = 120 rows, seed 7)")
        if args.record:
            t0 = time.perf_counter()
            recorded = record(folder / "recorded.sqlite", turns=args.record)
            took = time.perf_counter() - t0
            freed_table(folder, recorded, f"session recorded through the real Claude CLI ({args.record} turns, {took:.0f} s to record)")


def hook_cost(folder: Path, repeat: int = 50) -> None:
    """Per-turn cost of the context hooks with every flag on, against selecting the window itself."""
    from mnemara.context.hooks import after_turn, manifest_extra
    from mnemara.tools import ToolContext

    inst = Instance.at(folder / "hooks", name="hooks")
    project = folder / "hooks" / "project"
    project.mkdir()
    cfg = Config.load(inst.config_path)
    for flag in ("auto_evict_after_write", "compress_repeated_reads", "preserve_compressed_reads", "file_stat_manifest_enabled"):
        setattr(cfg, flag, True)
    with TurnStore(inst.turns_path) as store:
        rows = []
        for i in range(10):  # a 20-row window: user + assistant with a Read and an Edit of a real file
            f = project / f"m{i % 4}.py"
            f.write_text("x = 1\n" * 300, encoding="utf-8")
            rows += [("user", f"step {i}"), ("assistant", [
                {"type": "tool_use", "id": f"r{i}", "name": "Read", "input": {"file_path": str(f)}},
                {"type": "tool_result", "tool_use_id": f"r{i}", "content": "x = 1\n" * 300},
                {"type": "tool_use", "id": f"e{i}", "name": "Edit", "input": {"file_path": str(f), "old_string": "x", "new_string": "y"}},
                {"type": "tool_result", "tool_use_id": f"e{i}", "content": "ok"}])]
        store.append_many(rows)
        session = SimpleNamespace(instance=inst, config=cfg, store=store,
                                  tool_context=ToolContext(instance=inst, live=LiveConfig(inst.config_path, current=cfg), store=store))
        last = store.live_rows()[-1].id
        t0 = time.perf_counter()
        for _ in range(repeat):
            store.window(cfg.max_window_turns, cfg.max_window_tokens)
        base = (time.perf_counter() - t0) / repeat
        t0 = time.perf_counter()
        for _ in range(repeat):
            after_turn(session, last)
            manifest_extra(session)
        hooks = (time.perf_counter() - t0) / repeat
    print(f"\n# per-turn context hooks, every flag on, 20-row window: {hooks * 1000:.2f} ms "
          f"= {hooks / base:.1f}x selecting the window ({base * 1000:.2f} ms)")


def freed_table(folder: Path, source: Path, title: str) -> None:
    print(f"\n# tokens freed per strategy on a {title}")
    strategies = [
        ("evict_thinking_blocks", eviction.evict_thinking_blocks),
        ("evict_write_pairs", eviction.evict_write_pairs),
        ("evict_tool_use_blocks", eviction.evict_tool_use_blocks),
        ("compress_repeated_reads", lambda st: compress.compress_repeated_reads(st)),
        ("compress_to 25%", lambda st: compress.compress_to(st, compress.default_target(st))),
    ]
    print(f"{'strategy':<26} {'before':>8} {'freed':>8} {'freed %':>8} {'rows':>6}")
    for name, fn in strategies:
        copy = folder / f"{source.stem}_{name.replace(' ', '_').replace('%', '')}.sqlite"
        shutil.copy(source, copy)
        with TurnStore(copy) as st:
            before = compress.window_tokens(st)
            res = fn(st)
            freed = before - compress.window_tokens(st)
            rows = res.rows if hasattr(res, "rows") else len({i for x in res.stages for i in x.row_ids})
            print(f"{name:<26} {before:>8} {freed:>8} {freed / before:>8.1%} {rows:>6}")

if __name__ == "__main__":
    main()
