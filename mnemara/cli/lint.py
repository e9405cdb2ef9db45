"""``mnemara lint``: audit memory notes and wiki pages (read-only unless --fix is confirmed)."""
from __future__ import annotations

import sys

import click

from mnemara.cli import main
from mnemara.cli.common import instance_option, open_instance, say, say_json
from mnemara.core.display import terminal_safe


def _print_report(report: object) -> None:
    from mnemara.memory.lint import LintReport

    assert isinstance(report, LintReport)
    for f in report.path_problems:
        tag = "MOVED" if f.verdict == "moved" else "DEAD"
        where = f"{f.file}:{f.line}" + (f" (note {f.note})" if f.note else "")
        say(f"{tag:5} {f.kind:6} {where}  {f.cited}  ({f.reason})")
        for p in f.proposals:
            say(f"      -> {p}")
    for link in report.dead_links:
        hint = f"  (did you mean: {', '.join(link.suggestions)})" if link.suggestions else ""
        where = f"{link.file}:{link.line}" + (f" (note {link.note})" if link.note else "")
        say(f"DEAD  link   {where}  [[{link.link}]]{hint}")
    for c in report.candidates:
        for line in c.lines():
            say(line)
    for h in report.headings:
        part = f"read as part of note {h.note}" if h.note else "before the first heading: read as no note"
        say(f"HEADING {h.file}:{h.line}  {h.text[:80]!r} is not a note heading ({part}); "
                   "a note starts with '## <ISO timestamp> <category>'")
    for p in report.problems:
        say(f"UNREADABLE {p}")
    unverifiable = sum(1 for f in report.paths if f.verdict == "unverifiable")
    live = sum(1 for f in report.paths if f.verdict == "live")
    say(
        f"checked {report.files_checked} files: {len(report.path_problems)} dead/moved paths, "
        f"{len(report.dead_links)} dead links, {len(report.candidates)} supersession candidates, "
        f"{len(report.headings)} stray headings "
        f"({live} paths live, {unverifiable} unverifiable and not reported)"
    )


def _fix(inst: object, report: object) -> int:
    """Offer each fixable finding; apply only the confirmed ones. Returns how many were applied.

    A fix that cannot be made (the note changed since the scan) is reported and the
    next one is still offered.
    """
    from mnemara.core.debuglog import log_event
    from mnemara.core.errors import MnemaraError
    from mnemara.memory.lint import LintReport, as_cited, fix_path, resolve_candidate

    assert isinstance(report, LintReport)
    root, log = inst.root, inst.debug_log_path  # type: ignore[attr-defined]  # inst is typed object here; callers pass an Instance
    applied = 0

    def attempt(question: str, rel: str, note: str, old: str, new: str) -> None:
        nonlocal applied
        if not click.confirm(terminal_safe(question), default=False):
            return
        try:
            now = fix_path(root, report, rel, note, old, new)
        except MnemaraError as exc:
            say(f"  not fixed: {exc.message}")
            return
        applied += 1
        log_event(log, "lint_fix", file=rel, note=note or None, new_id=now or None, old=old, new=new)
        if now:
            say(f"  fixed; the note's id is now {now}")

    for f in report.path_problems:
        if f.verdict == "moved" and len(f.proposals) == 1:
            new = as_cited(f.cited, f.proposals[0])
            attempt(f"{f.file}:{f.line}: replace {f.cited} with {new}?", f.file, f.note, f.cited, new)
    for link in report.dead_links:
        if len(link.suggestions) == 1:
            attempt(f"{link.file}:{link.line}: change [[{link.link}]] to [[{link.suggestions[0]}]]?", link.file,
                    link.note, f"[[{link.link}", f"[[{link.suggestions[0]}")
    memory_dir = inst.memory_dir  # type: ignore[attr-defined]  # inst is typed object here; callers pass an Instance
    for c in report.candidates:
        for line in c.lines()[1:]:
            say(line)
        verb = "merge" if c.kind == "merge" else "supersede"
        answer = click.prompt(terminal_safe(
            f"{c.newer} {'may be a copy of' if c.kind == 'merge' else 'may supersede'} {c.older}: "
            f"[{verb[0]}]{verb[1:]} (keep {c.newer}, mark {c.older} superseded) / [d]istinct / [k]eep for later"),
            type=click.Choice([verb[0], "d", "k"]), default="k", show_choices=False)
        if answer == "k":
            continue
        try:
            done = resolve_candidate(memory_dir, c, "distinct" if answer == "d" else "accept", "mnemara lint --fix")
        except MnemaraError as exc:
            say(f"  not recorded: {exc.message}")
            continue
        if answer != "d":
            log_event(log, "atom_superseded", old=c.older, new=c.newer, via="lint", kind=c.kind)
        say(f"  {done}")
        applied += 1
    return applied


@main.command()
@instance_option
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--fix", is_flag=True, help="Offer fixes one by one; each needs your confirmation.")
@click.option("--no-candidates", is_flag=True, help="Skip the same-topic (supersession) scan.")
def lint(instance_name: str, as_json: bool, fix: bool, no_candidates: bool) -> None:
    """Audit memory and wiki: dead or moved paths, dead [[links]], supersession candidates.

    Read-only. Exit code 0 when clean, 1 when something needs you. A path is
    DEAD only when its folder exists and the file is absent; MOVED proposes a
    file of the same name found under the cited root.
    """
    from mnemara.core.errors import UsageError
    from mnemara.memory.lint import run_lint

    inst = open_instance(instance_name)
    if fix and as_json:
        raise UsageError("--fix asks questions; it cannot be combined with --json")
    report = run_lint(inst.root, candidates=not no_candidates)
    if as_json:
        say_json(report.to_dict(), indent=1)
    else:
        _print_report(report)
    if fix and report.needs_user:
        applied = _fix(inst, report)
        report = run_lint(inst.root, candidates=not no_candidates)
        say(f"applied {applied} fixes; {'still needs you' if report.needs_user else 'now clean'}")
    sys.exit(1 if report.needs_user else 0)
