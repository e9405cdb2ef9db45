"""What forget's read-back (every instance file checked for the text after the steps) costs.

Run: python bench/bench_forget.py [--rounds 3] [--rows 20000] [--notes 2000]

Builds one instance: ``--notes`` notes (one of them holds the text to forget), ``--rows``
conversation rows of about 1 KB (a few quote the text), a RAG index of the notes (local embedder)
and a graph with a node per note plus one other node quoting the text. Each round forgets the text
in a fresh copy of that instance (``plan_forget`` + ``execute``, in-process) and times, in CPU
of this process and its children, the whole ``execute`` and, inside it, the read-back
(``_still_on_disk``, measured by wrapping it).

Goal: the read-back costs at most 1/2 of the rest of ``execute`` (the steps that rewrite the day
file, the index, the graph and turns.sqlite). Exits 1 when the goal is missed, 2 when the
measurement is invalid (the forget did not leave the instance clean, or the read-back never ran).
"""
from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

GOAL = 1 / 2
SECRET = "ZEBRA-4411-SECRET"


def cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def build(home: Path, notes: int, rows: int) -> Path:
    from mnemara.core.config import Config
    from mnemara.store.instance import Instance
    from mnemara.memory.graph.store import Graph
    from mnemara.memory.notes import append_note
    from mnemara.memory.search.rag import RagIndex
    from mnemara.memory.status import all_atoms
    from mnemara.store.turns import TurnStore

    inst = Instance.create("bench", home=home)
    for i in range(notes):
        text = f"The {SECRET} vault opens at dawn." if i == notes // 2 else f"Note {i}: lease {i % 97} renews every {i % 13} days."
        append_note(inst.memory_dir, text, "fact")
    filler = "lorem ipsum dolor sit amet " * 36
    with TurnStore(inst.turns_path) as store:
        for i in range(rows):
            said = f"remember the {SECRET} vault" if i % 5000 == 7 else f"row {i} {filler}"
            store.append("user" if i % 2 == 0 else "assistant", said)
    RagIndex.for_instance(inst, Config.load(inst.config_path)).catch_up()
    graph = Graph(inst.graph_dir)
    for atom in all_atoms(inst.memory_dir):
        graph.ensure_node(atom.ref, "note", {"text": atom.text[:200]})
    graph.add_node("vault", {"code": SECRET}, "vault-1")
    graph.close()
    return inst.root


def one_round(template: Path, work: Path) -> tuple[float, float]:
    from mnemara.core.config import Config
    from mnemara.store.instance import Instance
    from mnemara.memory import forget

    if work.exists():
        shutil.rmtree(work)
    shutil.copytree(template, work)
    inst = Instance.at(work)
    spent: list[float] = []
    original = forget._still_on_disk

    def timed(*args, **kwargs):  # type: ignore[no-untyped-def]
        start = cpu()
        try:
            return original(*args, **kwargs)
        finally:
            spent.append(cpu() - start)

    forget._still_on_disk = timed
    try:
        plan = forget.plan_forget(inst.root, SECRET)
        start = cpu()
        receipt = forget.execute(inst, Config.load(inst.config_path), plan)
        total = cpu() - start
    finally:
        forget._still_on_disk = original
    if len(spent) != 1:
        raise SystemExit(f"invalid: the read-back ran {len(spent)} times")
    if receipt["still_on_disk"] or not (receipt["rag"].get("ok") and receipt["graph"].get("ok")):
        raise SystemExit(f"invalid: forget did not leave the instance clean: {receipt['still_on_disk']}, "
                         f"rag {receipt['rag']}, graph {receipt['graph']}")
    return total, spent[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--notes", type=int, default=2_000)
    args = parser.parse_args()
    print(f"goal: forget's read-back costs <= {GOAL:.2f} of the rest of execute")
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "template" / ".mnemara"
        template = build(home, args.notes, args.rows)
        size = sum(p.stat().st_size for p in template.rglob("*") if p.is_file())
        work = Path(tmp) / "work" / template.name
        totals, reads = [], []
        for _ in range(args.rounds):
            total, read = one_round(template, work)
            totals.append(total)
            reads.append(read)
    total, read = statistics.median(totals), statistics.median(reads)
    rest = total - read
    if rest <= 0:
        print(f"invalid: execute {total:.3f} s is not more than its read-back {read:.3f} s")
        return 2
    ratio = read / rest
    print(f"instance of {size / 1e6:.1f} MB ({args.notes} notes, {args.rows} rows), CPU median of {args.rounds}: "
          f"execute {total:.2f} s, of which read-back {read:.2f} s; ratio {ratio:.2f} (goal <= {GOAL:.2f})")
    return 0 if ratio <= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
