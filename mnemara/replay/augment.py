"""Phase 3: augment a pattern with entities and causal statements.

Entities come from the graph (``applies_to`` edges from a memory atom to an
entity) when the graph backend answers, and always from ``applies_to:`` lines
written in the note itself, so replay still finds them with the graph off,
empty or broken. Causal statements are sentences of member text with causal
phrasing ("because", "so that", "caused", ...).
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Sequence

from mnemara.replay.load import LoadedAtom

CAUSAL_RE = re.compile(
    r"\b(because|so that|caus(?:e|ed|es|ing)|due to|lead(?:s)? to|led to|leading to|result(?:s|ed)? in|"
    r"as a result|therefore|hence|which is why|that's why|that is why|in order to|owing to|thanks to)\b",
    re.IGNORECASE,
)
APPLIES_RE = re.compile(r"^\s*[-*]?\s*applies[ _-]?to\s*:\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)
SENTENCE_END_RE = re.compile(r"(?<=[.!?])\s+|\n+")
MAX_SENTENCE = 300

# Given the loaded atoms, answer {atom index: [entity, ...]} or raise to say the graph is unavailable.
EntityLookup = Callable[[Sequence[LoadedAtom]], dict[int, list[str]]]


@dataclass
class Augmentation:
    entities: list[tuple[str, int]] = field(default_factory=list)  # (entity, members mentioning it)
    causal: list[tuple[str, str]] = field(default_factory=list)  # (atom key, sentence)


def entities_in_text(text: str) -> list[str]:
    """Entities a note names on an ``applies_to: a, b`` line."""
    out: list[str] = []
    for match in APPLIES_RE.finditer(text):
        for item in re.split(r"[,;]", match.group(1)):
            item = item.strip().strip("[]\"'`").strip()
            if item and item not in out:
                out.append(item)
    return out


def causal_sentences(text: str) -> list[str]:
    out = []
    for part in SENTENCE_END_RE.split(text):
        sentence = " ".join(part.split())
        if sentence and CAUSAL_RE.search(sentence):
            out.append(sentence if len(sentence) <= MAX_SENTENCE else sentence[: MAX_SENTENCE - 1] + "…")
    return out


def entity_map(atoms: Sequence[LoadedAtom], lookup: EntityLookup | None) -> tuple[dict[int, list[str]], str]:
    """Entities per atom index from the note text plus the graph; and a one-line graph status."""
    found = {a.index: entities_in_text(a.atom.text) for a in atoms}
    if lookup is None:
        return found, "graph not used (no graph backend)"
    try:
        from_graph = lookup(atoms)
    except Exception as exc:  # the graph is optional: any failure degrades to note text only
        return found, f"graph unavailable: {str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__}"
    edges = 0
    for index, names in from_graph.items():
        bucket = found.setdefault(index, [])
        for name in names:
            edges += 1
            if name not in bucket:
                bucket.append(name)
    return found, f"graph used ({edges} applies_to edges)" if edges else "graph used (no applies_to edges for these atoms)"


def augment(members: Sequence[LoadedAtom], entities: dict[int, list[str]], max_causal: int = 10) -> Augmentation:
    """Entities named by two or more members (most frequent first) and causal sentences."""
    counts: Counter[str] = Counter()
    for member in members:
        counts.update(set(entities.get(member.index, ())))
    result = Augmentation()
    result.entities = sorted(((e, c) for e, c in counts.items() if c >= 2), key=lambda ec: (-ec[1], ec[0]))
    for member in members:
        for sentence in causal_sentences(member.atom.text):
            if len(result.causal) >= max_causal:
                return result
            result.causal.append((member.key, sentence))
    return result
