"""Phases 4 and 6: the documents replay drafts, and what counts as "already covered".

A pattern is covered when a wiki page, or an earlier proposal, is within
``cover_distance`` of the pattern's centroid, or has the pattern's slug. Earlier
proposals count as coverage so a second run drafts nothing new.
"""
from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from mnemara.replay.augment import Augmentation
from mnemara.replay.load import LoadedAtom

MAX_DOC_BYTES = 1024 * 1024
MAX_QUOTE = 2000
SELF_OBSERVATION = {"self_observation", "self-observation", "selfobservation"}


@dataclass(frozen=True)
class Document:
    """A page that may cover a pattern: a wiki page or an earlier proposal."""

    kind: str  # "wiki", "wiki_proposal", "role_proposal"
    path: Path
    slug: str
    text: str


def is_self_observation(category: str) -> bool:
    return category.lower() in SELF_OBSERVATION


def slugify(terms: Sequence[str], fallback_seed: str) -> str:
    words = []
    for term in terms:
        ascii_term = unicodedata.normalize("NFKD", term).encode("ascii", "ignore").decode().lower()
        word = re.sub(r"[^a-z0-9]+", "-", ascii_term).strip("-")
        if word:
            words.append(word)
    slug = "-".join(words)[:60].strip("-")
    return slug or "pattern-" + hashlib.sha1(fallback_seed.encode()).hexdigest()[:8]


def read_documents(folder: Path, kind: str, skip: Sequence[Path] = ()) -> tuple[list[Document], list[str]]:
    """Markdown files under ``folder`` (recursively) and the ones that could not be read."""
    docs: list[Document] = []
    problems: list[str] = []
    if not folder.is_dir():
        return docs, problems
    skipped = {p.resolve() for p in skip}
    for path in sorted(folder.rglob("*.md")):
        if path.resolve() in skipped or any(part.startswith(".") for part in path.relative_to(folder).parts):
            continue
        try:
            if path.stat().st_size > MAX_DOC_BYTES:
                problems.append(f"{path.name}: larger than {MAX_DOC_BYTES} bytes, not compared")
                continue
            text = path.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(f"{path.name}: unreadable ({type(exc).__name__}), not compared")
            continue
        docs.append(Document(kind, path, path.relative_to(folder).with_suffix("").as_posix(), text))
    return docs, problems


def _quote(text: str) -> str:
    if len(text) > MAX_QUOTE:
        text = text[: MAX_QUOTE - 1] + "…"
    return "\n".join("> " + line if line else ">" for line in text.splitlines()) or ">"


def _members_section(members: Sequence[LoadedAtom]) -> list[str]:
    lines = ["## Notes in this pattern", ""]
    for m in members:
        note = ", archived duplicate" if m.archived else ""
        lines += [f"### {m.location} @ {m.atom.timestamp} ({m.atom.category}{note}) · id {m.key}", "",
                  _quote(m.atom.text), ""]
    return lines


def _augment_section(aug: Augmentation) -> list[str]:
    lines: list[str] = []
    if aug.entities:
        lines += ["## Entities that recur", ""]
        lines += [f"- {name} ({count} notes)" for name, count in aug.entities]
        lines.append("")
    if aug.causal:
        lines += ["## Causal statements", ""]
        lines += [f"- {sentence} ({key})" for key, sentence in aug.causal]
        lines.append("")
    return lines


def wiki_proposal(slug: str, terms: Sequence[str], members: Sequence[LoadedAtom], aug: Augmentation, stamp: str, method: str) -> str:
    days = sorted({m.atom.file.stem for m in members})
    span = days[0] if len(days) == 1 else f"{days[0]} to {days[-1]}"
    lines = [
        f"# Proposed wiki page: {', '.join(terms) or slug}",
        "",
        f"<!-- drafted by mnemara replay at {stamp}; {len(members)} notes; similarity: {method} -->",
        "",
        f"Replay found {len(members)} notes ({span}) about the same thing. If it is worth keeping,",
        f"edit this draft and save it as `wiki/{slug}.md`; otherwise delete it.",
        "",
        "## Key terms",
        "",
        ", ".join(terms) or "(none)",
        "",
    ]
    return "\n".join(lines + _augment_section(aug) + _members_section(members)).rstrip("\n") + "\n"


def role_proposal(slug: str, terms: Sequence[str], members: Sequence[LoadedAtom], aug: Augmentation, stamp: str, method: str) -> str:
    observations = [m for m in members if is_self_observation(m.atom.category)]
    first = observations[0].atom.text.strip().splitlines()[0] if observations and observations[0].atom.text.strip() else ""
    lines = [
        f"# Role amendment proposal (replay): {', '.join(terms) or slug}",
        "",
        f"<!-- drafted by mnemara replay at {stamp}; {len(observations)} self_observation notes; similarity: {method} -->",
        "",
        f"{len(observations)} self-observations recur around: {', '.join(terms) or slug}.",
        "A standing rule in the role doc would apply this on every turn instead of rediscovering it.",
        "",
        "## Suggested amendment",
        "",
        "Add a rule to the role doc that addresses this recurring observation, for example:",
        "",
        _quote(first or "(describe the rule)"),
        "",
    ]
    return "\n".join(lines + _augment_section(aug) + _members_section(observations)).rstrip("\n") + "\n"
