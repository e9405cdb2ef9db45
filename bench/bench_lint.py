"""Lint benchmark (issue 10): false-positive rate on the known-answer fixture, and speed.

Run: python bench/bench_lint.py [--notes 2000]
Prints the false-positive and miss rates of `mnemara lint` and of a naive
"every slash token that does not exist is dead" check over the same fixture,
then the time to lint an instance with many notes citing live and dead paths.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mnemara.memory.lint import run_lint  # noqa: E402
from mnemara.memory.lint_paths import naive_sweep_text  # noqa: E402
from tests.lint_fixture import build, findings_of, score  # noqa: E402


def fixture_rates(base: Path) -> None:
    home = base / "home"
    home.mkdir()
    os.environ["HOME"] = str(home)
    inst, expected = build(base, home)
    lint = score(findings_of(run_lint(inst, candidates=False, home=home)), expected)
    naive: set[tuple[str, str]] = set()
    for path in sorted((inst / "memory").glob("*.md")) + sorted((inst / "wiki").rglob("*.md")):
        naive |= {("dead", f.cited) for f in naive_sweep_text(path.read_text(), path.name)}
    naive_score = score(naive, {e for e in expected if e[0] != "dead-link"})
    print(f"fixture: {lint['expected']} planted problems")
    print(f"  mnemara lint : reported {lint['reported']}, false positives {lint['false_positives']} "
          f"(fp rate {lint['fp_rate']:.0%}), missed {lint['missed']} (miss rate {lint['miss_rate']:.0%})")
    print(f"  naive exists : reported {naive_score['reported']}, false positives {naive_score['false_positives']} "
          f"(fp rate {naive_score['fp_rate']:.0%}), missed {naive_score['missed']} (paths only)")


def speed(base: Path, notes: int) -> None:
    inst = base / "big"
    (inst / "memory").mkdir(parents=True)
    (inst / "wiki").mkdir()
    proj = base / "proj"
    lines = []
    for i in range(notes):
        lines.append(f"## 2026-04-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:00+00:00 note\n"
                     f"Note {i} about topic{i % 97} cites {proj}/src/app.py and {proj}/gone/file{i}.py "
                     f"and links [[page{i % 13}]].\n\n")
    (inst / "memory" / "2026-04-01.md").write_text("".join(lines))
    t0 = time.perf_counter()
    report = run_lint(inst, candidates=False)
    t1 = time.perf_counter()
    run_lint(inst, candidates=True)
    t2 = time.perf_counter()
    print(f"{notes} notes: paths+links {t1 - t0:.2f} s ({len(report.paths)} citations), "
          f"with the supersession scan {t2 - t1:.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--notes", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        fixture_rates(Path(tmp))
        speed(Path(tmp), args.notes)


if __name__ == "__main__":
    main()
