"""Wiki pages: ``wiki/<slug>.md``, topic-keyed plain markdown.

Slugs may contain slashes (``patterns/loader_traps``); each segment is letters,
digits, ``.``, ``_`` or ``-`` and does not start with a dot. A path that would
leave ``wiki/`` (``..``, an absolute path, a symlink pointing out) is refused
with :class:`UsageError` and nothing is touched.

A page may start with a frontmatter block (``---`` lines) of ``key: value``
lines; only ``tags`` has a meaning here, written inline (``tags: [a, b]`` or
``tags: a, b``) or as a ``- item`` list below ``tags:``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from mnemara.core.errors import UsageError
from mnemara.core.fsutil import atomic_write_text, locked, private_mkdir

SEGMENT_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,99}")
MAX_SLUG = 200
MAX_PAGE_BYTES = 1_000_000


@dataclass(frozen=True)
class Page:
    slug: str  # e.g. "patterns/loader_traps" (no ".md")
    path: Path
    text: str

    @property
    def meta(self) -> dict[str, object]:
        return parse_frontmatter(self.text)[0]

    @property
    def tags(self) -> list[str]:
        return page_tags(self.text)


def normalize_slug(path: str) -> str:
    """``path`` as a canonical slug (no ``.md``), or :class:`UsageError`."""
    if not isinstance(path, str) or not path.strip():
        raise UsageError("wiki path is empty")
    raw = path.strip()
    if raw.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", raw) or "\\" in raw or "\x00" in raw:
        raise UsageError(f"wiki path {path!r} must be relative to wiki/ (no absolute paths or backslashes)")
    if raw.startswith("wiki/"):
        raw = raw[len("wiki/"):]
    if raw.endswith(".md"):
        raw = raw[:-3]
    segments = raw.split("/")
    for segment in segments:
        if segment in ("", ".", ".."):
            raise UsageError(f"wiki path {path!r} must stay inside wiki/ (no empty, '.' or '..' segments)")
        if not SEGMENT_RE.fullmatch(segment):
            raise UsageError(
                f"invalid wiki path {path!r}: segments are letters, digits, '.', '_' or '-', "
                "not starting with '.' or '-'"
            )
    slug = "/".join(segments)
    if len(slug) > MAX_SLUG:
        raise UsageError(f"wiki path {path!r} is longer than {MAX_SLUG} characters")
    return slug


def resolve_page(wiki_dir: Path, path: str) -> tuple[str, Path]:
    """The slug and file of ``path``; refuses anything that resolves outside ``wiki_dir``."""
    slug = normalize_slug(path)
    root = Path(wiki_dir).resolve()
    target = root / f"{slug}.md"
    resolved = target.resolve()
    if resolved != target and not _inside(resolved, root):
        raise UsageError(f"wiki path {path!r} resolves outside wiki/ (symlink); refused")
    if not _inside(resolved, root):
        raise UsageError(f"wiki path {path!r} resolves outside wiki/; refused")
    return slug, target


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def read_page(wiki_dir: Path, path: str) -> Page:
    """Read one page; :class:`UsageError` if it does not exist or is not UTF-8."""
    slug, target = resolve_page(wiki_dir, path)
    if not target.is_file():
        raise UsageError(f"no wiki page {slug!r} (see wiki_list)")
    try:
        text = target.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"wiki page {slug!r} is not UTF-8 text") from None
    return Page(slug, target, text)


def write_page(wiki_dir: Path, path: str, content: str, mode: str = "replace") -> Page:
    """Write (``replace``) or extend (``append``) a page atomically; returns the new page."""
    if mode not in ("replace", "append"):
        raise UsageError(f"invalid wiki write mode {mode!r}: use 'replace' or 'append'")
    if not isinstance(content, str):
        raise UsageError("wiki content must be text")
    if mode == "replace" and not content.strip():
        raise UsageError("refusing to replace a wiki page with empty content")
    slug, target = resolve_page(wiki_dir, path)
    with locked(Path(wiki_dir) / ".wiki.lock"):
        old = ""
        if mode == "append" and target.is_file():
            old = target.read_bytes().decode("utf-8", errors="replace")
        text = _join(old, content) if old else content
        if not text.endswith("\n"):
            text += "\n"
        if len(text.encode("utf-8")) > MAX_PAGE_BYTES:
            raise UsageError(f"wiki page {slug!r} would exceed {MAX_PAGE_BYTES} bytes; refused")
        private_mkdir(target.parent)
        atomic_write_text(target, text)
    return Page(slug, target, text)


def _join(old: str, new: str) -> str:
    sep = "" if old.endswith("\n\n") else ("\n" if old.endswith("\n") else "\n\n")
    return old + sep + new


def list_pages(wiki_dir: Path, prefix: str = "") -> list[str]:
    """Slugs of every page under ``wiki_dir`` whose slug starts with ``prefix``, sorted.

    Hidden files and symlinks resolving outside ``wiki/`` are skipped.
    """
    if prefix and ("\x00" in prefix or prefix.startswith("/") or ".." in prefix.split("/")):
        raise UsageError(f"invalid wiki prefix {prefix!r}")
    root = Path(wiki_dir).resolve()
    if not root.is_dir():
        return []
    out = []
    for file in root.rglob("*.md"):
        rel = file.relative_to(root).as_posix()
        if any(part.startswith(".") for part in rel.split("/")):
            continue
        if not _inside(file.resolve(), root):
            continue
        slug = rel[:-3]
        if slug.startswith(prefix):
            out.append(slug)
    return sorted(out)


# -- frontmatter -------------------------------------------------------------------
def parse_frontmatter(text: str) -> tuple[dict[str, object], str]:
    """Split ``text`` into (metadata, body). No frontmatter: ({}, text).

    The block is ``---`` on the first line and a closing ``---``; inside, each
    ``key: value`` line sets a string (``[a, b]`` becomes a list), and ``- item``
    lines under a bare ``key:`` build a list. Lines that fit neither are ignored.
    """
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return {}, text
    for end in range(1, len(lines)):
        if lines[end].strip() in ("---", "..."):
            break
    else:
        return {}, text
    meta: dict[str, object] = {}
    current: str | None = None
    for raw in lines[1:end]:
        line = raw.rstrip("\r\n")
        item = re.match(r"^\s+-\s*(.*)$", line) or re.match(r"^-\s+(.*)$", line)
        if item and current is not None:
            existing = meta.get(current)
            values = existing if isinstance(existing, list) else []
            value = _unquote(item.group(1).strip())
            if value:
                values.append(value)
            meta[current] = values
            continue
        pair = re.match(r"^([A-Za-z0-9_-]+)\s*:\s*(.*)$", line)
        if not pair:
            continue
        key, value = pair.group(1), pair.group(2).strip()
        current = key
        if value.startswith("[") and value.endswith("]"):
            meta[key] = [_unquote(v.strip()) for v in value[1:-1].split(",") if v.strip()]
        elif value:
            meta[key] = _unquote(value)
        else:
            meta[key] = []
    return meta, "".join(lines[end + 1:])


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def page_tags(text: str) -> list[str]:
    """The page's ``tags`` (deduplicated, order kept); ``tags: a, b`` splits on commas."""
    value = parse_frontmatter(text)[0].get("tags")
    if isinstance(value, str):
        items = [v.strip() for v in value.split(",")]
    elif isinstance(value, list):
        items = [str(v).strip() for v in value]
    else:
        return []
    seen: dict[str, None] = {}
    for item in items:
        if item and len(item) <= 100:
            seen.setdefault(item, None)
    return list(seen)
