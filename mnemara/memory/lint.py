"""``mnemara lint``: a read-only audit of one instance's memory notes and wiki pages.

Four checks (see :mod:`lint_paths`, :mod:`lint_links`, :mod:`similar`):

* cited paths and binaries that no longer exist (DEAD) or moved (MOVED, with
  the file proposed);
* dead ``[[wikilinks]]``;
* pairs of same-topic active atoms that the claim guard does not call distinct (never a
  sibling: another subject in the same pattern): *candidates* for a supersession judgement;
* lines of a day file that look meant as a note heading but are not read as one
  (a hand edit's typo): the text under such a line belongs to the note above it.

``needs_user`` is true when any of these found something. A finding in a day
file names the note it is in (``note``: its id). :func:`fix_path` rewrites one
cited path in one note (through :mod:`mnemara.memory.dayfile`, which checks the
note's text first) or in one wiki page, keeping the form the note used (``~/``);
the CLI calls it only after the user confirmed that very change.
"""
from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from mnemara.core.errors import UsageError
from mnemara.core.fsutil import rewrite_locked
from mnemara.memory.dayfile import fix_in_note
from mnemara.memory.lint_links import LinkFinding, LinkResolver, wiki_pages
from mnemara.memory.lint_paths import PathFinding, Sweeper, sweep_text
from mnemara.memory.notes import Atom, parse_text, stray_headings
from mnemara.memory.search.exact import highlight_difference
from mnemara.memory.search.similarity import CONFLICT, COPY, DISTINCT, POSSIBLE_COPY, relate
from mnemara.memory.status import StatusBook, all_atoms, fingerprint, note_moment
from mnemara.memory.search.tfidf import same_topic_pairs

CANDIDATE_THRESHOLD = 0.35


@dataclass
class Candidate:
    """Two active atoms on the same topic; ``newer`` may supersede ``older`` (a person decides)."""

    older: str
    newer: str
    similarity: float
    shared_words: list[str]
    older_text: str
    newer_text: str
    duplicate: bool = False  # an exact copy (see mnemara.memory.search.exact)
    conflict: str = ""  # why the claim guard says the two differ ("" when it does not)
    proposed_by: str = ""  # "replay" or "write_memory" when one of them recorded this proposal
    kind: str = "supersede"  # "supersede": a possible correction; "merge": a possible copy
    older_marked: str = ""  # the older text with the words that differ marked [-...-]
    newer_marked: str = ""  # the newer text with the words that differ marked {+...+}

    def __post_init__(self) -> None:
        if not self.older_marked and not self.newer_marked:
            self.older_marked, self.newer_marked = highlight_difference(self.older_text, self.newer_text)

    def question(self) -> str:
        if self.kind == "merge":
            return f"merge {self.newer} and {self.older}?"
        return f"does {self.newer} supersede {self.older}?"

    def lines(self) -> list[str]:
        """The proposal as the user judges it (``mnemara lint``, ``/memory review``): what it is, why,
        and both texts with the words that differ marked."""
        by = f", proposed by {self.proposed_by}" if self.proposed_by else ""
        if self.kind == "merge":
            what = ("exact copy" if self.duplicate else "possible copy") + by
        else:
            what = f"possible correction{by}" if self.conflict or self.proposed_by else f"same topic {self.similarity:.2f}"
        head = f"CHECK {what}: {self.question()}"
        if self.shared_words:
            head += f"  shared: {', '.join(self.shared_words)}"
        lines = [head]
        if self.conflict:
            lines.append(f"      why: {self.conflict}")
        lines += [f"      older: {self.older_marked}", f"      newer: {self.newer_marked}"]
        return lines


@dataclass
class StrayHeading:
    """A day-file line that looks like a note heading but is not one; ``note`` is the note it is read
    as part of ("" when it comes before the first heading and is read as no note at all)."""

    file: str
    line: int
    text: str
    note: str = ""


@dataclass
class LintReport:
    paths: list[PathFinding] = field(default_factory=list)
    links: list[LinkFinding] = field(default_factory=list)
    candidates: list[Candidate] = field(default_factory=list)
    headings: list[StrayHeading] = field(default_factory=list)
    files_checked: int = 0
    problems: list[str] = field(default_factory=list)  # files that could not be read
    notes: dict[str, Atom] = field(default_factory=dict)  # note id -> the note as linted (day files)

    @property
    def path_problems(self) -> list[PathFinding]:
        return [f for f in self.paths if f.needs_user]

    @property
    def dead_links(self) -> list[LinkFinding]:
        return [f for f in self.links if f.needs_user]

    @property
    def needs_user(self) -> bool:
        return bool(self.path_problems or self.dead_links or self.candidates or self.problems or self.headings)

    def to_dict(self) -> dict[str, Any]:
        return {
            "needs_user": self.needs_user,
            "files_checked": self.files_checked,
            "paths": [asdict(f) for f in self.path_problems],
            "unverifiable_paths": [asdict(f) for f in self.paths if f.verdict == "unverifiable"],
            "live_paths": sum(1 for f in self.paths if f.verdict == "live"),
            "dead_links": [asdict(f) for f in self.dead_links],
            "live_links": sum(1 for f in self.links if f.verdict == "live"),
            "supersession_candidates": [asdict(c) for c in self.candidates],
            "stray_headings": [asdict(h) for h in self.headings],
            "unreadable": self.problems,
        }


def source_files(root: Path) -> list[tuple[str, Path]]:
    """(instance-relative name, path) of every day file and wiki page."""
    from mnemara.memory.notes import day_files

    root = Path(root)
    out = [(f"memory/{p.name}", p) for p in day_files(root / "memory")]
    out += [(f"wiki/{slug}.md", root / "wiki" / f"{slug}.md") for slug in wiki_pages(root / "wiki")]
    return out


def run_lint(root: Path, *, candidates: bool = True, home: Path | None = None) -> LintReport:
    """Audit the instance folder ``root``. Reads files only."""
    root = Path(root)
    report = LintReport()
    sweeper = Sweeper(home)
    resolver = LinkResolver(root)
    for rel, path in source_files(root):
        try:
            data = path.read_bytes()
            text = data.decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            report.problems.append(f"{rel}: {exc}")
            continue
        report.files_checked += 1
        found = sweep_text(text, rel, sweeper)
        links = resolver.check(text, rel)
        if rel.startswith("memory/"):
            atoms = parse_text(text, path)
            _name_notes(found, links, atoms, report.notes)
            for number, line in stray_headings(data):
                above = [a for a in atoms if a.line < number]
                report.headings.append(StrayHeading(rel, number, line, above[-1].id if above else ""))
        report.paths.extend(found)
        report.links.extend(links)
    if candidates:
        report.candidates = supersession_candidates(root / "memory")
    return report


def supersession_candidates(memory_dir: Path, threshold: float = CANDIDATE_THRESHOLD,
                            limit: int = 50) -> list[Candidate]:
    """Pairs of active atoms that may supersede each other, not already judged distinct:
    first the proposals replay recorded (conflicting notes), then same-topic pairs, best first."""
    book = StatusBook.load(memory_dir)
    atoms: list[Atom] = [a for a in all_atoms(memory_dir) if a.text.strip() and book.status_of(a) == "active"]
    by_fp = {fingerprint(a): a for a in atoms}
    out: list[Candidate] = []
    seen: set[tuple[str, str]] = set()
    for proposal in book.proposals:
        older, newer = by_fp.get(str(proposal.get("older_fp"))), by_fp.get(str(proposal.get("newer_fp")))
        if older is None or newer is None or book.is_distinct(older, newer):
            continue  # resolved (superseded, forgotten or judged distinct)
        seen.add((older.id, newer.id))
        kind = "merge" if proposal.get("kind") == "merge" else "supersede"
        out.append(Candidate(older.id, newer.id, 0.0, [], older.text[:300], newer.text[:300],
                             conflict=str(proposal.get("why", "")) if kind == "supersede" else "",
                             proposed_by=str(proposal.get("by", "replay")), kind=kind))
    pairs = same_topic_pairs([a.text for a in atoms], threshold=threshold, limit=limit * 2)
    for pair in pairs:
        a, b = atoms[pair.a], atoms[pair.b]
        older, newer = (a, b) if (note_moment(a.timestamp), a.file.name, a.offset) <= \
            (note_moment(b.timestamp), b.file.name, b.offset) else (b, a)
        if older.id == newer.id:  # the same note copied into two files: nothing to judge
            continue
        if book.is_distinct(older, newer) or (older.id, newer.id) in seen:
            continue
        rel = relate(older.text, newer.text)
        if rel.kind == DISTINCT:  # another subject in the same pattern (a sibling), or no claim of one on the other
            continue
        out.append(Candidate(older.id, newer.id, pair.similarity, list(pair.shared), older.text[:300],
                             newer.text[:300], duplicate=rel.kind == COPY,
                             conflict="; ".join(rel.reasons) if rel.kind == CONFLICT else "",
                             kind="merge" if rel.kind in (COPY, POSSIBLE_COPY) else "supersede"))
        if len(out) >= limit:
            break
    return out


VERDICTS = ("accept", "distinct")


def resolve_candidate(memory_dir: Path, candidate: Candidate, verdict: str, via: str) -> str:
    """Record the user's verdict on a proposal (``mnemara lint --fix``, ``/memory review``): ``accept``
    marks the older note superseded by the newer (a merge keeps the newer wording of a copy; a
    supersession keeps the correction), ``distinct`` remembers that the two stand side by side.
    Nothing is deleted. Returns what was done, in one line."""
    from mnemara.memory.status import find_atom, mark_distinct, set_status

    if verdict not in VERDICTS:
        raise UsageError(f"unknown verdict {verdict!r}: use one of {', '.join(VERDICTS)}")
    older, newer = find_atom(memory_dir, candidate.older), find_atom(memory_dir, candidate.newer)
    if verdict == "distinct":
        mark_distinct(memory_dir, older, newer)
        return f"{older.id} and {newer.id} are marked distinct: both stay, neither is proposed again"
    how = "merged as a copy" if candidate.kind == "merge" else "superseded"
    set_status(memory_dir, older, "superseded", new=newer, reason=f"{how}: confirmed in {via}")
    return f"{older.id} is superseded by {newer.id} ({how}); recall leaves it out and names it (nothing deleted)"


def _name_notes(paths: list[PathFinding], links: list[LinkFinding], atoms: list[Atom], notes: dict[str, Atom]) -> None:
    """Set ``note`` of each finding to the id of the note whose lines hold it."""
    starts = [a.line for a in atoms]
    findings: list[PathFinding | LinkFinding] = [*paths, *links]
    for finding in findings:
        inside = [a for a, start in zip(atoms, starts, strict=True) if start <= finding.line]
        if inside:
            finding.note = inside[-1].id
            notes[inside[-1].id] = inside[-1]


def as_cited(cited: str, proposal: str, home: Path | None = None) -> str:
    """``proposal`` written the way ``cited`` was: ``~/...`` when the note used ``~/`` and it is under home."""
    if not cited.startswith("~/"):
        return proposal
    for base in {Path(home or os.path.expanduser("~")), Path(home or os.path.expanduser("~")).resolve()}:
        try:
            return "~/" + Path(proposal).relative_to(base).as_posix()
        except ValueError:
            continue
    return proposal


def fix_path(root: Path, report: LintReport, rel_file: str, note_id: str, old: str, new: str) -> str:
    """Replace ``old`` by ``new`` in note ``note_id`` of ``rel_file`` (or in a wiki page when no note).

    Returns the note's id after the change (its text changed, so its id does), or "" for a wiki
    page; raises :class:`mnemara.memory.dayfile.NoteChanged` when the note is not as linted.
    The report's record of the note is updated so a second fix in the same note finds it.
    """
    if not note_id:
        if rel_file.startswith("memory/"):  # day files change only note by note (mnemara.memory.dayfile)
            raise UsageError(f"{rel_file}: {old!r} is not inside a note; edit the file by hand")
        if not apply_fix(root, rel_file, old, new):
            raise UsageError(f"{rel_file} no longer contains {old!r}; nothing changed")
        return ""
    from mnemara.memory.status import rename_ids

    seen = report.notes[note_id]
    changed = fix_in_note(Path(root) / rel_file, note_id, seen.text, old, new)
    del report.notes[note_id]
    report.notes[changed.id] = changed
    findings: list[PathFinding | LinkFinding] = [*report.paths, *report.links]
    for finding in findings:
        if finding.note == note_id:
            finding.note = changed.id
    for cand in report.candidates:
        cand.older = changed.id if cand.older == note_id else cand.older
        cand.newer = changed.id if cand.newer == note_id else cand.newer
    rename_ids(Path(root) / "memory", {note_id: changed.id})
    return changed.id


def apply_fix(root: Path, rel_file: str, old: str, new: str) -> bool:
    """Replace the first ``old`` in ``root/rel_file`` with ``new`` (atomic, under the appenders' lock)."""
    return rewrite_locked(Path(root) / rel_file, lambda text: text.replace(old, new, 1) if old in text else None)
