"""Whether one note restates another and only adds words that claim nothing new (issue 40, round 3).

"The staging API key expires in December." and "Keep in mind the staging API key expires in
December." state one fact; so do "Rosa is the release manager." and "Rosa is the release manager,
as agreed in the planning meeting.". Calling them a conflict made recall show an unresolved
conflict between two statements of one fact. A list of lead-in phrases ("FYI", "Reminder:")
cannot tell this: the next note uses another lead-in, another language, or adds its detail at
the end. The test here uses no phrase list (but one: a negated reminder, "Don't forget,", claims no "not"); it
reads *where* the notes differ:

* the words of the shorter note appear in the longer one, all of them and in the same order
  (case, inflection and sentence punctuation aside): the longer note only *inserts* words;
* no inserted stretch carries a claim: no number, negation, limiter ("only", "except"),
  polarity word ("disabled", "closed"), retirement, word of change ("now", "moved") or date of
  one ("since May"), cadence or time unit, day or month, claim-bearing stop word ("up",
  "all", "can") and no conjunction that joins it to the shared words ("Alice" -> "Alice and
  Bob" adds a reviewer);
* an inserted stretch is set off from the shared words (it opens the note, or a separator, ``:``,
  ``,``, ``-``, ``(``, comes before it): a stretch woven into the sentence narrows the claim
  ("approval" / "approval from legal", the trust audit of issue 31), unless what is woven in is
  stop words only ("broken again, per facilities");
* the shorter note says something on its own: two content words or more ("Remember the milk"
  adds a verb to "The milk", which is no statement).

A set-off stretch may name things: "(behind the VPN)", "(used by the QA team)", ", in us-east-1"
add detail to the one claim both notes make (round 4 of issue 40: a restatement that only adds
detail is a possible copy, not a conflict). Nothing is lost by calling it so: the proposal is a
merge that keeps the longer wording, so the detail stays whichever note the user keeps. Until
round 4 a name in an aside counted as a claim, and 2 of 12 restated copies of round 2's blind part
were flagged as conflicts for it.

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
from mnemara.memory.search.claim_words import CONTRACTIONS, EVERY_OTHER_RE, LIMITERS, NEGATIONS, NUMBER_WORDS, POLES, RETIRED, UNITS
from mnemara.memory.search.claim_words import LIST_MEMBER_WORD_RE, LIST_RE, SINCE_WORDS, pronoun_one, strip_marks
from mnemara.memory.search.tokenize import STOPWORDS, stem

# a token as the alignment reads it: what whitespace and list punctuation separate
TOKEN_RE = re.compile(r"[^\s,;()\[\]{}\"“”‘’«»`*]+")
EDGE = ".:!?'"
SEPARATORS = ":,;-–—("
# words that join names into one list: a stretch that starts or ends with one adds a member
CONJUNCTIONS = frozenset("and or nor & et ou und oder y o e ni".split())
MIN_CONTENT_WORDS = 2
# words of scope that, in a set-off aside, restate what the note already says of everything it names ("All services
# log in JSON, for all environments"); inside the sentence they still claim ("all admins" / "some admins")
UNIVERSAL = frozenset("all each every both any".split())
CLAIM_VOCABULARY = frozenset(NEGATIONS | LIMITERS | set(POLES) | RETIRED | CHANGE_WORDS | SINCE_WORDS
                             | set(NUMBER_WORDS) | set(CADENCES) | BARE_UNITS | CALENDAR_WORDS | CONTRACTIONS)
CLAIM_STEMS = frozenset(CLAIM_VOCABULARY | {stem(w) for w in CLAIM_VOCABULARY})
# what opens a relative or comparing clause: ", which is what most of our services expose", ", like most of the
# company", ", same as always", ", as set up in the crontab". Set off at the end of a note, such a clause speaks of
# the thing already named, or of others, and leaves the claim of the shared words as it is: words of scope, order
# and amount ("most", "before", "a few", "last year") say nothing against it there (round 6 of issue 40)
# (and, round 7, what opens a consequence: ", so I should leave the house early" speaks of what the user does about it)
RELATIVE_OPENERS = frozenset("which who whom whose where like as same just similar wie comme como come so".split())
# what still claims in such a clause: a change, a retirement, a negation, a limit, a number, a day or a cadence
# (", which moved to Tuesday", ", which is no longer used", ", like every Friday")
_RELATIVE_CLAIMS = frozenset(NEGATIONS | LIMITERS | RETIRED | CHANGE_WORDS | SINCE_WORDS | set(NUMBER_WORDS)
                             | CALENDAR_WORDS | CONTRACTIONS)
# (a cadence as written only: "yearly" stems to "year", and "last year" says no cadence)
RELATIVE_CLAIM_STEMS = frozenset(_RELATIVE_CLAIMS | {stem(w) for w in _RELATIVE_CLAIMS} | set(CADENCES))


# what opens a clause of its own at the end of a note: ", and the policy renews each October", "- she's always nervous
# in the carrier". Its values are its own subject's, so it adds a fact and leaves the shared claim as it is; only a
# change, a retirement, a negation or a limit in it still speaks against that claim (", and it was retired in May")
CLAUSE_SUBJECTS = frozenset("the its his her their my our your this it she he they".split())
PRONOUNS = frozenset("it it's its she she's he he's they they're".split())
_OWN_CLAUSE_CLAIMS = frozenset(NEGATIONS | LIMITERS | RETIRED | CHANGE_WORDS | SINCE_WORDS | CONTRACTIONS)
OWN_CLAUSE_CLAIM_STEMS = frozenset(_OWN_CLAUSE_CLAIMS | {stem(w) for w in _OWN_CLAUSE_CLAIMS})


def _own_clause(stretch: tuple[Token, ...]) -> bool:
    """Whether a closing aside is a clause with its own subject: "and" and a determiner or a pronoun
    (:data:`CLAUSE_SUBJECTS`), or a pronoun, then two words or more."""
    words = [t.plain for t in stretch]
    if words[0] == "and":
        words = words[1:]
        return len(words) >= 3 and words[0] in CLAUSE_SUBJECTS
    return len(words) >= 3 and words[0] in PRONOUNS


# a reminder that opens a note says no "not" of its claim: "Don't forget, my sister's birthday is on August 19"
# (round 7 of issue 40), "N'oublie pas : ...", "Nicht vergessen: ...", "No olvides que ..."
REMINDER_RE = re.compile(r"(?:please\s+)?(?:(?:don't|dont|do\s+not|never)\s+forget|n'oublie[zs]?\s+pas|nicht\s+vergessen|"
                         r"no\s+olvides|non\s+dimenticare|não\s+esqueça|niet\s+vergeten)(?:\s+(?:that|que|dass|che))?")
# the units a measure is given in ("ten minutes", "5 km"): with its number, part of an added measure
UNIT_STEMS = frozenset(BARE_UNITS | set(UNITS) | {stem(w) for w in BARE_UNITS | set(UNITS)})


@dataclass(frozen=True)
class Token:
    """One token of a note: its folded form, and what the note says around it."""

    key: str  # case-folded, edge punctuation off, plain words stemmed
    plain: str  # case-folded as written, edge punctuation off
    separated: bool  # a separator (":", ",", "-", "(") follows it


@lru_cache(maxsize=4096)
def note_tokens(text: str) -> tuple[Token, ...]:
    """The tokens of ``text`` for the alignment, with whether a separator follows each (the end of a lead-in)."""
    text = strip_marks(unicodedata.normalize("NFKC", text)).replace("’", "'")
    # names listed together say nothing by their order ("Bob and Alice"): one order for the alignment
    text = LIST_RE.sub(lambda m: " and ".join(sorted(LIST_MEMBER_WORD_RE.findall(m.group(0)))), text)
    out: list[Token] = []
    for m in TOKEN_RE.finditer(text):
        raw = m.group(0).strip(EDGE)
        if not any(c.isalnum() for c in raw):  # a dash between words: a separator, no token
            if out and any(c in SEPARATORS for c in m.group(0)):
                out[-1] = Token(out[-1].key, out[-1].plain, True)
            continue
        after = text[m.end():m.end() + 2].lstrip(" ")[:1]
        separated = m.group(0)[-1:] in ":;.!?" or after in SEPARATORS
        plain = raw.casefold()
        out.append(Token(stem(plain) if plain.isalpha() else plain, plain, separated))
    return tuple(out)


def _claims(token: Token, lead_in: bool, last: bool, set_off: bool, aside: bool, relative: bool = False) -> bool:
    """Whether an inserted token says something of the subject (see the module docstring): in a
    lead-in a claim-bearing stop word does not once a separator ends the lead-in ("Heads up,"), nor a
    word of scope in an aside after a separator (:data:`UNIVERSAL`); in a closing ``relative`` clause
    only the words of :data:`RELATIVE_CLAIM_STEMS` and numbers do."""
    parts = [p for p in re.split(r"[-/]", token.plain.replace("'", "")) if p]
    identifier = len(parts) >= 2 and any(p.isalpha() and len(p) >= 2 for p in parts)  # "us-east-1", not "24/7"
    if not identifier and any(any(c.isdigit() for c in p) and not any(c.isalpha() for c in p) for p in parts):
        return True  # a number, a time, a date
    if relative:
        return any(p in RELATIVE_CLAIM_STEMS or stem(p) in RELATIVE_CLAIM_STEMS for p in parts) \
            or any(c in "<>=~%$€£¥" for c in token.plain)
    if all(p.isalpha() for p in parts) and len(parts) >= 2:
        parts = parts[-1:]  # a compound claims by its head: "re-enabled" does, "double-checked" does not (round 11)
    if any(p in CLAIM_STEMS or stem(p) in CLAIM_STEMS for p in parts) and not (token.plain == "on" and not last):
        return True  # "on" before more inserted words is a preposition ("on the shared cluster"), not "switched on"
    if token.plain in CLAIM_STOPWORDS and not (lead_in and set_off) and not (aside and token.plain in UNIVERSAL):
        return True
    return any(c in "<>=~%$€£¥" for c in token.plain)


def _is_amount(token: Token) -> bool:
    """Whether ``token`` is a number: digits ("3.9%", "11:40") or a number word ("ten")."""
    return any(c.isdigit() for c in token.plain) or token.plain in NUMBER_WORDS


# words that bind a measure to the claim as its limit ("approval, within 3 days", "at most 2 hours", "every 5 km")
MEASURE_LIMITS = frozenset("within after before under over by until up every per max min least most than less more "
                           "no only".split())


def _describes_a_thing(stretch: tuple[Token, ...]) -> bool:
    """Whether a closing aside gives its measure to a thing it names ("about ten minutes from our place"): a content
    word besides the measure, and no word that makes the measure a limit (:data:`MEASURE_LIMITS`)."""
    if any(t.plain in MEASURE_LIMITS for t in stretch):
        return False
    return any(t.plain not in STOPWORDS and t.plain.isalpha() and not _in_a_measure(stretch, n)
               for n, t in enumerate(stretch))


def _in_a_measure(stretch: tuple[Token, ...], n: int) -> bool:
    """Whether ``stretch[n]`` is the number or the unit of a measure: a number with a unit after it ("ten
    minutes", "5 km"); a count of things ("2 other streets") is none."""
    token = stretch[n]
    if _is_amount(token):
        return n + 1 < len(stretch) and stretch[n + 1].key in UNIT_STEMS
    return token.key in UNIT_STEMS and n > 0 and _is_amount(stretch[n - 1])


def _only_function_words(stretch: tuple[Token, ...]) -> bool:
    """Whether the part of an inserted stretch before its first separator holds only stop words ("broken
    again, per facilities", "is also on call"): woven in, yet naming nothing the claim could be narrowed to.
    Whether any of them claims ("once", "not", "only") is :func:`_claims`'s to say."""
    for token in stretch:
        if token.plain not in STOPWORDS:
            return False
        if token.separated:
            return True
    return True


def _content(tokens: tuple[Token, ...]) -> int:
    return sum(1 for t in tokens if t.plain not in STOPWORDS and any(c.isalpha() for c in t.plain))


@lru_cache(maxsize=4096)
def restates(a: str, b: str) -> str:
    """"one note restates the other, adding: ..." when the longer of ``a`` and ``b`` holds every word
    of the shorter in order and only inserts words that claim nothing (module docstring); "" otherwise."""
    if len(EVERY_OTHER_RE.findall(a.casefold())) != len(EVERY_OTHER_RE.findall(b.casefold())):
        return ""  # "every week" / "every other week": the inserted word halves the cadence
    ta, tb = note_tokens(a), note_tokens(b)
    short, long = (ta, tb) if len(ta) <= len(tb) else (tb, ta)
    if len(short) == len(long) or _content(short) < MIN_CONTENT_WORDS:
        return ""
    keys_s, keys_l = [t.key for t in short], [t.key for t in long]
    ops = difflib.SequenceMatcher(a=keys_s, b=keys_l, autojunk=False).get_opcodes()
    if any(op not in ("equal", "insert") for op, *_ in ops):
        return ""
    added: list[str] = []
    counts = any(_is_amount(t) for t in short)
    for op, _i1, _i2, j1, j2 in ops:
        if op != "insert":
            continue
        stretch = long[j1:j2]
        lead_in = j1 == 0  # before every shared word: it announces the note ("Keep in mind", "Zur Info:")
        aside = not lead_in and long[j1 - 1].separated  # after a separator: ", for all environments"
        if not lead_in and not aside and not _only_function_words(stretch):
            return ""  # woven into the sentence ("approval" / "approval from legal"): it narrows the claim
        if lead_in and REMINDER_RE.fullmatch(" ".join(t.plain for t in stretch)):
            added.extend(t.plain for t in stretch)
            continue
        if aside and j2 == len(long) and _own_clause(stretch):
            if any(t.key in OWN_CLAUSE_CLAIM_STEMS or t.plain in OWN_CLAUSE_CLAIM_STEMS for t in stretch):
                return ""
            added.extend(t.plain for t in stretch)
            continue
        relative = aside and j2 == len(long) and stretch[0].plain in RELATIVE_OPENERS
        # a closing aside that gives an amount to a note that states none ("..., about ten minutes from our
        # place") adds a measure of its own: no value of the shorter note it could replace (round 7)
        measure = aside and j2 == len(long) and not counts and _describes_a_thing(stretch)
        if any(_claims(t, lead_in, n == len(stretch) - 1, stretch[-1].separated, aside, relative)
               and not (t.plain == "one" and pronoun_one([x.plain for x in long[max(0, j1 + n - 2):j1 + n]]))
               and not (measure and _in_a_measure(stretch, n))
               for n, t in enumerate(stretch)):
            return ""
        if stretch[0].plain in CONJUNCTIONS or stretch[-1].plain in CONJUNCTIONS:
            return ""  # "Alice" / "Alice and Bob": one more member of a list
        added.extend(t.plain for t in stretch)
    return f"one note restates the other, adding: {' '.join(added)}" if added else ""
