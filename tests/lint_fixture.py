"""A lint fixture with known answers: planted dead and moved paths, dead links, and traps.

Used by tests/memory/test_lint.py (scored exactly) and bench/bench_lint.py (prints the
false-positive rate of lint and of a naive exists-check over the same text).
"""
from __future__ import annotations

import os
from pathlib import Path


def _touch(path: Path, text: str = "x\n", mode: int | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if mode is not None:
        os.chmod(path, mode)
    return path


def build(base: Path, home: Path) -> tuple[Path, set[tuple[str, str]]]:
    """Create a project tree and an instance folder under ``base``.

    Returns the instance root and the expected findings as ``(verdict, cited)``
    pairs (``dead``/``moved`` for paths and binaries, ``dead-link`` for links).
    """
    P = base / "proj"
    for rel in ("src/app.py", "src/util/helpers.py", "docs/My Notes/plan.txt", "scripts/deploy.sh",
                "lib/new/parser.py", "conf/settings.toml", "logs/a.log"):
        _touch(P / rel)
    _touch(P / "bin/tool", "#!/bin/sh\n", 0o755)
    (P / "lib/old").mkdir(parents=True)
    _touch(home / "notes-home/file.md")

    inst = base / "inst"
    (inst / "memory" / "archive").mkdir(parents=True)
    (inst / "wiki" / "ops" / "deploy").mkdir(parents=True)
    _touch(inst / "wiki/ops/deploy.md", "# Deploy\nRun `{0}/scripts/deploy.sh` then see [[staging]].\n".format(P))
    _touch(inst / "wiki/ops/deploy/staging.md", "# Staging\nBack to [[ops/deploy]] or [[../deploy]].\n")
    _touch(inst / "wiki/runbook.md", (
        "# Runbook\n"
        "Old entry point: {P}/src/old_main.py (gone).\n"
        "Links: [[deploy]], [[Deploy|the deploy page]], [[deploy#rollback]], [[no-such-page]].\n"
        "```\n[[inside a fence]] /not/a/real/citation/in/code.txt\n```\n"
    ).format(P=P))

    day1 = (
        "## 2026-04-20T09:00:00+00:00 insight\n"
        "The entry point is `{P}/src/app.py`; helpers are in ({P}/src/util/helpers.py).\n"
        "We rolled back with {P}/scripts/rollback.sh last week.\n"
        "\n"
        "## 2026-04-20T10:00:00+00:00 decision\n"
        "Parser lives at {P}/lib/old/parser.py and settings in {P}/config/settings.toml.\n"
        "The tool binary is {P}/bin/oldtool; the new one {P}/bin/tool works.\n"
        "\n"
        "## 2026-04-20T11:00:00+00:00 note\n"
        "Prose traps: read/write, and/or, 24/7, I/O, km/h, http://localhost:8080/api/x and\n"
        "https://example.com/a/b/c. Slash commands /note, /stop and /evict 3 are not paths.\n"
        "Patterns {P}/logs/*.log and {P}/src/{{a,b}}.py and $HOME/x/y are not literal.\n"
        "The plan is in {P}/docs/My Notes/plan.txt and `{P}/docs/My Notes/plan.txt`.\n"
        "My own file ~/notes-home/file.md and the folder {P}/src/ exist.\n"
        "Somewhere else entirely: /nonexistent-root-zz/a/b.txt.\n"
    ).format(P=P)
    day2 = (
        "## 2026-04-21T09:00:00+00:00 howto\n"
        "```\n"
        "$ ls -la {P}\n"
        "$ cd /tmp\n"
        "$ mnemara-no-such-binary-zz --flag\n"
        "```\n"
        "Inline `$ sudo mnemara-gone-tool-zz run` and `[[not-a-link]]` in code.\n"
        "See [[ops/missing]] and [[deploy/staging]] and [[../wiki/ops/deploy]].\n"
    ).format(P=P)
    (inst / "memory" / "2026-04-20.md").write_text(day1, encoding="utf-8")
    (inst / "memory" / "2026-04-21.md").write_text(day2, encoding="utf-8")

    expected = {
        ("dead", f"{P}/src/old_main.py"),
        ("dead", f"{P}/scripts/rollback.sh"),
        ("dead", f"{P}/bin/oldtool"),
        ("dead", "mnemara-no-such-binary-zz"),
        ("dead", "mnemara-gone-tool-zz"),
        ("moved", f"{P}/lib/old/parser.py"),
        ("moved", f"{P}/config/settings.toml"),
        ("dead-link", "no-such-page"),
        ("dead-link", "ops/missing"),
    }
    return inst, expected


def score(found: set[tuple[str, str]], expected: set[tuple[str, str]]) -> dict[str, float]:
    """False-positive rate (share of reported findings that are wrong) and miss rate."""
    fp = len(found - expected)
    missed = len(expected - found)
    return {
        "reported": len(found), "expected": len(expected), "false_positives": fp, "missed": missed,
        "fp_rate": fp / len(found) if found else 0.0,
        "miss_rate": missed / len(expected) if expected else 0.0,
    }


def findings_of(report: object) -> set[tuple[str, str]]:
    """(verdict, cited) of every finding of a LintReport that needs the user."""
    out = {(f.verdict, f.cited) for f in report.path_problems}  # type: ignore[attr-defined]
    out |= {("dead-link", f.link) for f in report.dead_links}  # type: ignore[attr-defined]
    return out
