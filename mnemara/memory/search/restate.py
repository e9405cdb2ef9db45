"""Whether one note restates another and only adds words that claim nothing new (issue 40, round 3).

"The staging API key expires in December." and "Keep in mind the staging API key expires in
December." state one fact; so do "Rosa is the release manager." and "Rosa is the release manager,
as agreed in the planning meeting.". Calling them a conflict made recall show an unresolved
conflict between two statements of one fact. A list of lead-in phrases ("FYI", "Reminder:")
cannot tell this: the next note uses another lead-in, another language, or adds its detail at
the end. The test here uses no phrase list; it reads *where* the notes differ:

* the words of the shorter note appear in the longer one, all of them and in the same order
  (case, inflection and sentence punctuation aside): the longer note only *inserts* words;
* no inserted stretch carries a claim: no number, negation, limiter ("only", "except"),
  polarity word ("disabled", "closed"), retirement, word of change ("now", "moved") or date of
  one ("since May"), cadence or time unit, day or month, claim-bearing stop word ("up",
  "all", "can") and no conjunction that joins it to the shared words ("Alice" -> "Alice and
  Bob" adds a reviewer);
* an inserted stretch names nothing (no capitalised word, acronym or identifier: "(in EU)"
  narrows a claim, "in us-east-1" places it), unless it opens the note and a separator (``:``,
  ``,``, ``-``) ends it: a lead-in ("Zur Info:", "Heads up,") announces the note and claims
  nothing of its subject;
* the shorter note says something on its own: two content words or more ("Remember the milk"
  adds a verb to "The milk", which is no statement).

Such a pair is a *possible copy* (:func:`mnemara.memory.search.similarity.relate`): proposed for
a merge that keeps the longer wording, never merged without the user, and never flagged as a
conflict. Below the claim guard: this module reads only :mod:`.claim_words` and :mod:`.tokenize`.
"""
from __future__ import annotations

import difflib
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from mnemara.memory.search.claim_words import BARE_UNITS, CADENCES, CALENDAR_WORDS, CHANGE_WORDS, CLAIM_STOPWORDS
from mnemara.memory.search.claim_words import CONTRACTIONS, LIMITERS, NEGATIONS, NUMBER_WORDS, POLES, RETIRED
from mnemara.memory.search.claim_words import LIST_RE, SINCE_WORDS, strip_marks
from mnemara.memory.search.tokenize import STOPWORDS, stem

# a token as the alignment reads it: what whitespace and list punctuation separate
TOKEN_RE = re.compile(r"[^\s,;()\[\]{}\"“”‘’«»`*]+")
EDGE = ".:!?'"
SEPARATORS = ":,;-–—("
# words that join names into one list: a stretch that starts or ends with one adds a member
CONJUNCTIONS = frozenset("and or nor & et ou und oder y o e ni".split())
MIN_CONTENT_WORDS = 2
CLAIM_VOCABULARY = frozenset(NEGATIONS | LIMITERS | set(POLES) | RETIRED | CHANGE_WORDS | SINCE_WORDS
                             | set(NUMBER_WORDS) | set(CADENCES) | BARE_UNITS | CALENDAR_WORDS | CONTRACTIONS)
CLAIM_STEMS = frozenset(CLAIM_VOCABULARY | {stem(w) for w in CLAIM_VOCABULARY})


@dataclass(frozen=True)
class Token:
    """One token of a note: its folded form, and what the note says around it."""

    key: str  # case-folded, edge punctuation off, plain words stemmed
    plain: str  # case-folded as written, edge punctuation off
    named: bool  # a capitalised word not opening a sentence, an acronym or an identifier
    separated: bool  # a separator (":", ",", "-", "(") follows it


@lru_cache(maxsize=4096)
def note_tokens(text: str) -> tuple[Token, ...]:
    """The tokens of ``text`` for the alignment, with whether each names something and ends a lead-in."""
    text = strip_marks(unicodedata.normalize("NFKC", text)).replace("’", "'")
    # names listed together say nothing by their order ("Bob and Alice"): one order for the alignment
    text = LIST_RE.sub(lambda m: " and ".join(sorted(re.findall(r"[A-Z][\w-]*", m.group(0)))), text)
    out: list[Token] = []
    for m in TOKEN_RE.finditer(text):
        raw = m.group(0).strip(EDGE)
        if not any(c.isalnum() for c in raw):  # a dash between words: a separator, no token
            if out and any(c in SEPARATORS for c in m.group(0)):
                out[-1] = Token(out[-1].key, out[-1].plain, out[-1].named, True)
            continue
        after = text[m.end():m.end() + 2].lstrip(" ")[:1]
        separated = m.group(0)[-1:] in ":;.!?" or after in SEPARATORS
        plain = raw.casefold()
        before = text[:m.start()].rstrip()
        initial = not before or before[-1] in ".!?:\n-*#"
        named = (raw[:1].isupper() and not initial and plain not in STOPWORDS) or (raw.isupper() and len(raw) >= 2) \
            or (any(c.isdigit() for c in raw) and any(c.isalpha() for c in raw)) or "_" in raw
        out.append(Token(stem(plain) if plain.isalpha() else plain, plain, named, separated))
    return tuple(out)


def _claims(token: Token, lead_in: bool, last: bool, set_off: bool) -> bool:
    """Whether an inserted token says something of the subject (see the module docstring): in a
    lead-in a name does not ("Zur Info:", "FYI"), nor a claim-bearing stop word once a separator
    ends the lead-in ("Heads up,")."""
    parts = [p for p in re.split(r"[-/]", token.plain.replace("'", "")) if p]
    if any(any(c.isdigit() for c in p) and not any(c.isalpha() for c in p) for p in parts):
        return True  # a number, a time, a date
    if any(p in CLAIM_STEMS or stem(p) in CLAIM_STEMS for p in parts) and not (token.plain == "on" and not last):
        return True  # "on" before more inserted words is a preposition ("on the shared cluster"), not "switched on"
    if (token.named and not lead_in) or (token.plain in CLAIM_STOPWORDS and not (lead_in and set_off)):
        return True
    return any(c in "<>=~%$€£¥" for c in token.plain)


def _content(tokens: tuple[Token, ...]) -> int:
    return sum(1 for t in tokens if t.plain not in STOPWORDS and any(c.isalpha() for c in t.plain))


@lru_cache(maxsize=4096)
def restates(a: str, b: str) -> str:
    """"one note restates the other, adding: ..." when the longer of ``a`` and ``b`` holds every word
    of the shorter in order and only inserts words that claim nothing (module docstring); "" otherwise."""
    ta, tb = note_tokens(a), note_tokens(b)
    short, long = (ta, tb) if len(ta) <= len(tb) else (tb, ta)
    if len(short) == len(long) or _content(short) < MIN_CONTENT_WORDS:
        return ""
    keys_s, keys_l = [t.key for t in short], [t.key for t in long]
    ops = difflib.SequenceMatcher(a=keys_s, b=keys_l, autojunk=False).get_opcodes()
    if any(op not in ("equal", "insert") for op, *_ in ops):
        return ""
    added: list[str] = []
    for op, _i1, _i2, j1, j2 in ops:
        if op != "insert":
            continue
        stretch = long[j1:j2]
        if j1 > 0 and not long[j1 - 1].separated:
            return ""  # woven into the sentence ("approval" / "approval from legal"): it narrows the claim
        lead_in = j1 == 0  # before every shared word: it announces the note ("Keep in mind", "Zur Info:")
        if any(_claims(t, lead_in, n == len(stretch) - 1, stretch[-1].separated) for n, t in enumerate(stretch)):
            return ""
        if stretch[0].plain in CONJUNCTIONS or stretch[-1].plain in CONJUNCTIONS:
            return ""  # "Alice" / "Alice and Bob": one more member of a list
        added.extend(t.plain for t in stretch)
    return f"one note restates the other, adding: {' '.join(added)}" if added else ""
