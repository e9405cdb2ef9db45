"""Dead ``[[wikilinks]]`` in notes and wiki pages.

A link ``[[target]]`` (also ``[[target|label]]`` and ``[[target#heading]]``)
resolves the way note-taking apps resolve it, tried in this order:

1. relative to the linking file when it starts with ``./`` or ``../``;
2. as a path under ``wiki/`` (``[[ops/deploy]]`` -> ``wiki/ops/deploy.md``);
3. by path suffix (``[[deploy/staging]]`` matches ``wiki/ops/deploy/staging.md``);
4. by basename (``[[staging]]`` matches any ``.../staging.md``).

Matching ignores case and an ``.md`` ending. Links inside code spans and fenced
blocks are not links and are skipped. A link is DEAD only when all four fail;
close page names are offered as suggestions.
"""
from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from mnemara.memory.lint_paths import fenced_lines

LINK_RE = re.compile(r"\[\[([^\[\]\n]+?)\]\]")
CODE_SPAN_RE = re.compile(r"`[^`\n]*`")


@dataclass
class LinkFinding:
    file: str
    line: int
    link: str  # the target as written
    verdict: str  # "live" | "dead"
    resolved: str = ""
    suggestions: list[str] = field(default_factory=list)
    note: str = ""  # id of the note holding it (day files only)

    @property
    def needs_user(self) -> bool:
        return self.verdict == "dead"


def wiki_pages(wiki_dir: Path) -> list[str]:
    """Slugs (``ops/deploy``) of every ``.md`` page under ``wiki_dir``, hidden folders skipped."""
    out: list[str] = []
    if not Path(wiki_dir).is_dir():
        return out
    for folder, dirs, files in os.walk(wiki_dir):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in files:
            if name.endswith(".md") and not name.startswith("."):
                rel = (Path(folder) / name).relative_to(wiki_dir).as_posix()
                out.append(rel[:-3])
    return sorted(out)


def extract_links(text: str) -> list[tuple[int, str]]:
    """(line, target) of every wikilink outside code."""
    out = []
    for n, line, fenced in fenced_lines(text):
        if fenced:
            continue
        for match in LINK_RE.finditer(CODE_SPAN_RE.sub(lambda m: " " * len(m.group(0)), line)):
            target = match.group(1).split("|", 1)[0].split("#", 1)[0].strip()
            if target:
                out.append((n, target))
    return out


class LinkResolver:
    """Resolves link targets against one instance's wiki pages."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.wiki_dir = self.root / "wiki"
        self.slugs = wiki_pages(self.wiki_dir)
        self._lower = {s.lower(): s for s in self.slugs}
        self._by_base: dict[str, list[str]] = {}
        for slug in self.slugs:
            self._by_base.setdefault(slug.rsplit("/", 1)[-1].lower(), []).append(slug)

    def resolve(self, target: str, linking_file: str) -> str:
        """The slug the link reaches, or '' when it reaches nothing."""
        clean = target.strip().replace("\\", "/")
        if clean.lower().endswith(".md"):
            clean = clean[:-3]
        if clean.startswith(("./", "../")):
            base = (self.root / linking_file).parent
            candidate = os.path.normpath(base / clean)
            try:
                rel = Path(candidate).relative_to(self.wiki_dir).as_posix()
            except ValueError:
                rel = ""
            if rel and rel.lower() in self._lower:
                return self._lower[rel.lower()]
            return ""
        low = clean.strip("/").lower()
        if low in self._lower:
            return self._lower[low]
        if "/" in low:
            suffix = [s for s in self.slugs if s.lower().endswith("/" + low)]
            return suffix[0] if suffix else ""
        same_name = self._by_base.get(low)
        return same_name[0] if same_name else ""

    def check(self, text: str, file: str) -> list[LinkFinding]:
        out = []
        for line, target in extract_links(text):
            slug = self.resolve(target, file)
            if slug:
                out.append(LinkFinding(file, line, target, "live", resolved=slug))
            else:
                close = difflib.get_close_matches(target.lower(), list(self._lower), n=3, cutoff=0.6)
                out.append(LinkFinding(file, line, target, "dead", suggestions=[self._lower[c] for c in close]))
        return out
