"""The one place that decides how alike two notes are and whether they make the same claim.

Used by dedupe on write, replay, lint, ``rag_query`` (recency) and auto-recall:

* :func:`tokens` is THE tokenizer (defined in
  :mod:`mnemara.memory.search.tokenize`, re-exported here): the full-text
  index is fed with its output (``fts_text``), queries go through it, and the
  auto-recall gate counts coverage with it, so "what matched" means the same
  thing everywhere.
* what one note claims is read once per text by :func:`mnemara.memory.search.claim.claim_of`
  (re-exported here); everything below compares two notes' claims.
* :func:`claim_differences` is the **claim guard**. A cosine (of any
  embedder, or of TF-IDF) says two notes are about the same thing; it cannot
  say they agree. Two notes make the same claim only when their numbers (as
  written: ``3.10`` is not ``3.1``) with their units, signs and comparisons
  (``-5``, ``> 500``), their negations, their limiters (``only``, ``except``,
  ``unless``), their polarity words (on either side: ``above 5%`` is not
  ``5%``), the stop words that still claim something (``up``/``down``,
  ``all``/``some``, ``in``/``out``, ``can``/``should``), their cadences and bare
  time units (``weekly``, ``in seconds``), what they say was retired, and the
  order of their named entities agree, and neither only adds a word or two
  of detail to the other. Anything else is a
  *conflict*: written, shown and proposed for supersession, never merged.
* :func:`relate` combines them into ``copy`` (an exact copy, :mod:`.exact`: the
  only verdict any step may act on alone), ``possible copy`` and ``conflict``
  (proposed to the user) or ``distinct`` (other subjects in one pattern
  included, :mod:`.subject`); a similarity never makes a copy.
* ordering search hits by these verdicts (conflicting hits newest first, none
  dropped) is :mod:`.recency`'s.
"""
from __future__ import annotations

import difflib
import math
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Sequence

# the tokenizer lives in its own module (mnemara.memory.search.tokenize), what one note claims in .claim;
# re-exported for their callers. The vocabulary of a claim lives below both, where .exact and .subject read it too
from mnemara.memory.search.claim import DETERMINERS, DURATION_MS, Claim, Topic, topic_of
from mnemara.memory.search.claim import claim_of as claim_of
from mnemara.memory.search.claim_words import CALENDAR_STEMS, LENGTH_UNITS, POLES
from mnemara.memory.search.claim_words import SPEAKER_RE as SPEAKER_RE
from mnemara.memory.search.claim_words import strip_marks as strip_marks
from mnemara.memory.search.claim_words import english, with_aliases, without_lead_in
from mnemara.memory.search.exact import is_exact_copy
from mnemara.memory.search.restate import restates
from mnemara.memory.search.subject import different_subject, main_clause, says_changed
from mnemara.memory.search.tokenize import ABBREVIATIONS
from mnemara.memory.search.tokenize import STOPWORDS as STOPWORDS
from mnemara.memory.search.tokenize import fts_text as fts_text
from mnemara.memory.search.tokenize import stem as stem
from mnemara.memory.search.tokenize import tokens as tokens
from mnemara.memory.search.voice import turned_round

SENTENCE_RE = re.compile(r"(?<=[.!?;])\s+|\n+")


# -- normalisation and the tokenizer ------------------------------------------------------


@lru_cache(maxsize=8192)
def normalize(text: str) -> str:
    """A loose canonical form (every letter case-folded): for finding a note by its text and for the
    claim guard's shortcut. Never the test of a copy: that is
    :func:`mnemara.memory.search.exact.copy_key` ("MB" is not "mb", "Exports/" is not "exports/")."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = strip_marks(text)
    text = re.sub(r"^\s*[-+*]\s+", "", text)  # a markdown bullet
    text = " ".join(text.split())
    return text.rstrip(" .!?;:")


def subject_words(text: str) -> list[str]:
    """The tokens a note is looked up by when its subject is wanted (dedupe on write, recall's newer
    notes): :func:`tokens`, plus the words its aliases stand for ("reports to" -> "manager")."""
    plain = tokens(text)
    aliased = with_aliases(text)
    return plain if aliased == text else plain + [t for t in tokens(aliased) if t not in plain]


def content_words(text: str) -> list[str]:
    """Stemmed content tokens (stop words removed); kept for callers that want a bag of words."""
    return tokens(text)


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity of two vectors (0.0 when either is all zeros)."""
    dot = sum(x * y for x, y in zip(a, b))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0


def word_overlap(a: str, b: str) -> float:
    """Dice coefficient of the two token sets: a model-free "same wording" measure in [0, 1]."""
    ta, tb = set(tokens(a)), set(tokens(b))
    return 2 * len(ta & tb) / (len(ta) + len(tb)) if ta and tb else 0.0


def same_wording(a: str, b: str) -> bool:
    """Worded alike, the claim words left out: the same content words, in any order and inflection.
    A model-free copy test. A content word added on one side is new detail ("approval" / "approval
    from legal"), never a copy: :func:`added_detail` names it."""
    ta, tb = claim_of(a).topic, claim_of(b).topic
    if ta != tb and ta ^ tb <= PLACE_VERBS and _reordered(claim_of(a).content, claim_of(b).content):
        ta, tb = ta - PLACE_VERBS, tb - PLACE_VERBS  # "X are in Y" / "Y holds X": see added_detail
    return bool(ta) and ta == tb


def sentences(text: str) -> list[str]:
    """Sentences (or lines) of a message, for scoring long messages piece by piece."""
    return [s.strip() for s in SENTENCE_RE.split(text) if s.strip()]


def _without_their_own_names(ta: frozenset[str], tb: frozenset[str], ca: Claim | Topic,
                             cb: Claim | Topic) -> tuple[frozenset[str], frozenset[str]]:
    """Two statements' subject words without the names only one of them writes (:func:`.claim.names_in`): a name in
    one note only is a value it gives its subject (a set that would be left empty stays whole)."""
    return ta - (ca.names - tb) or ta, tb - (cb.names - ta) or tb


def _numbers_differ(a: Claim, b: Claim) -> str:
    va, vb = Counter(v for v, _ in a.numbers), Counter(v for v, _ in b.numbers)
    if va != vb:
        if any(_amounts(a, base) == _amounts(b, base) for base in SIZE_BASES):
            return ""  # the same amounts in other units: "30 s" / "30000 ms", "six months" / "half a year", "1 GB" / "1024 MB"
        return f"numbers differ: {_show(a.numbers)} vs {_show(b.numbers)}"
    for value in va:
        ua = {u for v, u in a.numbers if v == value and u}
        ub = {u for v, u in b.numbers if v == value and u}
        if (ua and ub and ua != ub) or ("%" in ua) != ("%" in ub):  # "10" is not "10%"
            return (f"units differ: {value} {'/'.join(sorted(ua)) or '(no unit)'} vs "
                    f"{value} {'/'.join(sorted(ub)) or '(no unit)'}")
    return ""


# calendar lengths in months (a month is no fixed count of days, so days and weeks are not turned into months)
MONTHS = {"mo": 1, "q": 3, "y": 12}
SIZE_STEPS = ("b", "kb", "mb", "gb", "tb")
LENGTH_MM = {"mm": 1, "cm": 10, "metre": 1000, "km": 1_000_000}  # "3.5 m" is "350 cm" (round 11 of issue 40)
SIZE_BASES = (1000, 1024)  # "1.5 TB" / "1500 GB" and "1 GB" / "1024 MB" both name one size


def _amounts(claim: Claim, base: int = 1000) -> Counter[str]:
    """The claim's numbers with every duration in milliseconds, every calendar length in months, every metric length
    in millimetres and every size in bytes counted in steps of ``base`` (other numbers as written)."""
    out: Counter[str] = Counter()
    for value, unit in claim.numbers:
        match = re.fullmatch(r"([-+<>=~]*)(\d+(?:\.\d+)?)", value)
        if match and unit in DURATION_MS:
            out[f"{match.group(1)}{float(match.group(2)) * DURATION_MS[unit]:g} ms"] += 1
        elif match and unit in MONTHS:
            out[f"{match.group(1)}{float(match.group(2)) * MONTHS[unit]:g} mo"] += 1
        elif match and unit in LENGTH_MM:
            out[f"{match.group(1)}{float(match.group(2)) * LENGTH_MM[unit]:g} mm"] += 1
        elif match and unit in SIZE_STEPS:
            out[f"{match.group(1)}{float(match.group(2)) * base ** SIZE_STEPS.index(unit):g} b"] += 1
        else:
            out[f"{value} {unit}"] += 1
    return out


def _show(numbers: tuple[tuple[str, str], ...]) -> str:
    return ", ".join(f"{v}{' ' + u if u else ''}" for v, u in numbers) or "none"


def _squash(claim: Claim) -> str:
    return "".join(claim.words).replace("_", "")  # as the entity keys are spelled


SHORT_FORMS = {long: tuple(short for short, word in ABBREVIATIONS.items() if word == long)
               for long in set(ABBREVIATIONS.values())}


def _spelled_in(name: str, squashed: str) -> bool:
    """Whether the note whose words are ``squashed`` (:func:`_squash`) writes the name ``name``, in its long or its short
    form (:data:`.tokenize.ABBREVIATIONS`: "DB" / "database", "Kubernetes" / "k8s"; round 12 of issue 40)."""
    forms = (name, ABBREVIATIONS.get(name, ""), *SHORT_FORMS.get(name, ()))
    return any(form and form in squashed for form in forms)


def _order_differs(a: Claim, b: Claim) -> str:
    """Names (capitalised words, identifiers) must all appear in both notes, in the same order; the
    same words must not have two of them swapped, nor one of them replaced by another."""
    sa, sb = _squash(a), _squash(b)
    missing = [e for e in a.entities if not _spelled_in(e, sb)] + [e for e in b.entities if not _spelled_in(e, sa)]
    if missing:
        return f"names differ: {', '.join(dict.fromkeys(missing[:4]))} in only one note"
    # the names both notes write as names: a word capitalised in one note only is written in Title Case, no name
    # ("The spare printer toner ..." / "Spare Toner For The Printer -> ..."; round 12 of issue 40)
    shared = [e for e in dict.fromkeys(a.entities + b.entities) if e in a.entities and e in b.entities]
    order_a = _listed_as_one(sorted(shared, key=sa.find), a.lists, b.lists)
    order_b = _listed_as_one(sorted(shared, key=sb.find), b.lists, a.lists)
    # the order says who does what to whom when the notes say it in the same words ("Alice reports to Bob" / "Bob
    # reports to Alice"); a sentence said another way puts its names elsewhere ("Ingrid is the contact for the
    # Norway partner" / "For anything involving the Norway partner, talk to Ingrid")
    if order_a != order_b and set(a.content) == set(b.content):
        return f"order of names differs: {' -> '.join(order_a)} vs {' -> '.join(order_b)}"
    ca, cb = a.content, b.content
    if len(ca) == len(cb) and ca != cb:
        diff = [i for i in range(len(ca)) if ca[i] != cb[i]]
        # a day or month moved ("On Fridays the office closes" / "The office closes on Fridays") is no swap of
        # roles: when a thing happens is compared as a value (days or months differ), wherever the note says it
        if len(diff) == 2 and ca[diff[0]] == cb[diff[1]] and ca[diff[1]] == cb[diff[0]] \
                and not _in_one_list({ca[diff[0]], ca[diff[1]]}, a.lists, b.lists) \
                and not {ca[diff[0]], ca[diff[1]]} & CALENDAR_STEMS \
                and not (_joined(a, ca[diff[0]], ca[diff[1]]) and _joined(b, ca[diff[0]], ca[diff[1]])) \
                and not (diff[1] == diff[0] + 1 and (_of_phrase(a, ca[diff[0]], ca[diff[1]])
                                                     or _of_phrase(b, ca[diff[0]], ca[diff[1]]))):
            return f"roles swapped: {ca[diff[0]]} and {ca[diff[1]]}"
        if len(diff) == 1:  # one word swapped for another, all else equal: "invoices" / "receipts"
            named = ca[diff[0]] in a.capitalised or cb[diff[0]] in b.capitalised
            return f"{'names' if named else 'a word'} differ{'' if named else 's'}: {ca[diff[0]]} vs {cb[diff[0]]}"
    return _one_stretch_swapped(ca, cb)


MAX_SWAPPED_STRETCH = 3


def _one_stretch_swapped(ca: tuple[str, ...], cb: tuple[str, ...]) -> str:
    """"words differ: ..." when the content words differ in one place only, a stretch of up to
    :data:`MAX_SWAPPED_STRETCH` words put for another, all else equal: "#ops-alerts" / "#oncall-pager",
    "the blue room" / "the big meeting room" (round 4 of issue 40: a value of more than one word read as
    no difference at all, since only one word swapped for one counted); "" otherwise."""
    ops = [op for op in difflib.SequenceMatcher(a=ca, b=cb, autojunk=False).get_opcodes() if op[0] != "equal"]
    if len(ops) != 1 or ops[0][0] != "replace" or len(ca) < 2:
        return ""
    _op, i1, i2, j1, j2 = ops[0]
    if max(i2 - i1, j2 - j1) > MAX_SWAPPED_STRETCH or i2 - i1 == len(ca) or j2 - j1 == len(cb):
        return ""
    return f"words differ: {' '.join(ca[i1:i2])} vs {' '.join(cb[j1:j2])}"


OF_WORDS = frozenset("of for".split())


def _of_phrase(claim: Claim, x: str, y: str) -> bool:
    """Whether the note writes the (stemmed) words ``x`` and ``y`` as one noun phrase turned round with "of" or "for"
    ("school for the kids" is "the kids' school", "toner for the printer" is "printer toner": round 12 of issue 40),
    which names one thing, where a swap of two words around a verb swaps roles ("Alice reports to Bob")."""
    words = claim.words
    for i in range(len(words) - 2):
        if words[i + 1] not in OF_WORDS:
            continue
        j = i + 3 if words[i + 2] in DETERMINERS and i + 3 < len(words) else i + 2
        if {stem(words[i]), stem(words[j])} == {x, y}:
            return True
    return False


JOINING = frozenset("and or et ou und oder y o e".split())


def _joined(claim: Claim, x: str, y: str) -> bool:
    """Whether the note lists the (stemmed) words ``x`` and ``y`` together, either first ("design and QA" /
    "QA and design" meet the same people: a list in another order, as with names, :data:`LIST_RE`)."""
    words = claim.words
    return any({stem(words[i]), stem(words[i + 2])} == {x, y} and words[i + 1] in JOINING
               for i in range(len(words) - 2))


def _listed_as_one(order: list[str], mine: tuple[frozenset[str], ...],
                   theirs: tuple[frozenset[str], ...]) -> list[str]:
    """``order`` with each group of names that both notes list together ("Alice and Bob" / "Bob and
    Alice") standing as one: the order inside a list claims nothing."""
    groups = [g for g in mine if g in theirs]
    out: list[str] = []
    for name in order:
        group = next((g for g in groups if name in g), None)
        key = "+".join(sorted(group)) if group else name
        if not out or out[-1] != key:
            out.append(key)
    return out


def _in_one_list(stems: set[str], mine: tuple[frozenset[str], ...], theirs: tuple[frozenset[str], ...]) -> bool:
    """Whether the (stemmed) words ``stems`` are names that both notes list together."""
    return any(stems <= {stem(k) for k in g} for g in mine if g in theirs)


def claim_differences(a: str, b: str) -> list[str]:
    """Why ``a`` and ``b`` do not make the same claim ([] when they do: numbers and units,
    negations, polarity, retirement and the order of named entities all agree, and neither only
    adds a word or two of detail to the other)."""
    if normalize(a) == normalize(b):
        return []
    ca, cb = claim_of(a), claim_of(b)
    out = []
    numbers = _numbers_differ(ca, cb)
    if numbers:
        out.append(numbers)
    if ca.negations != cb.negations:
        out.append(f"negation differs: {ca.negations} vs {cb.negations} negating words")
    if ca.limiters != cb.limiters:
        out.append(f"limits differ: {', '.join(ca.limiters) or 'none'} vs {', '.join(cb.limiters) or 'none'}")
    for axis in sorted(set(ca.poles) | set(cb.poles)):
        if ca.poles.get(axis) != cb.poles.get(axis):
            out.append(f"polarity differs ({axis}): {_poles(a, axis) or 'none'} vs {_poles(b, axis) or 'none'}")
    if ca.calendar != cb.calendar:
        out.append(f"days or months differ: {_listed(ca.calendar)} vs {_listed(cb.calendar)}")
    if ca.bare_units != cb.bare_units:
        out.append(f"time units differ: {_listed(ca.bare_units)} vs {_listed(cb.bare_units)}")
    if ca.function != cb.function:
        only_a, only_b = ca.function - cb.function, cb.function - ca.function
        if not (only_a and only_b) and (only_a | only_b) <= LONE_PARTICLES and len(only_a | only_b) == 1:
            out.append(f"a lone particle differs: {_listed(only_a | only_b)}")
        else:
            out.append(f"wording differs: {_listed(only_a)} vs {_listed(only_b)}")
    if ca.retired != cb.retired:
        out.append(f"one note says retired/removed ({', '.join(sorted(ca.retired ^ cb.retired))})")
    if not numbers:
        ca, cb = _lengths_as_values(ca), _lengths_as_values(cb)
    order = _order_differs(ca, cb)
    if order:
        out.append(order)
    added = _added_detail(ca, cb)
    if added:
        out.append(added)
    return out


LENGTH_STEMS = frozenset(stem(w) for w in LENGTH_UNITS) | frozenset(LENGTH_UNITS)
LENGTH_CANONS = frozenset(LENGTH_UNITS.values())


def _lengths_as_values(claim: Claim) -> Claim:
    """``claim`` without the words of its length units, when it gives a length: two notes whose lengths agree
    (:func:`_amounts`: "5 km" / "5000 metres") differ in no word for writing them in two units. (The unit words stay
    words of the subject elsewhere: two notes giving lengths in one unit share it, :data:`LENGTH_UNITS`.)"""
    if not any(unit in LENGTH_CANONS for _value, unit in claim.numbers):
        return claim
    return replace(claim, content=tuple(t for t in claim.content if t not in LENGTH_STEMS),
                   topic=frozenset(t for t in claim.topic if t not in LENGTH_STEMS))


# the differences that leave every value of a claim as it was: words added, or a stretch of words put otherwise. Not
# a claim-bearing stop word ("wording differs": "up" / "down"), a swap of roles or of the order of names ("from Berlin to
# Paris" / "from Paris to Berlin"), nor one word put for another ("the raw schema" / "the staging schema")
REWORDINGS = ("one note adds detail", "words differ", "a lone particle differs")
# a claim-bearing stop word one note writes and the other neither writes nor turns round: "gets backed up", "can be
# reached at" (round 12 of issue 40). Against "down" or "cannot" it is a change of claim; alone, a way of saying it
LONE_PARTICLES = frozenset({"up", "can"})


def same_values(a: str, b: str, diffs: Sequence[str]) -> bool:
    """Whether ``a`` and ``b``, whose claim differences are ``diffs``, give the same values and differ only in how they
    word them (:data:`REWORDINGS`): every amount the same (units converted), or every name the same, and neither says
    the fact changed. "The car's next oil change is due at 45,000 miles" / "Reminder: the next oil change is due when
    the car hits 45,000 miles", "The mobile team's retro happens every other Friday" / "The mobile team does its
    retrospective biweekly, on Fridays" (round 11 of issue 40): one fact restated, a possible copy (a merge for the
    user to judge, and recall still dates the newer one). With every amount the same, names one note adds are detail
    too ("... every six months at Oakfield Vets"); a name put for another never is. A note that gives no value both
    give stays a possible correction when it adds words: "Admins can deploy" / "Admins can deploy to staging" narrows
    the claim."""
    if not diffs or says_changed(a) or says_changed(b):
        return False
    ca, cb = claim_of(a), claim_of(b)
    amounts = bool(ca.numbers) and not _numbers_differ(ca, cb)
    names_a, names_b = set(ca.entities), set(cb.entities)
    # with every amount the same, names one note adds are detail too ("... every six months at Oakfield Vets")
    names_added = amounts and (names_a <= names_b or names_b <= names_a)
    if not all(d.startswith(REWORDINGS) or (names_added and d.startswith("names differ")) for d in diffs):
        return False
    # every name of each note written in the other, a name at the start of a sentence (no name to the claim guard)
    # included: "Mia's piano lessons are on Wednesdays with Mrs. Hart" / "Piano w/ Mrs. Hart for Mia" (round 12)
    return amounts or bool(names_a | names_b) and all(_spelled_in(e, _squash(cb)) for e in names_a) \
        and all(_spelled_in(e, _squash(ca)) for e in names_b)


def _listed(words: frozenset[str]) -> str:
    return ", ".join(sorted(words)) or "none"


def contradicts(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` say opposite things, not merely different amounts of detail: both
    give numbers in the same unit and those differ, they name opposite poles of one axis (a
    negation flipping the pole it goes with), one negates and the other does not (when they share
    no polarity word), or one says the thing was retired. ("30 s" / "300 s" contradict;
    "30 s" / "the timeout was raised" do not: the second gives no number to compare; nor do
    "5% for 1 h" / "5%": the second only leaves the hour out.)"""
    ca, cb = claim_of(a), claim_of(b)
    by_unit_a: dict[str, set[str]] = {}
    by_unit_b: dict[str, set[str]] = {}
    for numbers, by_unit in ((ca.numbers, by_unit_a), (cb.numbers, by_unit_b)):
        for value, unit in numbers:
            by_unit.setdefault(unit, set()).add(value)
    if any(by_unit_a[unit] != by_unit_b[unit] for unit in set(by_unit_a) & set(by_unit_b)):
        return True  # the same unit (or none on both sides) with other values: "30 s" / "300 s"
    if ca.retired != cb.retired or ca.calendar and cb.calendar and ca.calendar != cb.calendar:
        return True  # retired on one side, or other days: "freezes on Friday" / "on Tuesday"
    shared = set(ca.poles) & set(cb.poles)
    if not shared:
        return ca.negations % 2 != cb.negations % 2
    # a negation flips the pole it goes with: "must never be enabled" agrees with "is off"
    flip_a, flip_b = ca.negations % 2 == 1, cb.negations % 2 == 1
    return any(_flipped(ca.poles[axis], flip_a) != _flipped(cb.poles[axis], flip_b) for axis in shared)


def _flipped(poles: frozenset[str], flip: bool) -> frozenset[str]:
    return frozenset({"+": "-", "-": "+"}[p] for p in poles) if flip else poles


def _poles(text: str, axis: str) -> str:
    return "/".join(sorted(w for w in claim_of(text).pole_words if POLES[w][0] == axis))


MIN_SHARE_OF_LARGER = 0.25


def same_topic(a: str, b: str, min_overlap: float = 0.6) -> bool:
    """Whether ``a`` and ``b`` talk about the same subject (claim words left out): the smaller
    topic set is mostly inside the larger one, and makes up at least :data:`MIN_SHARE_OF_LARGER`
    of it. A line of one or two words ("Gina: ;)", "Remember Jon, just do it!") is inside many a
    long note naming the same people, yet is not about what that note says: without the second
    test recall took such pairs for conflicts and put the newer line in the better slot (measured
    on LoCoMo conversations 0-4: hit@5 0.655 with it, 0.680 without; the truth bench unchanged)."""
    ca, cb = topic_of(a), topic_of(b)  # (the rest of the claim is not needed here: many a pair stops at this test)
    ta, tb = ca.subject, cb.subject
    if min(len(ta), len(tb)) < 2:  # one word left once the values are out says too little: "We never deploy
        ta, tb = ca.topic, cb.topic  # on Fridays" is about deploying on Fridays, not any note with "deploy"
    if not ta or not tb:
        return False
    if not SPEAKER_RE.match(a) and not SPEAKER_RE.match(b):
        ta, tb = _without_their_own_names(ta, tb, ca, cb)
    shared = len(ta & tb)
    return shared / min(len(ta), len(tb)) >= min_overlap and shared / max(len(ta), len(tb)) >= MIN_SHARE_OF_LARGER


# -- relations ----------------------------------------------------------------------------
COPY = "copy"
POSSIBLE_COPY = "possible copy"
CONFLICT = "conflict"
DISTINCT = "distinct"


@dataclass(frozen=True)
class Relation:
    kind: str  # copy | possible copy | conflict | distinct
    reasons: tuple[str, ...] = ()

    def describe(self) -> str:
        return self.kind + (f" ({'; '.join(self.reasons)})" if self.reasons else "")


def relate(a: str, b: str, similarity: float | None = None, copy_at: float = 1.0) -> Relation:
    """How two notes relate. Only ``copy`` may be acted on without the user:

    * ``copy``: an exact copy (:func:`mnemara.memory.search.exact.is_exact_copy`);
    * ``possible copy``: worded alike (the same content words) and the claim guard agrees, yet
      not the same text, or the same values in other words (:func:`same_values`): proposed for a
      merge, never merged on its own;
    * ``conflict``: the same subject and the claim guard disagrees, or one only adds a word or
      two of detail (a possible correction): proposed for supersession, flagged in recall;
    * ``distinct``: anything else, notes about different subjects written in one pattern
      included (:func:`mnemara.memory.search.subject.different_subject`).

    ``similarity`` and ``copy_at`` are accepted for the callers that measured one, but a
    similarity never makes a copy."""
    return _relate(a, b)


@lru_cache(maxsize=65536)  # recall meets the same pairs of notes query after query
def _relate(a: str, b: str) -> Relation:
    if is_exact_copy(a, b):
        return Relation(COPY, ("same text",))
    a, b = without_lead_in(a), without_lead_in(b)  # "FYI, ...", "Reminder: ...": an opening that claims nothing
    if is_exact_copy(a, b):
        return Relation(POSSIBLE_COPY, ("the same text after an opening that only announces it",))
    restated = restates(a, b)
    if restated:  # the longer note only adds words that claim nothing: "Keep in mind ...", "..., as agreed"
        return Relation(POSSIBLE_COPY, (restated,))
    if turned_round(a, b):  # "X is owned by A and B" / "B and A own X": one claim, the sentence turned round
        return Relation(POSSIBLE_COPY, ("one claim, the sentence turned round",))
    diffs = claim_differences(a, b)
    if diffs and all(d.startswith(("a word differs", "words differ", "roles swapped")) for d in diffs) \
            and english(a) != english(b):
        # one note in English, the other in another language, and all they differ in is one word: the verb or noun
        # translated ("The Grafana dashboards are served on port 3000" / "Die Grafana-Dashboards laufen auf Port
        # 3000", "quarterly business review" / "revisión trimestral de negocio", round 7), which the claim guard cannot
        # read as one; a merge for the user to judge. Nouns come in another order in another language too ("Le loyer
        # du garage" / "The garage rent", round 8): no swap of roles
        return Relation(POSSIBLE_COPY, ("the same claim in another language?", *diffs))
    if diffs:
        other_subject = different_subject(a, b)
        if other_subject:
            return Relation(DISTINCT, (other_subject, *diffs))
        if may_conflict(a, b):
            if same_values(a, b, diffs):
                return Relation(POSSIBLE_COPY, ("the same values, other words: " + "; ".join(diffs),))
            aside = _adds_an_aside(a, b)
            if aside:
                return Relation(POSSIBLE_COPY, (aside,))
            return Relation(CONFLICT, tuple(diffs))
        return Relation(DISTINCT, tuple(diffs))
    if same_wording(a, b):
        return Relation(POSSIBLE_COPY, ("same wording, not the same text",))
    changed = [t for t in (a, b) if says_changed(t)]
    if changed and not (SPEAKER_RE.match(a) or SPEAKER_RE.match(b)) and may_conflict(a, b) \
            and not different_subject(a, b):
        # no value the guard reads differs ("#sev" / "#major-incidents" are plain words), yet one note says the
        # fact changed on the subject both are about: a possible correction for the user to judge
        return Relation(CONFLICT, (f"one note says the fact changed: {changed[-1][:80]}",))
    if not changed and _gives_the_same_values(a, b) and may_conflict(a, b) and not different_subject(a, b):
        # no claim differs, the notes give the same names or amounts on one subject, and neither says it changed: one
        # fact said in other words ("The office guest Wi-Fi network is called NovaGuest" / "The guest Wi-Fi at the
        # office is named NovaGuest", round 12 of issue 40), a merge for the user to judge
        return Relation(POSSIBLE_COPY, ("the same values in other words",))
    return Relation(DISTINCT)


SPACED_HYPHEN_RE = re.compile(r"\s-\s")  # "August 2027 - renew a few months before": a dash typed as a hyphen


def _adds_an_aside(a: str, b: str) -> str:
    """Why one note is the other with an aside added, or "": the longer note's main clause (before "; ", " — ",
    " - ", ", which ...") restates the shorter note whole, the aside neither negates nor limits, and neither note says
    the fact changed ("My passport expires in August 2027" / "Passport expiration: August 2027 - renew a few months
    before then"; round 12 of issue 40). An aside in brackets is read by the claim guard itself."""
    if says_changed(a) or says_changed(b):
        return ""
    main_a, main_b = (SPACED_HYPHEN_RE.split(main_clause(t), maxsplit=1)[0].strip() for t in (a, b))
    if (main_a == a.strip()) == (main_b == b.strip()) or not main_a or not main_b:
        return ""  # an aside on one side only
    longer, main = (a, main_a) if main_a != a.strip() else (b, main_b)
    aside = claim_of(longer[len(main):])
    if aside.negations or aside.limiters or aside.retired:
        return ""  # "; not on the replicas", " - staging only", "; the old one was archived": it says more of the claim
    inner = relate(main_a, main_b)
    return f"one note adds an aside ({inner.describe()})" if inner.kind in (COPY, POSSIBLE_COPY) else ""


def _gives_the_same_values(a: str, b: str) -> bool:
    ca, cb = claim_of(a), claim_of(b)
    names_a, names_b = ({e for e in c.entities if e not in ABBREVIATIONS} for c in (ca, cb))  # "DB" is a word
    return bool(names_a or ca.numbers) and names_a == names_b and ca.numbers == cb.numbers


# two statements (not chat turns) sharing two subject words or more, half the smaller one's: "The metrics stack is
# Prometheus 2.40 on host mon-1" / "Metrics run on VictoriaMetrics 1.93 on host mon-4" (round 2 of issue 40)
HALF_SHARED = 0.5
# ... for short statements only (four subject words or fewer): two long notes share half their words on many
# another subject ("The incident on 2026-03-14 (INC-7781) came from an expired TLS certificate ..." / "Incident
# INC-4432 was caused by the certificate on the edge proxy expiring ...": golden set recall@1 1.00 -> 0.88)
HALF_SHARED_UP_TO = 4
# words any subject may use: alone they make no shared subject for a note that says it changed
GENERIC_STEMS = frozenset(stem(w) for w in """take use run go get make have do keep put give come morning evening
afternoon night day week month year today time new team""".split())
CHANGED_SHARE = 1 / 3  # of the smaller topic, for two notes one of which says the fact changed


@lru_cache(maxsize=65536)  # as relate: the same pairs come back query after query
def may_conflict(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` may be about the same subject: THE pre-filter of every conflict
    (:func:`relate` says ``conflict`` only past it; dedupe on write, replay, lint, ``rag_query`` and
    recall's newer-note lookup all go through it). Cheap set operations on the cached
    :func:`claim_of`, so a caller that wants only conflicts skips the costly alignment of
    :func:`relate` (:mod:`.subject`) for pairs on other topics. Same subject when:

    * :func:`same_topic` (most content words shared) or :func:`_one_word_swapped`;
    * two short statements (not chat turns, :data:`SPEAKER_RE`) share two subject words or more and
      half the smaller one's (:data:`HALF_SHARED`, :data:`HALF_SHARED_UP_TO`);
    * one note says the fact changed and names no subject at all, only a value in a unit the other
      note uses (:func:`_names_nothing_it_changes`: "We cut it to 7 days");
    * one note words a change ("now", "no longer", "moved to", "est passé à", "jetzt", "ya no")
      and they share a subject word both write with a capital ("OpenVPN was decommissioned") or at least :data:`CHANGED_SHARE` of the smaller subject, words of one family in
      another language counted (:func:`_kin_words`; :func:`subject_of`:
      "The US bucket is logs-us-2" shares no word with "We cut the Datadog log retention"): "Standup is at 9:30
      every morning" / "We moved the daily standup to 10:15" (not for turns of a chat,
      :data:`SPEAKER_RE`).

    (An embedder's cosine as a third way in, at 0.6 with one shared topic word, changed nothing on
    the dev part of bench/data/truth_subjects.json in either direction, so it is not used: a
    similarity says two notes are alike, the claim guard says whether they agree.)
    """
    if same_topic(a, b) or _one_word_swapped(a, b):
        return True
    if SPEAKER_RE.match(a) or SPEAKER_RE.match(b):
        return False  # every rule below reads statements of fact, not the turns of a chat
    ca, cb = claim_of(a), claim_of(b)
    ta, tb = ca.subject, cb.subject
    if (not ta or not tb) and (_names_nothing_it_changes(a, ca, cb) or _names_nothing_it_changes(b, cb, ca)):
        return True
    ta, tb = _without_their_own_names(ta, tb, ca, cb)
    shared = len(ta & tb)
    kin = _kin_words(ta - tb, tb - ta) if shared < 2 else 0
    if not shared + kin:
        return False
    if shared >= 2 and min(len(ta), len(tb)) <= HALF_SHARED_UP_TO and same_topic(a, b, HALF_SHARED):
        return True
    if not (says_changed(a) or says_changed(b) or ca.retired != cb.retired):
        return False
    # a stem both notes write with a capital ("OpenVPN", "Jira", "LaunchDarkly"; in a German note a shared noun is
    # a subject word as strong as a name) and one note saying it changed: the old value retired or replaced
    # ("OpenVPN was decommissioned; everyone connects through Tailscale now")
    if not (ta & tb) - GENERIC_STEMS and not kin:
        return False  # all they share is a verb of any subject or a time of day: "Emma takes bus 22 since October" /
        # "Dad takes lisinopril every morning" (round 12 of issue 40)
    return (shared + kin) / min(len(ta), len(tb)) >= CHANGED_SHARE or bool(ta & tb & ca.capitalised & cb.capitalised)


def _names_nothing_it_changes(change: str, mine: Claim, other: Claim) -> bool:
    """Whether the statement ``change`` (its claim ``mine``) says a fact changed without naming what it is about,
    only a value in a unit the ``other`` claim uses too: "We cut it to 7 days." after "Log retention in Datadog
    is 15 days." (the issue's own example; round 4). Such a note can only be about a subject named elsewhere, so
    it may correct any note giving an amount of days; the user tells which."""
    if mine.subject or not says_changed(change):
        return False
    return bool({u for _v, u in mine.numbers if u} & {u for _v, u in other.numbers if u})


KIN_PREFIX = 5  # letters two words of one family share at least ("hébergeur" / "hébergement")


def _kin_words(xs: frozenset[str], ys: frozenset[str]) -> int:
    """How many words of ``xs`` share their first :data:`KIN_PREFIX` letters with a word of ``ys`` ("valid" /
    "validé" too): one family of words the English stemmer cannot join in another language ("Notre hébergeur
    est OVH" / "Nous avons migré notre hébergement chez Scaleway", "Ansprechpartner" / "Ansprechperson"). Counted
    only when the notes share fewer than two subject words, and it only ever joins two notes one of which says
    the fact changed (round 4 of issue 40)."""
    heads = {y[:KIN_PREFIX] for y in ys if len(y) >= KIN_PREFIX and y.isalpha()}
    return sum(1 for x in xs if len(x) >= KIN_PREFIX and x.isalpha() and x[:KIN_PREFIX] in heads
               or _compound_of(x, ys) or any(_compound_of(y, frozenset({x})) for y in ys))


COMPOUND_HEAD, COMPOUND_WORD = 4, 8  # letters of a head word at least, and of the compound that opens with it


def _compound_of(x: str, ys: frozenset[str]) -> bool:
    """Whether ``x`` opens a long compound of ``ys`` ("Müll" / "Müllabfuhr", "Wasser" / "Wasserhahn"): the German
    way of naming one thing in one word or two (round 8 of issue 40)."""
    return len(x) >= COMPOUND_HEAD and x.isalpha() and any(
        len(y) >= COMPOUND_WORD and y != x and y.startswith(x) and y.isalpha() for y in ys)


def _one_word_swapped(a: str, b: str) -> bool:
    """The same content words in the same order but one ("the build is green" / "red"): the same
    subject however short the notes are, which :func:`same_topic` cannot tell for two-word topics."""
    ca, cb = topic_of(a).content, topic_of(b).content
    return len(ca) == len(cb) >= 2 and sum(x != y for x, y in zip(ca, cb)) == 1


MAX_ADDED_WORDS = 2


# verbs that say where a thing is or what holds it, as "is in" does: "The dashboards are in the observability
# folder" and "The observability folder holds the dashboards" state one fact (round 4 of issue 40; a closed
# class, like the linking verbs of :mod:`.subject`)
PLACE_VERBS = frozenset(stem(w) for w in "hold contain live sit reside keep store locate find host house".split())
# ... and verbs that give a thing its name, as a name before it does: "an S3 bucket called acme-tfstate" / "the
# acme-tfstate S3 bucket" (round 10)
NAMING_VERBS = frozenset(stem(w) for w in "called named".split())
# who every note is about: "The user's yoga class is ..." / "yoga class at ..." adds no detail (round 10)
THE_USER = frozenset({stem("user")})


def added_detail(a: str, b: str) -> str:
    """"one note adds detail: ..." when one note's content words all appear in the other, which adds
    one to :data:`MAX_ADDED_WORDS` of them; "" otherwise. Such a pair is a refinement (often a
    correction), so it is a conflict for the user to resolve, never a copy to archive. A verb of place
    (:data:`PLACE_VERBS`) in a note whose words come in another order is a rewording ("X are in Y" / "Y
    holds X"), no detail; in the same order it is still added ("kept" / "kept in a safe")."""
    return _added_detail(claim_of(a), claim_of(b))


def _added_detail(ca: Claim, cb: Claim) -> str:
    ta, tb = ca.topic, cb.topic
    if not ta or not tb or not (ta < tb or tb < ta) or len(ta ^ tb) > MAX_ADDED_WORDS:
        return ""
    if ta ^ tb <= THE_USER:
        return ""
    if ta ^ tb <= PLACE_VERBS | NAMING_VERBS and _reordered(ca.content, cb.content):
        return ""
    return f"one note adds detail: {', '.join(sorted(ta ^ tb))}"


def _reordered(ca: tuple[str, ...], cb: tuple[str, ...]) -> bool:
    """Whether the words both notes share come in another order in one of them."""
    shared = set(ca) & set(cb)
    return [w for w in ca if w in shared] != [w for w in cb if w in shared]
