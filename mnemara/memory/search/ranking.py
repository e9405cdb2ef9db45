"""How ``rag_query`` orders what its two channels found.

1. **Score-aware fusion.** Each channel's scores (BM25 for keyword, cosine
   similarity for vector) are put on [0, 1] by min-max over the rows that
   channel returned (its best is 1, the last of its list 0), then
   ``score = keyword_weight * keyword + vector_weight * vector``. Unlike rank
   fusion, a hit far ahead of the rest stays far ahead, and a weak channel
   with a small weight cannot outvote a clear keyword hit. The vector weight
   may depend on the question (:meth:`Weights.for_coverage`): high when the
   keyword channel's best rows miss the question's words (a paraphrase),
   low when one of them holds them all (the words were said).
2. **Dates.** When the question names a day, a month or a year ("on 13 October
   2023", "in May 2023", "in 2022", "in June"), a hit whose note was written
   in that window (plus :data:`DATE_SLACK` days for notes written a little later)
   gains ``date_weight``. A month without a year is the latest such month up to
   the newest hit.
3. **Neighbours.** A note gains ``neighbour_weight`` times the score of the
   best of the notes written just before and just after it in the same day
   file, with the same category, at most :data:`NEIGHBOUR_GAP` apart (the
   turns of one conversation): the answer is often the reply to the turn that
   names the topic. Such a neighbour joins the hits even when no channel
   found it.

The weights were chosen on conversations 0-4 of LoCoMo
(``bench/bench_locomo.py --split tune``); conversations 5-9 are the held-out
check. Every hit carries its evidence, so a score can be re-derived.
"""
from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from typing import Any, Iterable

DATE_SLACK = 7  # days after a named window whose notes still count (a trip told about a week later)
NEIGHBOUR_GAP = timedelta(minutes=2)
DEPTH = 40  # rows asked of each channel (at least)


@dataclass(frozen=True)
class Weights:
    """Weights of one ranking: the two channels, the date window and the neighbours.

    With ``vector_covered`` set the vector weight depends on the question (:meth:`for_coverage`):
    ``vector`` when the keyword channel's best rows hold none of the question's terms,
    ``vector_covered`` when one of them holds them all, linear in between; the keyword channel
    always gets the rest of 1."""

    keyword: float
    vector: float
    date: float
    neighbour: float
    vector_covered: float | None = None

    def for_coverage(self, coverage: float) -> "Weights":
        """The fixed weights for a question whose terms the keyword channel covers by ``coverage``."""
        if self.vector_covered is None or self.vector <= 0:
            return self
        share = min(1.0, max(0.0, coverage))
        vector = round(self.vector - (self.vector - self.vector_covered) * share, 6)
        return Weights(round(1.0 - vector, 6), vector, self.date, self.neighbour)

    def as_dict(self) -> dict[str, float]:
        out = {"keyword": self.keyword, "vector": self.vector, "date": self.date, "neighbour": self.neighbour}
        if self.vector_covered is not None:
            out["vector_covered"] = self.vector_covered
        return out


COVERAGE_ROWS = 3  # keyword rows whose terms are compared with the question's


def keyword_coverage(terms: list[str], rows: list[str]) -> float:
    """The largest share of the (distinct) question ``terms`` that one of ``rows`` (the indexed
    text of the keyword channel's first :data:`COVERAGE_ROWS` hits, space-separated tokens) holds:
    1.0 when a keyword hit names everything the question asks about, 0.0 with no keyword hit."""
    wanted = set(terms)
    if not wanted:
        return 0.0
    return max((len(wanted & set(row.split())) / len(wanted) for row in rows[:COVERAGE_ROWS]), default=0.0)


RULE = ("score = keyword_weight * minmax(bm25) + vector_weight * minmax(cosine similarity) "
        "(min-max over each channel's rows; with vector_covered, vector_weight goes from vector to "
        "vector_covered as the share of the question's terms held by one of the first "
        f"{COVERAGE_ROWS} keyword hits goes from 0 to 1, keyword_weight = 1 - vector_weight), + date_weight when the note's day is in a date window the "
        "question names, then + neighbour_weight * the best score of the notes written just before/after "
        f"it (same day file and category, at most {int(NEIGHBOUR_GAP.total_seconds() // 60)} minutes apart)")


def unit_scores(values: list[float]) -> list[float]:
    """``values`` mapped onto [0, 1] by min-max (one value, or all equal: every one is 1)."""
    if not values:
        return []
    hi, lo = max(values), min(values)
    if hi == lo:
        return [1.0 for _ in values]
    return [(v - lo) / (hi - lo) for v in values]


def fuse(keyword: list[dict[str, Any]], vector: list[dict[str, Any]], weights: Weights,
         make_hit: Any) -> dict[str, dict[str, Any]]:
    """id -> hit with its channel evidence and fused ``score`` (before dates and neighbours)."""
    hits: dict[str, dict[str, Any]] = {}
    for rank, (row, unit) in enumerate(zip(keyword, unit_scores([float(r["_score"]) for r in keyword])), 1):
        hit = hits.setdefault(row["id"], make_hit(row))
        hit["channels"]["keyword"] = {"rank": rank, "bm25": round(float(row["_score"]), 6), "unit": round(unit, 6)}
    sims = [1.0 - float(r["_distance"]) for r in vector]
    for rank, (row, unit) in enumerate(zip(vector, unit_scores(sims)), 1):
        hit = hits.setdefault(row["id"], make_hit(row))
        hit["channels"]["vector"] = {"rank": rank, "cosine_distance": round(float(row["_distance"]), 6),
                                     "unit": round(unit, 6)}
    channel_weight = {"keyword": weights.keyword, "vector": weights.vector}
    for hit in hits.values():
        hit["score"] = sum(channel_weight[name] * ch["unit"] for name, ch in hit["channels"].items())
    return hits


# -- dates -------------------------------------------------------------------------------------
_MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december"]
MONTH_NUMBER = {name: n for n, name in enumerate(_MONTHS, 1)} | {name[:3]: n for n, name in enumerate(_MONTHS, 1)}
MONTH_NUMBER["sept"] = 9
_MONTH = r"(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|" \
         r"jun|jul|aug|sept|sep|oct|nov|dec)\.?"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"((?:19|20)\d\d)"
DAY_MONTH_YEAR = re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b")
MONTH_DAY_YEAR = re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b")
ISO_DAY = re.compile(r"\b((?:19|20)\d\d)-(\d{2})-(\d{2})\b")
MONTH_YEAR = re.compile(rf"\b{_MONTH},?\s+{_YEAR}\b")
YEAR = re.compile(rf"\b(?:in|during|of|since|from)\s+{_YEAR}\b")
MONTH_ALONE = re.compile(rf"\b(?:in|during|of|last)\s+{_MONTH}\b")


def _day(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def date_window(question: str, reference: date | None = None) -> tuple[date, date] | None:
    """The days a question names (first, last), or None. ``reference`` places a month named without
    a year: the latest such month that began on or before it."""
    text = question.casefold()
    for pattern, order in ((DAY_MONTH_YEAR, "dmy"), (MONTH_DAY_YEAR, "mdy")):
        match = pattern.search(text)
        if match:
            parts = dict(zip(order, match.groups()))
            day = _day(int(parts["y"]), MONTH_NUMBER[parts["m"]], int(parts["d"]))
            if day:
                return day, day
    match = ISO_DAY.search(text)
    if match:
        day = _day(int(match.group(1)), int(match.group(2)), int(match.group(3)))
        if day:
            return day, day
    match = MONTH_YEAR.search(text)
    if match:
        return _month(int(match.group(2)), MONTH_NUMBER[match.group(1)])
    match = YEAR.search(text)
    if match:
        year = int(match.group(1))
        return date(year, 1, 1), date(year, 12, 31)
    match = MONTH_ALONE.search(text)
    if match and reference is not None:
        month = MONTH_NUMBER[match.group(1)]
        year = reference.year if month <= reference.month else reference.year - 1
        return _month(year, month)
    return None


def _month(year: int, month: int) -> tuple[date, date]:
    return date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1])


def note_day(created_at: str) -> date | None:
    """The calendar day of a timestamp as written (its own offset), None when unreadable."""
    try:
        return datetime.fromisoformat(created_at.replace("Z", "+00:00")).date()
    except (TypeError, ValueError):
        return None


def apply_dates(hits: Iterable[dict[str, Any]], question: str, weight: float) -> str:
    """Add ``weight`` to hits written inside the window the question names; returns the window ('' if none)."""
    hits = list(hits)
    days = [d for d in (note_day(h.get("created_at", "")) for h in hits) if d]
    window = date_window(question, max(days) if days else None)
    if window is None or weight <= 0:
        return ""
    first, last = window[0], window[1] + timedelta(days=DATE_SLACK)
    for hit in hits:
        day = note_day(hit.get("created_at", ""))
        if day and first <= day <= last:
            hit["score"] += weight
            hit.setdefault("boosts", {})["date"] = weight
    return f"{window[0].isoformat()}..{window[1].isoformat()} (+{DATE_SLACK} days)"


# -- neighbours --------------------------------------------------------------------------------
class Timeline:
    """Memory notes in writing order per day file: who was written just before and after whom."""

    def __init__(self, rows: Iterable[tuple[str, str, str, str]]) -> None:
        """``rows``: (chunk id, day file, category, created_at) of memory notes."""
        keyed = []
        for ident, path, category, created in rows:
            try:
                moment = datetime.fromisoformat(created.replace("Z", "+00:00"))
            except (TypeError, ValueError):
                continue
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=timezone.utc)
            keyed.append((path, moment, ident, category))
        keyed.sort()
        self._near: dict[str, list[str]] = {}
        for (path_a, at_a, id_a, cat_a), (path_b, at_b, id_b, cat_b) in zip(keyed, keyed[1:]):
            if path_a == path_b and cat_a == cat_b and at_b - at_a <= NEIGHBOUR_GAP:
                self._near.setdefault(id_a, []).append(id_b)
                self._near.setdefault(id_b, []).append(id_a)

    def neighbours(self, ident: str) -> list[str]:
        return self._near.get(ident, [])

    def __len__(self) -> int:
        return len(self._near)


def neighbour_ids(hits: dict[str, dict[str, Any]], timeline: Timeline) -> set[str]:
    """Neighbours of the hits that are not hits themselves."""
    return {n for ident in hits for n in timeline.neighbours(ident) if n not in hits}


def apply_neighbours(hits: dict[str, dict[str, Any]], timeline: Timeline, weight: float) -> None:
    """Each hit gains ``weight`` x the best score among its neighbours (scores as they were before)."""
    if weight <= 0:
        return
    before = {ident: hit["score"] for ident, hit in hits.items()}
    for ident, hit in hits.items():
        best = max(((before[n], n) for n in timeline.neighbours(ident) if n in before), default=(0.0, ""))
        if best[0] > 0:
            added = weight * best[0]
            hit["score"] += added
            hit.setdefault("boosts", {})["neighbour"] = {"of": best[1], "added": round(added, 6)}


def first_found(hits: list[dict[str, Any]], count: int) -> list[dict[str, Any]]:
    """The head of ``hits`` that holds ``count`` hits found by a channel (neighbours in between ride along)."""
    found = 0
    for n, hit in enumerate(hits):
        found += bool(hit["channels"])
        if found > count:
            return hits[:n]
    return list(hits)


def keep_neighbour_slots(top: list[dict[str, Any]], checked: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``top`` with its channel hits replaced, in order, by ``checked`` (the conflict-checked list of
    channel hits); neighbour-only hits keep their slots and whatever ``checked`` adds comes last."""
    rest = iter(checked)
    out = [hit if not hit["channels"] else next(rest, hit) for hit in top]
    seen = {id(h) for h in out}
    return out + [h for h in rest if id(h) not in seen]


def ordered(hits: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Best first; ties by keyword rank, then id. Scores are rounded for the receipt."""
    out = list(hits)
    for hit in out:
        hit["score"] = round(hit["score"], 6)
    return sorted(out, key=lambda h: (-h["score"], h["channels"].get("keyword", {}).get("rank", 10**9), h["id"]))

