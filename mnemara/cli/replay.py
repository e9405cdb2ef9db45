"""``mnemara replay``: the consolidation pass (dry run unless ``--apply``)."""
from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING

import click

from mnemara.cli import main
from mnemara.cli.common import instance_option, open_instance, say, say_json
from mnemara.core.errors import UsageError

if TYPE_CHECKING:
    from mnemara.replay.plan import ReplayPlan


class _StderrProgress:
    """``replay: <phase> <done>/<total>`` on stderr, at most a few times a second."""

    def __init__(self) -> None:
        self._last = 0.0
        self._tty = sys.stderr.isatty()

    def __call__(self, phase: str, done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - self._last < 0.25:
            return
        self._last = now
        end = "\r" if self._tty and done < total else "\n"
        sys.stderr.write(f"replay: {phase} {done}/{total}{end}")
        sys.stderr.flush()


@main.command()
@instance_option
@click.option("--days", type=click.IntRange(min=1, max=36500), default=None, help="Look back this many days (default: policy, then replay_default_days).")
@click.option("--threshold", type=click.IntRange(min=2), default=None, help="Minimum notes in a cluster to count as a pattern (default: policy, then replay_default_threshold).")
@click.option("--apply", "apply_", is_flag=True, help="Write proposals, archive duplicates and the digest. Without it nothing is written.")
@click.option("--dry-run", "dry_run", is_flag=True, help="Only show the plan (the default; accepted as Mnemara 0.18 spelled it).")
@click.option("--json", "as_json", is_flag=True, help="Print the plan (or result) as JSON.")
def replay(instance_name: str, days: int | None, threshold: int | None, apply_: bool, dry_run: bool,
           as_json: bool) -> None:
    """Consolidate recent memory notes: cluster, propose, archive duplicates, digest.

    A dry run by default: prints exactly what --apply would do and writes nothing.
    """
    from mnemara.replay import run_replay
    from mnemara.replay.backends import default_backends

    if dry_run and apply_:
        raise UsageError("give --dry-run or --apply, not both")
    inst = open_instance(instance_name)
    embed, lookup = default_backends(inst)
    plan = run_replay(inst, days=days, threshold=threshold, apply=apply_, embed=embed, entity_lookup=lookup, progress=_StderrProgress())
    if as_json:
        say_json(plan.to_dict(), indent=2)
    else:
        say(render_text(plan))


def render_text(plan: ReplayPlan) -> str:
    """The human summary: settings, file issues, patterns and the action list."""
    c = plan.counts
    head = "replay (applied)" if plan.applied else "replay dry run: nothing written; --apply would do the actions below"
    lines = [
        head,
        f"window: last {plan.days} days, {c['files']} day files, {c['atoms']} atoms ({c['excluded']} excluded by policy or status)",
        f"similarity: {plan.method}; {plan.graph_status}",
        f"policy: {plan.policy_source or 'defaults'}; threshold {plan.threshold}",
        f"patterns: {c['patterns']} ({c['covered']} already covered); near-duplicates: {c['duplicates']}",
    ]
    if plan.issues:
        lines.append("file issues:")
        lines += [f"  {i.file}: {i.reason}" + (" (skipped)" if i.skipped else "") for i in plan.issues]
    for p in plan.patterns:
        state = f"covered by {p.covered_by}" if p.covered_by else "new"
        lines.append(f"  pattern {p.slug}: {len(p.members)} notes, {state}")
    if plan.applied and plan.result is not None:
        r = plan.result
        lines.append("done:")
        lines += [f"  wrote {w}" for w in r.written]
        lines += [f"  archived {a}" for a in r.archived]
        lines.append(f"  appended {r.digest}")
        lines += [f"  problem: {p}" for p in r.problems]
    else:
        lines.append("would:")
        lines += [f"  {a.describe()}" for a in plan.actions]
    return "\n".join(lines)
