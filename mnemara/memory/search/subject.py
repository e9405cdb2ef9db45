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
when they differ in at least two places and at least one of them swaps what they
are about: a name or content word for another (``checkout``/``billing``, ``Alice``/``Bob``,
``db-accounts``/``db-sessions``), or a number that labels a thing ("Tier 1 support"),
with a content word both share after it, or none before it (round 2 of issue 40: a swap after every shared
content word is the *value* of one subject: "The primary DB is pg-main-01 ..." / "The
primary DB is pg-main-02 ..."). Such a pair is *distinct*: both notes stand, nothing is
flagged or proposed.

One exception, because it is how corrections are worded (issue 40): a note that
says the fact changed ("now", "no longer", "moved to", "switched", "est passé à",
"jetzt", "ya no": :data:`CHANGE_WORDS`) is never "another subject" of the note it
changes, unless both notes say it in the same words: then the word is part of their one pattern
("... batteries were last changed in June"). ("note 9 mentions otter9" / "note 11 mentions otter11" are two subjects: "note 9" is
a label.)
"""
from __future__ import annotations

import difflib
import re
import unicodedata
from collections import Counter
from functools import lru_cache
from typing import Sequence

from mnemara.memory.search.claim_words import CALENDAR_GIVEN_NAMES, CALENDAR_STEMS, CHANGE_PHRASE_RE, CHANGE_WORDS, CLAIM_STEMS, NUMBER_WORDS, RETIRED, RETIRED_AS, SINCE_RE, SPEAKER_RE, STATEMENT_CHANGE_WORDS, UNITS, calendar_values, with_aliases
from mnemara.memory.search.tokenize import ABBREVIATIONS, STOPWORDS, stem

# linking verbs of English, French, German, Spanish, Italian and Portuguese: what a note says before one is
# what it is about ("The staging port is 8443"), what it says after one is what it says of it
COPULAS = frozenset("""is are was were has have had est sont était a ont ist sind war hat haben es son está están
tiene è sono ha hanno é são tem""".split())
FRENCH_WORDS = frozenset("le la les un une des du au aux est et".split())
TOKEN_RE = re.compile(r"[^\s,;()\[\]{}\"“”‘’«»`*]+")
EDGE = ".:!?'"


@lru_cache(maxsize=16384)
def words(text: str) -> tuple[str, ...]:
    """The note's tokens for alignment: case-folded, sentence punctuation off the edges, plain words
    stemmed, short forms spelled out; identifiers, paths and numbers whole."""
    out = []
    for raw in TOKEN_RE.findall(with_aliases(unicodedata.normalize("NFKC", text))):
        tok = raw.strip(EDGE).casefold()
        if not tok:
            continue
        tok = ABBREVIATIONS.get(tok, tok)  # "DB" is "database": no swap of subjects (round 8 of issue 40)
        out.append(stem(tok) if tok.isalpha() else tok)
    return tuple(out)


# the stem of a claim word that, as written, is a noun naming whose a thing is: "work" of "works" / "fails" names
# the "work laptop" against the "personal laptop" (round 7 of issue 40)
NAMING_CLAIM_STEMS = frozenset({"work"})
# words that say a thing comes round again: "a new episode every other Friday" is no new value
RECURRING = frozenset("every each alternate weekly monthly nightly daily fortnightly biweekly".split())


# shared words that name something, before a place, past which that place is a value however the notes go on
NAMED_BEFORE = 4


AMOUNT_TOKEN_RE = re.compile(r"[$€£¥₹]?\d[\d.,:]*(?:%|[^\W\d_]{0,3})?")  # "£612", "24p", "8443", "30s", "5%"


def _is_amount(token: str) -> bool:
    return bool(AMOUNT_TOKEN_RE.fullmatch(token))


def _is_name(token: str) -> bool:
    """A token that names something: not a stop word, claim word, unit, number, day or month (when a thing
    happens is a value of its subject; "Marco" is a name, though Portuguese may write "marco" for March)."""
    if not any(c.isalpha() for c in token):
        return False
    if token.isalpha():
        return token not in STOPWORDS and (token not in CLAIM_STEMS or token in NAMING_CLAIM_STEMS) and token not in UNITS \
            and token not in NUMBER_WORDS and (token not in CALENDAR_STEMS or token in CALENDAR_GIVEN_NAMES)
    return not re.fullmatch(r"[\d.,:/%+-]*[a-z]{0,3}", token)  # "30s", "5%", "2x" are values


def different_subject(a: str, b: str) -> str:
    """Why ``a`` and ``b`` are about different subjects, or "" when they may be one fact corrected."""
    wa, wb = list(words(a)), list(words(b))
    if Counter(wa) == Counter(wb):
        return ""  # the same words in another order: a correction of the order
    chat = bool(SPEAKER_RE.match(a) or SPEAKER_RE.match(b))
    if change_marks(a, statement=not chat) != change_marks(b, statement=not chat) or retires_one(a, b):
        return ""  # "is now", "moved to", "est passé à", "Redshift was retired": the same subject, changed
    # (a change word both notes write is part of their one pattern, no change of either: "The front door lock
    # batteries were last changed in February" / "The garage lock batteries were last changed in June", round 7)
    if not chat and _names_reordered(list(words(main_clause(a))), list(words(main_clause(b)))):
        return ""  # not one pattern: "Payments logging: WARN only." says "The default log level in the payment ..."
    ops = difflib.SequenceMatcher(a=wa, b=wb, autojunk=False).get_opcodes()
    places = [(n, wa[i1:i2], wb[j1:j2]) for n, (op, i1, i2, j1, j2) in enumerate(ops) if op != "equal"]
    if len(places) < 2:
        return ""
    # a turn of a chat is no statement of a subject and its value: any swap of names makes two subjects
    swapped = [(x, y) for n, x, y in places if (any(map(_is_name, x)) and any(map(_is_name, y)) if chat
                                                 else _owner_added(n, x, y, ops, wa)
                                                 or _names_the_subject(n, x, y, ops, wa)
                                                 and not _who_of_a_named_thing(n, ops, a, b, wa, wb))]
    swapped = [(x, y) for x, y in swapped if not _one_name_in_both(x, y)]
    if not swapped:
        return ""
    x, y = swapped[0]
    return f"different subjects: {' '.join(x) or '(nothing)'} vs {' '.join(y) or '(nothing)'} (and {len(places) - 1} more difference" \
           f"{'s' if len(places) > 2 else ''})"


def _one_name_in_both(x: list[str], y: list[str]) -> bool:
    """Whether both sides of a place name one thing, possessive aside: "Emma's bedtime is 8 pm" / "Since she turned
    nine, Emma goes to bed at 8:30" differ around "Emma", not in who (round 7 of issue 40)."""
    def named(stretch: list[str]) -> set[str]:
        return {re.sub(r"'s?$", "", t) for t in stretch if _is_name(t)}

    return bool(named(x) & named(y))


# where a note's main clause ends and an aside begins: ", which is a pain because ...", " — the paperwork is ..."
ASIDE_START_RE = re.compile(r",\s*(?:which|because|since|so|as|though|although)\b|\s[—–]\s|;")


def main_clause(text: str) -> str:
    """``text`` up to its first aside (:data:`ASIDE_START_RE`): "Leo's school pickup is at 2:50 at the gym entrance,
    which is a pain because it's the opposite end of the parking lot from Ava's" says its pattern before the comma;
    Ava named after it is no reordering of "Ava's school pickup is at 3:05" (round 8 of issue 40)."""
    m = ASIDE_START_RE.search(text)
    return text[:m.start()] if m and m.start() > 0 else text


def _names_reordered(wa: list[str], wb: list[str]) -> bool:
    """Whether the words that name something, shared by both notes, come in another order in one of them: the
    notes are not written in one pattern, so where they differ says nothing of two subjects (round 6 of issue
    40: "The default log level in the payment service is INFO" / "Payments logging: WARN only" read as "the
    default" against "payment")."""
    shared = {t for t in wa if _is_name(t)} & {t for t in wb if _is_name(t)}
    order_a = list(dict.fromkeys(t for t in wa if t in shared))
    order_b = list(dict.fromkeys(t for t in wb if t in shared))
    return len(shared) >= 2 and order_a != order_b


OWNERS = frozenset("my our your his her their".split())
POSSESSIVE_RE = re.compile(r"[^\W\d_][\w-]*'s?")  # "wife's", "the team's", "the twins'"


def _owner_added(n: int, x: list[str], y: list[str], ops: Sequence[tuple[str, int, int, int, int]],
                 wa: list[str]) -> bool:
    """Whether the place ``n`` gives one note an owner the other lacks, right before a word both name: "My
    passport expires in October" / "My wife's passport expires in February" are two passports (round 5 of
    issue 40), as "Ana's laptop" / "Ben's laptop" are; a swap of values after it keeps its one subject."""
    added = x or y
    if (x and y) or len(added) != 1 or not POSSESSIVE_RE.fullmatch(added[0]) or added[0].endswith("s's"):
        return False
    before, after = (ops[n - 1] if n else None), (ops[n + 1] if n + 1 < len(ops) else None)
    # after a possessive both notes share ("my", "our"): "the team's budget" may be what "the budget" meant
    return before is not None and before[0] == "equal" and wa[before[2] - 1] in OWNERS \
        and after is not None and after[0] == "equal" and _is_name(wa[after[1]])


def _names_the_subject(n: int, x: list[str], y: list[str], ops: Sequence[tuple[str, int, int, int, int]],
                       wa: list[str]) -> bool:
    """Whether the place ``n`` of the alignment ``ops`` (``x`` in one note, ``y`` in the other) swaps
    what the notes are *about*. When both notes share a linking verb (:data:`COPULAS`: "is", "has",
    "est", "ist", "è"...), what comes before it is what they are about: a swap there ("The staging
    port is" / "The prod port is") names another subject, one after it ("... is pool-a with 4
    hosts" / "... is pool-c with 9 hosts") is another value. Without one: a name or content word for another ("staging" / "prod"), or a number
    that labels a thing ("Tier 1 support" / "Tier 2 support": a number between two content words),
    with a content word both notes share after it ("... port is", "... support answers") or none
    before it ("pg-main-01 has 64 GB" / "pg-main-02 has 128 GB"). A swap after every shared content
    word is the value the notes give their one subject: "The release
    branch is release-4.2, frozen on Friday" / "Release branch is release-4.3 and it freezes on
    Tuesday", "The primary DB is pg-main-01" / "... pg-main-02" correct one another."""
    _op, i1, i2, _j1, _j2 = ops[n]
    # (the French "a" only in a French note: the English article is no verb, "... at £548 a year"; round 12)
    copulas = COPULAS if FRENCH_WORDS & set(wa) else COPULAS - {"a"}
    verb = next((op_i for op_i, (op, a1, a2, _b1, _b2) in enumerate(ops)
                 if op == "equal" and any(t in copulas for t in wa[a1:a2])), None)
    if verb is not None and verb != n:
        return n < verb and (any(map(_is_name, x)) and any(map(_is_name, y)) or _labels(x, y, i1, i2, wa, True)
                             or _days_that_name(x, y))
    if not (_labels(x, y, i1, i2, wa) or (any(map(_is_name, x)) and any(map(_is_name, y)))):
        return False
    if any(t in COPULAS for t in x + y):
        return False  # the swap holds one note's linking verb: it changes what is said of the subject
    if any(map(_is_amount, x)) and any(map(_is_amount, y)) and not _labels(x, y, i1, i2, wa):
        # a place that gives an amount on both sides is a value, its names with it: "... with Admiral for £612 a year"
        # / "... with Direct Line at £548 a year" (round 12 of issue 40)
        return False
    if n and sum(_is_name(t) for op, a1, a2, _b1, _b2 in ops[:n] if op == "equal" for t in wa[a1:a2]) >= NAMED_BEFORE:
        # the notes name their subject word for word before they part: "The auth service reads its signing secret
        # from env var JWT_SECRET_KEY" / "... from env var AUTH_SIGNING_KEY" give one secret two values (round 12)
        return False
    def shared(stretch: Sequence[tuple[str, int, int, int, int]]) -> bool:
        return any(op == "equal" and any(map(_is_name, wa[a1:a2])) for op, a1, a2, _b1, _b2 in stretch)

    return shared(ops[n + 1:]) or not shared(ops[:n])


SECOND_WORD_RE = re.compile(r"\s*[^\W\d_][\w'-]*\s+([A-Z][\w-]*)")
NAME_RE = re.compile(r"(?<![.!?:]\s)(?<!^)\b[A-Z][a-z][\w-]*")  # "Berlin", not a sentence's first word nor "GB"


def _who_of_a_named_thing(n: int, ops: Sequence[tuple[str, int, int, int, int]], a: str, b: str,
                          wa: list[str], wb: list[str]) -> bool:
    """Whether the place ``n`` is the one word each note opens with, and what follows it names a thing both notes
    name ("Kim runs the Berlin office with a budget of 40k" / "Tobias runs the Berlin office with a budget of
    55k"): the note is about the Berlin office, and who runs it is one of its values (round 4 of issue 40). Two
    people in one pattern about nothing both name ("Kim earns 40k" / "Tobias earns 55k"), and two notes with a
    linking verb ("Kim is the Berlin lead"), stay two subjects. ``wa`` / ``wb`` are the notes' :func:`words`."""
    op, i1, i2, j1, j2 = ops[n]
    if op != "replace" or i1 != 0 or j1 != 0 or i2 != 1 or j2 != 1:
        return False
    # with a linking verb what comes before it is the subject ("pg-main-01 has 64 GB" / "pg-main-02 has 128 GB");
    # the French "a" aside, as it is the English article as often
    if not (wa[0].isalpha() and wb[0].isalpha()) or any(t in COPULAS and t != "a" for t in wa + wb):
        return False
    shared = {m.group(0).casefold() for m in NAME_RE.finditer(a)} & {m.group(0).casefold() for m in NAME_RE.finditer(b)}
    # the opening word right before the name says which of it ("Staging Redis runs on port 6380" / "Production Redis
    # runs on port 6379": two servers, round 12 of issue 40), where a doer is followed by what it does
    qualified = all((m := SECOND_WORD_RE.match(t)) is not None and m.group(1).casefold() in shared for t in (a, b))
    return bool(shared) and not qualified


def _labels(x: list[str], y: list[str], i1: int, i2: int, wa: list[str], before_verb: bool = False) -> bool:
    """Whether ``x``/``y`` (at ``wa[i1:i2]``) are numbers (or letters, :func:`_letter`) that label a thing: between two content words, or
    (``before_verb``: before the linking verb both notes share, in what they are about) right after one:
    "Version 2 of the API is ..." / "Version 3 of the API is ..." name two versions."""
    return bool(x and y) and all(t.isdigit() or _letter(t, before_verb) for t in x + y) and 0 < i1 \
        and _is_name(wa[i1 - 1]) and (before_verb or i2 < len(wa) and _is_name(wa[i2]))


def _days_that_name(x: list[str], y: list[str]) -> bool:
    """Whether ``x``/``y``, before the linking verb both notes share, are days or months only, and other ones: they
    name which of a recurring thing the note is about ("The Monday team standup is in room Tulip" / "The Friday team
    standup is in room Birch", "Monday gym session is legs" / "Thursday gym session is upper body": two standups,
    two sessions; round 9 of issue 40). After the verb a day is a value ("Standup is on Mondays" / "on Tuesdays"),
    and a note that differs in the day alone has no second place, so stays one subject corrected."""
    return bool(x and y) and all(calendar_values(t) for t in x + y) \
        and calendar_values(" ".join(x)) != calendar_values(" ".join(y))


def _letter(token: str, before_verb: bool) -> bool:
    """A letter that labels a thing before the linking verb: "Allotment bed A is ..." / "Allotment bed B is ..."
    name two beds (round 8 of issue 40), as "Tier 1" / "Tier 2" name two tiers."""
    return before_verb and len(token) == 1 and token.isalpha()


def says_changed(text: str, statement: bool = True) -> bool:
    """Whether ``text`` words a change ("is now", "no longer", "moved to", "jetzt", "ya no"): one of
    :data:`CHANGE_WORDS`, as written (case-folded, not stemmed: "moved" counts, "removed" does not), or
    dates when it took effect ("Since March", "As of June", "seit Mai": :data:`SINCE_RE`; not with
    ``statement=False``, as for the turns of a chat, where "since Friday" says how long, not what changed, and
    "new", "went" and the phrases of :data:`CHANGE_PHRASE_RE` are every other word)."""
    return bool(change_marks(text, statement))


def change_marks(text: str, statement: bool = True) -> frozenset[str]:
    """The words by which ``text`` says a change (see :func:`says_changed`), case-folded; a phrase of
    :data:`CHANGE_PHRASE_RE` as written, and a dated change as "since"."""
    text = unicodedata.normalize("NFKC", text)
    vocabulary = CHANGE_WORDS | STATEMENT_CHANGE_WORDS if statement else CHANGE_WORDS
    found = re.findall(r"[^\W\d_]+", text.casefold())
    marks = {w for n, w in enumerate(found) if w in vocabulary and not _no_change_here(found, n)}
    if statement:
        marks |= {" ".join(m.group(0).casefold().split()) for m in CHANGE_PHRASE_RE.finditer(text)}
        marks |= {"since"} if SINCE_RE.search(text) else set()
    return frozenset(marks)


def _no_change_here(found: list[str], n: int) -> bool:
    """Whether the change word ``found[n]`` says no change where it stands (round 6 of issue 40): "A new mobile
    release goes out on alternate Wednesdays" opens with a kind of thing, not a thing that is new; "Hotfix
    branches are cut from the latest release tag" makes a branch ("cut from ... to ..." still cuts a value)."""
    word = found[n]
    if word == "new":
        # ... nor "releases a new episode every other Friday": a thing made again and again (round 8)
        return n >= 1 and found[n - 1] in ("a", "an") and (n == 1 or bool(set(found) & RECURRING))
    if word == "cut":
        return found[n + 1:n + 2] == ["from"] and "to" not in found[n + 2:]
    if word == "longer":  # "no longer", "not any longer" say it; "flights longer than three hours" does not (round 12)
        return found[n + 1:n + 2] == ["than"] or not (n and found[n - 1] in ("no", "any"))
    return False



def retires_one(a: str, b: str) -> bool:
    """Whether one of ``a`` and ``b`` says something was retired and the other does not ("The data warehouse
    is Redshift" / "Analytics queries go to Snowflake these days; Redshift was retired"). Two notes that
    both say so ("Staging logs are deleted after 7 days" / "Prod logs are deleted after 30 days") do not."""
    def retired(text: str) -> set[str]:
        return {RETIRED_AS.get(w, w) for w in re.findall(r"[^\W\d_]+", unicodedata.normalize("NFKC", text).casefold())
                if w in RETIRED}

    return retired(a) != retired(b)
