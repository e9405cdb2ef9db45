"""Role-amendment proposals: ``role_proposals/<timestamp>_<slug>.md``.

The agent never edits its role doc; it proposes. A proposal is a markdown file
with a small frontmatter (``status: pending`` until a human changes it to
``accepted`` or ``rejected``), the rationale and the proposed text. The replay
pass writes proposals into the same folder (``<ts>_replay-<slug>.md``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from mnemara.core.errors import UsageError
from mnemara.core.fsutil import atomic_write_text, private_mkdir
from mnemara.memory.wiki import parse_frontmatter

MAX_TITLE = 200
MAX_TEXT = 100_000


@dataclass(frozen=True)
class Proposal:
    path: Path
    title: str
    status: str
    created_at: str


def slugify(title: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
    return slug[:60].strip("-") or "proposal"


def propose_role_amendment(folder: Path, title: str, rationale: str, proposed_text: str,
                           source: str = "agent", when: datetime | None = None) -> Path:
    """Write a pending proposal; returns its path. Refuses empty or oversized fields."""
    for name, value, limit in (("title", title, MAX_TITLE), ("rationale", rationale, MAX_TEXT),
                               ("proposed_text", proposed_text, MAX_TEXT)):
        if not isinstance(value, str) or not value.strip():
            raise UsageError(f"{name} is empty; a proposal needs a title, a rationale and the proposed text")
        if len(value) > limit:
            raise UsageError(f"{name} is longer than {limit} characters")
    title = " ".join(title.split())
    when = (when or datetime.now(timezone.utc)).replace(microsecond=0)
    stamp = when.strftime("%Y%m%dT%H%M%SZ")
    folder = Path(folder)
    private_mkdir(folder)
    base = f"{stamp}_{slugify(title)}"
    path = folder / f"{base}.md"
    n = 2
    while path.exists():
        path = folder / f"{base}_{n}.md"  # sorts after the first one
        n += 1
    text = (
        f"---\nstatus: pending\ntitle: {title}\ncreated_at: {when.isoformat()}\nsource: {source}\n---\n"
        f"# Role amendment: {title}\n\n## Rationale\n\n{rationale.strip()}\n\n"
        f"## Proposed text\n\n{proposed_text.strip()}\n"
    )
    atomic_write_text(path, text)
    return path


def list_proposals(folder: Path, status: str | None = "pending") -> list[Proposal]:
    """Proposals in ``folder`` (oldest first), only those with ``status`` unless it is None."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    out = []
    for path in sorted(folder.glob("*.md")):
        try:
            meta, body = parse_frontmatter(path.read_text(encoding="utf-8", errors="replace"))
        except OSError:
            continue
        state = str(meta.get("status") or "pending").strip().lower()
        title = str(meta.get("title") or _heading(body) or path.stem)
        if status is None or state == status:
            out.append(Proposal(path, title, state, str(meta.get("created_at") or "")))
    return out


def _heading(body: str) -> str:
    for line in body.splitlines():
        if line.startswith("#"):
            return line.lstrip("#").strip()
    return ""
