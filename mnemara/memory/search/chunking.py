"""Turn memory day files, wiki pages and free text into index chunks.

A memory atom is one chunk. A wiki page is split at its markdown headings and
each section carries the page title and its heading in ``search_text`` (so a
section about "timeouts" on the page "lease manager" is found by both words).
Long sections are split again at blank lines. Pure functions, no heavy imports.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from mnemara.memory.notes import parse_text
from mnemara.memory.wiki import parse_frontmatter, page_tags

HEADING_RE = re.compile(r"^(#{1,6})\s+(.*\S)\s*$")
MAX_SECTION_CHARS = 1500


@dataclass(frozen=True)
class Chunk:
    """One retrievable unit. ``search_text`` is what both channels see."""

    id: str
    source: str
    kind: str
    category: str
    path: str
    title: str
    text: str
    created_at: str

    @property
    def search_text(self) -> str:
        head = " / ".join(part for part in (self.title, self.category) if part)
        return f"{head}\n{self.text}" if head else self.text

    @property
    def hash(self) -> str:
        """Key of the embedding: the same ``search_text`` is embedded once."""
        return hashlib.sha256(self.search_text.encode("utf-8")).hexdigest()[:32]

    @property
    def signature(self) -> str:
        """Changes whenever the content changes (decides re-writing a row); re-indexing the
        same text later keeps the first ``created_at``."""
        fields = (self.id, self.source, self.kind, self.category, self.path, self.title, self.text)
        return hashlib.sha256("\x1f".join(fields).encode("utf-8")).hexdigest()[:32]


def memory_chunks(text: str, source: str) -> list[Chunk]:
    """One chunk per note of a day file (``source`` like ``memory/2026-04-27.md``), id ``note:<note id>``."""
    out = []
    for atom in parse_text(text, Path(source)):
        if not atom.text.strip():
            continue
        out.append(Chunk(
            id=atom.ref, source=source, kind="memory", category=atom.category,
            path=source, title="", text=atom.text, created_at=atom.timestamp,
        ))
    return out


def wiki_chunks(text: str, source: str, slug: str, modified: str) -> list[Chunk]:
    """Heading sections of a wiki page; tags become the chunks' category."""
    _, body = parse_frontmatter(text)
    tags = ", ".join(page_tags(text))
    page_title = _first_h1(body) or slug
    out = []
    for n, (heading, section) in enumerate(split_sections(body)):
        title = page_title if not heading or heading == page_title else f"{page_title} / {heading}"
        out.append(Chunk(
            id=f"wiki:{slug}#{n}", source=source, kind="wiki", category=tags, path=source,
            title=title, text=section, created_at=modified,
        ))
    return out


def text_chunks(text: str, source: str, kind: str, category: str, path: str, created_at: str) -> list[Chunk]:
    """Chunks of free text handed to ``rag_index``."""
    return [
        Chunk(id=f"{source}#{n}", source=source, kind=kind, category=category, path=path,
              title=heading, text=section, created_at=created_at)
        for n, (heading, section) in enumerate(split_sections(text))
    ]


def split_sections(text: str, max_chars: int = MAX_SECTION_CHARS) -> list[tuple[str, str]]:
    """(heading, text) pairs: split at headings, then at blank lines past ``max_chars``."""
    sections: list[tuple[str, list[str]]] = [("", [])]
    in_fence = False
    for line in text.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
        match = None if in_fence else HEADING_RE.match(line)
        if match:
            sections.append((match.group(2).strip("# ").strip(), [line]))
        else:
            sections[-1][1].append(line)
    out: list[tuple[str, str]] = []
    for heading, lines in sections:
        body = "\n".join(lines).strip("\n")
        if not body.strip() or (heading and len(lines) and not "\n".join(lines[1:]).strip()):
            continue  # empty, or a heading with nothing under it
        for piece in _split_long(body, max_chars):
            out.append((heading, piece))
    return out


def _split_long(body: str, max_chars: int) -> list[str]:
    if len(body) <= max_chars:
        return [body]
    pieces: list[str] = []
    current = ""
    for para in re.split(r"\n\s*\n", body):
        if current and len(current) + len(para) + 2 > max_chars:
            pieces.append(current)
            current = para
        else:
            current = f"{current}\n\n{para}" if current else para
        while len(current) > max_chars * 2:  # one enormous paragraph: hard cut
            pieces.append(current[:max_chars])
            current = current[max_chars:]
    if current.strip():
        pieces.append(current)
    return pieces


def _first_h1(body: str) -> str:
    for line in body.splitlines():
        match = HEADING_RE.match(line)
        if match and len(match.group(1)) == 1:
            return match.group(2).strip()
    return ""
