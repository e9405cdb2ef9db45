"""Whether two notes written in the same pattern are about *different subjects*.

"The checkout service times out after 30 s" and "The billing service times out
after 45 s" share a pattern and differ in a number, so the claim guard sees a
changed claim. They are not a correction of one another: they name another
service. Calling them a conflict made recall rank the newer one first and leave
out the one the user asked about (issue 31).

The test is about *where* two notes differ. Their words are aligned (identifiers,
paths and numbers stay whole tokens); each stretch where they differ is a
*place*. A correction changes one thing: one place (a value, a word, a name, a
connective), or the same words in another order. Two notes differ in subject
when they differ in at least two places and at least one of them swaps a name
or content word for another (``checkout``/``billing``, ``Alice``/``Bob``,
``db-accounts``/``db-sessions``). Such a pair is *distinct*: both notes stand,
nothing is flagged or proposed.

One exception, because it is how corrections are worded (issue 40): a note that
says the fact changed ("now", "no longer", "moved to", "switched", "est passé à",
"jetzt", "ya no": :data:`CHANGE_WORDS`) is never "another subject" of the note it
changes. (Identifiers that differ only in their digits stay names: "note 9 mentions
otter9" / "note 11 mentions otter11" are two subjects, and so are "pg-main-01" /
"pg-main-02" unless the newer says it changed.)
"""
from __future__ import annotations

import difflib
import re
import unicodedata
from collections import Counter

from mnemara.memory.search.claim_words import CHANGE_WORDS, CLAIM_STEMS, NUMBER_WORDS, UNITS, without_filler
from mnemara.memory.search.tokenize import STOPWORDS, stem

TOKEN_RE = re.compile(r"[^\s,;()\[\]{}\"“”‘’«»`*]+")
EDGE = ".:!?'"


def words(text: str) -> list[str]:
    """The note's tokens for alignment: case-folded, sentence punctuation off the edges, plain words
    stemmed; identifiers, paths and numbers whole."""
    out = []
    for raw in TOKEN_RE.findall(without_filler(unicodedata.normalize("NFKC", text))):
        tok = raw.strip(EDGE).casefold()
        if not tok:
            continue
        out.append(stem(tok) if tok.isalpha() else tok)
    return out


def _is_name(token: str) -> bool:
    """A token that names something: not a stop word, claim word, unit or number."""
    if not any(c.isalpha() for c in token):
        return False
    if token.isalpha():
        return token not in STOPWORDS and token not in CLAIM_STEMS and token not in UNITS \
            and token not in NUMBER_WORDS
    return not re.fullmatch(r"[\d.,:/%+-]*[a-z]{0,3}", token)  # "30s", "5%", "2x" are values


def different_subject(a: str, b: str) -> str:
    """Why ``a`` and ``b`` are about different subjects, or "" when they may be one fact corrected."""
    wa, wb = words(a), words(b)
    if Counter(wa) == Counter(wb):
        return ""  # the same words in another order: a correction of the order
    if says_changed(a) or says_changed(b):
        return ""  # "is now", "moved to", "est passé à": the same subject, changed
    places = [(wa[i1:i2], wb[j1:j2]) for op, i1, i2, j1, j2 in
              difflib.SequenceMatcher(a=wa, b=wb, autojunk=False).get_opcodes() if op != "equal"]
    if len(places) < 2:
        return ""
    swapped = [(x, y) for x, y in places if any(map(_is_name, x)) and any(map(_is_name, y))]
    if not swapped:
        return ""
    x, y = swapped[0]
    return f"different subjects: {' '.join(x)} vs {' '.join(y)} (and {len(places) - 1} more difference" \
           f"{'s' if len(places) > 2 else ''})"


def says_changed(text: str) -> bool:
    """Whether ``text`` words a change ("is now", "no longer", "moved to", "jetzt", "ya no"): one of
    :data:`CHANGE_WORDS`, as written (case-folded, not stemmed: "moved" counts, "removed" does not)."""
    return any(w in CHANGE_WORDS for w in re.findall(r"[^\W\d_]+", unicodedata.normalize("NFKC", text).casefold()))

