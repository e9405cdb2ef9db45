"""Whether two notes make one claim with its parts in another order (issue 40, round 9).

"The payments service is owned by Hana and Diego." and "Diego and Hana own the payments service."
say one thing, as do "The Helios project's code owners are Omar and Keiko." and "Keiko and Omar
are the code owners of the Helios project.". The claim guard reads the names in another order
and calls it a swap of roles; it cannot tell a sentence turned round from roles exchanged ("Alice
is Bob's manager" / "Bob is Alice's manager").

This module rewrites a note the ways English turns a sentence round without changing what it
claims, and calls two notes one claim only when one of the rewritings of the one is, word for word
(stemmed, articles aside, a list of two in either order), one of the rewritings of the other:

* the passive for the active: "<A> is owned by <B>" is "<B> owns <A>";
* either side of a linking verb: "<A> is <B>" is "<B> is <A>", and "<A> make up <B>" is "<B> is <A>"
  (round 10);
* "the <R> of <X>" for "<X>'s <R>".

"Alice is Bob's manager" turned round is "Bob's manager is Alice", never "Bob is Alice's
manager": whose manager it is stays with the genitive, so exchanged roles stay a conflict. Words
of one meaning are read as one ("each" / "every"), and a list of names in one order (round 10:
:data:`~.claim_words.LIST_RE`, the order the restatement test reads lists in). Below the claim
guard: this module reads only :mod:`.claim_words` and :mod:`.tokenize`.
"""
from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from mnemara.memory.search.claim_words import LIST_MEMBER_WORD_RE, LIST_RE, strip_marks
from mnemara.memory.search.tokenize import stem

TOKEN_RE = re.compile(r"[^\W_][\w'’-]*")
ARTICLES = frozenset("the a an".split())
LINKING = frozenset("is are was were".split())
SAME_WORD = {"each": "every"}  # "renewed each October" / "renews every October" (round 10)
MAKE_UP = ("make", "up")  # "<A> make up <B>": <B> is <A> ("Sam, Hana and Rui make up the DBA team")
GENITIVE = "'s"
MAX_TOKENS = 24  # rewritings of a long note are many and it is rarely a restatement turned round


def _tokens(text: str) -> tuple[str, ...]:
    """Case-folded, stemmed tokens without articles; a possessive split off ("project's" -> "project", "'s");
    every linking verb one token; "each" as "every"; a list of names (:data:`~.claim_words.LIST_RE`, "Sam, Hana and
    Rui") and any two joined by "and" ("the API and the web app") in one order."""
    text = strip_marks(unicodedata.normalize("NFKC", text)).replace("’", "'")
    text = LIST_RE.sub(lambda m: " and ".join(sorted(LIST_MEMBER_WORD_RE.findall(m.group(0)))), text)
    out: list[str] = []
    for raw in TOKEN_RE.findall(text.casefold()):
        owner = raw.endswith("'s") or (raw.endswith("s'") and len(raw) > 2)
        word = raw[:-2] if raw.endswith("'s") else raw.rstrip("'")
        if word in ARTICLES:
            continue
        word = SAME_WORD.get(word, word)
        out.append("be" if word in LINKING else (stem(word) if word.isalpha() else word))
        if owner:
            out.append(GENITIVE)
    for n in range(1, len(out) - 1):
        if out[n] == "and" and out[n - 1] > out[n + 1]:
            out[n - 1], out[n + 1] = out[n + 1], out[n - 1]
    return tuple(out)


def _of_as_genitive(words: tuple[str, ...]) -> tuple[str, ...]:
    """ "<R> of <X>" -> "<X> 's <R>" for one "of" whose <R> runs from the start or the linking verb and whose <X>
    runs to the end or to the linking verb ("the code owners of the Helios project")."""
    if words.count("of") != 1:
        return words
    at = words.index("of")
    verb = words.index("be") if "be" in words else -1
    start = verb + 1 if -1 < verb < at else 0
    end = verb if verb > at else len(words)
    role, owner = words[start:at], words[at + 1:end]
    if not role or not owner:
        return words
    return words[:start] + owner + (GENITIVE,) + role + words[end:]


def _turned(words: tuple[str, ...]) -> set[tuple[str, ...]]:
    """The note and its rewritings (module docstring)."""
    out = {words, _of_as_genitive(words)}
    if "be" not in words:
        at = next((n for n in range(1, len(words) - 2) if words[n:n + 2] == MAKE_UP), 0)
        if at:  # "<A> make up <B>" -> "<B> is <A>" (then turned round below: "<A> is <B>")
            out.add(words[at + 2:] + ("be",) + words[:at])
    for form in list(out):
        if form.count("be") != 1:
            continue
        verb = form.index("be")
        left, right = form[:verb], form[verb + 1:]
        if "by" in right and right.index("by") == 1 and left:  # "<A> is owned by <B>" -> "<B> own <A>"
            for end in range(3, len(right) + 1):  # where <B> ends: "... by the landlord every autumn"
                out.add(right[2:end] + (right[0],) + left + right[end:])
        elif left and right:
            out.add(right + ("be",) + left)
    return out


@lru_cache(maxsize=4096)
def turned_round(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` make one claim, one of them turned round (module docstring); not when they are
    worded alike already (that is for the claim guard to read)."""
    ta, tb = _tokens(a), _tokens(b)
    if ta == tb or len(ta) > MAX_TOKENS or len(tb) > MAX_TOKENS:
        return False
    return bool(_turned(ta) & _turned(tb))
