"""Phase 7: the sleep digest ``sleep/YYYY-MM-DD.md`` (one section per applied run)."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mnemara.replay.plan import ReplayPlan


def render_digest(plan: "ReplayPlan", archived: list[str], written: list[str], problems: list[str],
                  conflicts: list[str] | None = None) -> str:
    """Markdown for one run: counts per phase and links (relative to ``sleep/``) to what was written."""
    c = plan.counts
    lines = [
        f"## Replay run {plan.stamp}",
        "",
        f"- window: last {plan.days} days ({c['files']} day files), threshold {plan.threshold}, "
        f"cluster distance {plan.cluster_distance}, duplicate distance {plan.duplicate_distance}",
        f"- similarity: {plan.method}",
        f"- policy: {plan.policy_source or 'defaults (no replay policy file)'}",
        f"- phase 1 load: {c['atoms']} atoms, {c['excluded']} excluded by policy or status, {len(plan.issues)} file issues",
        f"- phase 2 cluster: {c['clusters']} clusters, {c['patterns']} patterns (>= {plan.threshold} members)",
        f"- phase 3 augment: {plan.graph_status}; {c['entities']} recurring entities, {c['causal']} causal statements",
        f"- phase 4 wiki proposals: {sum(1 for w in written if w.startswith('wiki_proposals/'))} written, "
        f"{c['covered']} patterns already covered",
        f"- phase 5 archive: {len(archived)} copies archived (the earliest note is kept), "
        f"{len(conflicts or [])} conflicting pairs kept and proposed for supersession",
        f"- phase 6 role proposals: {sum(1 for w in written if w.startswith('role_proposals/'))} written",
        "",
    ]
    if written:
        lines += ["### Written", ""] + [f"- [{w}](../{w})" for w in written] + [""]
    if archived:
        lines += ["### Archived", ""] + [f"- {a}" for a in archived] + [""]
    if conflicts:
        lines += ["### Conflicts (not archived; confirm with `mnemara lint --fix`)", ""] + \
            [f"- {c}" for c in conflicts] + [""]
    notes = [f"{i.file}: {i.reason}" + (" (skipped)" if i.skipped else "") for i in plan.issues] + problems
    if notes:
        lines += ["### Problems", ""] + [f"- {n}" for n in notes] + [""]
    return "\n".join(lines) + "\n"
