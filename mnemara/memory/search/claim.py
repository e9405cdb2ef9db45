"""What one note claims, read once per text: the values, negations, polarity, names and subject the claim guard
(:mod:`.similarity`) compares between two notes.

:func:`claim_of` extracts a :class:`Claim` (cached per text): the numbers as written with their units, signs and
comparisons, dates spelled one way (:func:`canonical_dates`), the negations, limiters and polarity words (a
switch's "on" / "off" only where they name its state), what the note says was retired, its names and identifiers
in order, its content words, its topic (asides that claim nothing left out) and its *subject* (the topic less the
values it gives: :func:`subject_of`), the days and months it names, and the words it writes as names
(:func:`names_in`). Nothing here compares two notes; that is :mod:`.similarity`'s job.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache

from mnemara.memory.search.claim_words import BARE_UNITS, CADENCES, CALENDAR_GIVEN_NAMES, CALENDAR_STEMS, CLAIM_STEMS
from mnemara.memory.search.claim_words import CLAIM_STOPWORDS, CLAIM_WORDS, CONTRACTIONS, LIMITERS, LIST_MEMBER_WORD_RE, LIST_RE
from mnemara.memory.search.claim_words import EVERY_OTHER_RE, EVERY_OTHER_UNITS, MARKS_RE
from mnemara.memory.search.claim_words import NEGATIONS, NON_SUBJECT, PORTUGUESE_RE, SPANISH_RE, NON_SUBJECT_WORDS, NUMBER_WORDS, PASSIVE_GET_RE, POLES, RETIRED
from mnemara.memory.search.claim_words import RETIRED_AS
from mnemara.memory.search.claim_words import SPEAKER_RE, UNITS
from mnemara.memory.search.claim_words import calendar_values, pronoun_one, with_aliases
from mnemara.memory.search.tokenize import STOPWORDS, stem, tokens

# a word of a claim; an identifier stays one word ("ENABLE_SHADOW_WRITES" says nothing about "enable")
WORD_RE = re.compile(r"\w+(?:['’]\w+)?", re.UNICODE)


NUMBER_RE = re.compile(r"\d+(?:[.,:/]\d+)*")  # "03/05/2024" is one value: not "05/03/2024"
# a sign or a comparison written right before a number: "-5", "> 500", "<= 2", "~30"
BOUND_RE = re.compile(r"(?:(?<![\w.,:])([-+])|(<=|>=|[<>=~≈]))\s*$")
BOUNDS = {"≤": "<=", "≥": ">=", "≈": "~", "−": "-"}
CURRENCIES = frozenset("$€£¥₹₽₩₺₪฿")
THOUSANDS_RE = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?")
ASIDE_RE = re.compile(r"\s*\(([^()]*)\)")


MONTHS = {m: n for n, names in enumerate((
    "january jan janvier januar enero", "february feb février fevrier februar febrero",
    "march mar mars märz marz marzo", "april apr avril abril", "may mai mayo", "june jun juin juni junio",
    "july jul juillet juli julio", "august aug août aout agosto", "september sep sept septembre septiembre",
    "october oct octobre oktober octubre", "november nov novembre noviembre",
    "december dec décembre decembre dezember diciembre"), 1) for m in names.split()}
_MONTH_RE = "|".join(sorted(map(re.escape, MONTHS), key=len, reverse=True))
_ORD = r"(?:st|nd|rd|th|er|\.)?"
DAY_MONTH_RE = re.compile(rf"\b(\d{{1,2}}){_ORD}\s+(?:of\s+|de\s+)?({_MONTH_RE})\.?(?:,?\s+((?:19|20)\d\d))?\b", re.I)
MONTH_DAY_RE = re.compile(rf"\b({_MONTH_RE})\.?\s+(\d{{1,2}}){_ORD}(?:,?\s+((?:19|20)\d\d))?\b", re.I)
ISO_DATE_RE = re.compile(r"\b((?:19|20)\d\d)-(\d{1,2})-(\d{1,2})\b")
# "15/04", "4/15", "15/04/2026"; never "24/7" (one digit after the slash) nor part of "1/2/3" or "3.5/10"
DAY_FIRST_RE = re.compile(r"(?<![\d/.:])(\d{1,2})/(\d{2})(?:/((?:19|20)\d\d))?(?![\d/:]|\.\d)")


def canonical_dates(text: str) -> str:
    """Dates spelled one way, ``MM/DD`` (``MM/DD/YYYY`` with a year), so the claim guard compares the
    day and not its spelling: "15/04", "15 April", "April 15th" and "2026-04-15" (with its year) are one
    day; "15/04" is not "October 15". A numeric date that reads both ways ("03/11") stays as written,
    so it never equals a spelled-out day: the pair stays a possible correction for the user to judge."""
    def spelled(month: str, day: str, year: str | None) -> str:
        n, d = MONTHS[month.casefold()], int(day)
        return f"{n:02d}/{d:02d}" + (f"/{year}" if year else "") if 1 <= d <= 31 else f"{day} {month}"

    def numeric(m: re.Match[str]) -> str:
        a, b = int(m.group(1)), int(m.group(2))
        year = f"/{m.group(3)}" if m.group(3) else ""
        if a > 12 and 1 <= b <= 12:
            return f"{b:02d}/{a:02d}{year}"  # day first: "15/04"
        if b > 12 and 1 <= a <= 12 and b <= 31:
            return f"{a:02d}/{b:02d}{year}"  # month first: "04/15"
        return m.group(0)

    text = ISO_DATE_RE.sub(lambda m: f"{int(m.group(2)):02d}/{int(m.group(3)):02d}/{m.group(1)}", text)
    text = DAY_MONTH_RE.sub(lambda m: spelled(m.group(2), m.group(1), m.group(3)), text)
    text = MONTH_DAY_RE.sub(lambda m: spelled(m.group(1), m.group(2), m.group(3)), text)
    return DAY_FIRST_RE.sub(numeric, text)


# a time of day on the 12-hour clock ("3 pm", "11:30 a.m."), in German ("15 Uhr", "9.30 Uhr"), or as a word
CLOCK_12_RE = re.compile(r"\b(\d{1,2})(?:[:.](\d{2}))?\s?([ap])(?:\.\s?m\.|m\b)", re.I)
CLOCK_UHR_RE = re.compile(r"\b(\d{1,2})(?:[:.](\d{2}))?\s?Uhr\b", re.I)
CLOCK_WORDS_RE = re.compile(r"\b(?:at\s+)?(noon|midday|midnight)\b", re.I)


def canonical_clock(text: str) -> str:
    """Times of day spelled one way, the 24-hour ``H:MM``, so the claim guard compares the hour and not
    its spelling: "3 pm", "3:00 PM", "15:00" and "15 Uhr" are one time; "3 pm" is not "16:30". An hour that
    is no hour on its clock ("13 pm") stays as written."""
    def twelve(m: re.Match[str]) -> str:
        hour, minutes = int(m.group(1)), int(m.group(2) or 0)
        if not 1 <= hour <= 12 or minutes > 59:
            return m.group(0)
        return f"{hour % 12 + (12 if m.group(3).lower() == 'p' else 0)}:{minutes:02d}"

    def uhr(m: re.Match[str]) -> str:
        hour, minutes = int(m.group(1)), int(m.group(2) or 0)
        return f"{hour}:{minutes:02d}" if hour <= 24 and minutes <= 59 else m.group(0)

    text = CLOCK_12_RE.sub(twelve, text)
    text = CLOCK_UHR_RE.sub(uhr, text)
    return CLOCK_WORDS_RE.sub(lambda m: ("at " if m.group(0)[:2].lower() == "at" else "")
                              + ("0:00" if m.group(1).lower() == "midnight" else "12:00"), text)


# what says an "m" after a number is metres: a length word after it ("3.5 m long", "2 m of cable")
LENGTH_AFTER_M_RE = re.compile(r"\s*(?:long|wide|tall|high|deep|away|apart|across|in\s+(?:length|width|height|diameter)|of)\b")
# a length of time said in words: "half an hour" is "30 minutes", "every quarter" is "every 3 months" (round 11 of
# issue 40: "limited to 15 minutes" / "capped at a quarter of an hour")
SPOKEN_DURATIONS = tuple((re.compile(pattern, re.I), plain) for pattern, plain in (
    (r"\b(?:an|one)\s+hour\s+and\s+a\s+half\b", "90 minutes"),
    (r"\bhalf\s+an\s+hour\b", "30 minutes"),
    (r"\b(?:a\s+)?quarter\s+of\s+an\s+hour\b|\ba\s+quarter[\s-]hour\b", "15 minutes"),
    (r"\bthree\s+quarters\s+of\s+an\s+hour\b", "45 minutes"),
    (r"\bevery\s+quarter\b", "every 3 months"),
))


def spoken_durations(text: str) -> str:
    """``text`` with the lengths of time of :data:`SPOKEN_DURATIONS` written as a number and a unit."""
    for pattern, plain in SPOKEN_DURATIONS:
        text = pattern.sub(plain, text)
    return text


# a duration in one unit is the same amount in another: "30 s" is "30000 ms", "2 h" is "120 min"
DURATION_MS = {"ms": 1, "s": 1000, "min": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 604_800_000}


@dataclass(frozen=True)
class Claim:
    """What the guard compares, extracted once per text."""

    numbers: tuple[tuple[str, str], ...]  # (value, unit or "")
    negations: int
    limiters: tuple[str, ...]
    poles: dict[str, frozenset[str]]
    retired: frozenset[str]
    entities: tuple[str, ...]  # case-folded, in order of first appearance
    words: tuple[str, ...]  # case-folded words in order
    content: tuple[str, ...]  # stemmed content tokens in order, claim words left out
    topic: frozenset[str] = field(default_factory=frozenset)  # content without asides that claim nothing
    capitalised: frozenset[str] = field(default_factory=frozenset)  # stems of words written with a capital
    bare_units: frozenset[str] = field(default_factory=frozenset)  # "daily", "in seconds": units with no number
    function: frozenset[str] = field(default_factory=frozenset)  # CLAIM_STOPWORDS present
    lists: tuple[frozenset[str], ...] = ()  # entity keys listed together ("Alice and Bob"): order free
    subject: frozenset[str] = field(default_factory=frozenset)  # the topic less its values: see subject_of
    calendar: frozenset[str] = field(default_factory=frozenset)  # days and months named: see calendar_values
    names: frozenset[str] = field(default_factory=frozenset)  # stems of words written as a name: see names_in
    pole_words: frozenset[str] = field(default_factory=frozenset)  # the words that named a pole of POLES


def _value(raw: str) -> str:
    """A number as the guard compares it: thousands commas dropped, leading zeros of a whole number
    dropped, anything else as written ("3.50" is not "3.5": a version 1.10 is not 1.1)."""
    if THOUSANDS_RE.fullmatch(raw):
        raw = raw.replace(",", "")
    if ":" in raw:
        return ":".join(str(int(p)) if p.isdigit() else p for p in raw.split(":"))
    return str(int(raw)) if raw.isdigit() else raw


def _bound(text: str, start: int) -> str:
    """The sign or comparison written right before the number at ``start``: "-", "+", "<", ">",
    "<=", ">=" or ""; a hyphen inside a date or an identifier ("2024-03-05", "INC-44") is no sign."""
    before = text[start - 1:start]
    if before == "+" and not text[start - 2:start - 1].isdigit():
        return before  # "UTC+5" is not "UTC-5"
    if before == "-" and not (start >= 2 and (text[start - 2].isalnum() or text[start - 2] in "._,:/")):
        return before
    k = start
    while k and text[k - 1] in " \t":
        k -= 1
    if text[k - 2:k] in ("<=", ">="):
        return text[k - 2:k]
    if text[k - 1:k] in ("<", ">") and text[k - 2:k] != "->":
        return text[k - 1:k]
    return ""


# what may follow "second" when it is the unit: the end of the clause or a word that opens another part of it
ORDINAL_SECOND_ENDS = frozenset("and or but for in on at to of per by with".split())


@lru_cache(maxsize=16384)
def _prepared(text: str) -> str:
    """``text`` as the guard reads it: marks off, dates, clock times and spoken durations written one way, bounds
    as ASCII."""
    text = spoken_durations(canonical_clock(canonical_dates(
        unicodedata.normalize("NFKC", MARKS_RE.sub("", text)).replace("’", "'"))))
    for sign, plain in BOUNDS.items():
        text = text.replace(sign, plain)
    return text


@dataclass(frozen=True)
class Topic:
    """What a note is about, the part of its :class:`Claim` the subject tests read first (:func:`topic_of`)."""

    content: tuple[str, ...]
    topic: frozenset[str]
    subject: frozenset[str]
    names: frozenset[str]


@lru_cache(maxsize=16384)  # every note of a 10,000-note instance a query may meet
def topic_of(text: str) -> Topic:
    """The content, topic, subject and names of ``text``, as :func:`claim_of` gives them, without the rest of the
    claim: recall's newer-note lookup tries many notes on each hit's subject and drops most on these alone."""
    text = _prepared(text)
    content = _subject_tokens(text)
    plain = ASIDE_RE.sub(lambda m: "" if _claims_nothing(m.group(1)) else m.group(0), text)
    topic = frozenset(content) if plain == text else frozenset(_subject_tokens(plain))
    return Topic(content, topic, topic if SPEAKER_RE.match(text) else subject_of(topic, text), names_in(text))


@lru_cache(maxsize=16384)  # every note of a 10,000-note instance a query may meet
def claim_of(text: str) -> Claim:
    """Extract the numbers, negations, polarity, retirement words and entities of ``text`` (a lead-in that
    only announces the note, "Just a note:", is read by :mod:`.restate`, from where two notes differ)."""
    about = topic_of(text)
    text = _prepared(text)
    folded = text.casefold()
    found = list(WORD_RE.finditer(folded))
    words = [m.group(0).replace("'", "") for m in found]
    numbers: list[tuple[str, str]] = []
    for m in NUMBER_RE.finditer(folded):
        if folded[m.start() - 1:m.start()].isalpha() and folded[m.end():m.end() + 1].isalpha():
            continue  # a digit inside a word names no amount: "k8s", "i18n" (round 12 of issue 40: "k8s" was 8 s)
        tail = folded[m.end():m.end() + 12]
        unit = ""
        um = re.match(r"\s?(per\s?cent\b|%|[a-z]+)", tail)
        if um and um.group(1).startswith("per") and um.group(1) != "percent":
            unit = "%" if um.group(1).endswith("cent") else ""  # "per cent" is "%", "10 per month" is not
        elif um and um.group(1) == "m" and LENGTH_AFTER_M_RE.match(tail, um.end()):
            unit = "metre"  # "3.5 m long": metres, where "512m" alone is a size (round 11 of issue 40)
        elif um and um.group(1) in UNITS:
            unit = UNITS[um.group(1)]
        start = m.start()
        at = start - 1 if folded[start - 1:start] == " " and start >= 2 else start
        if folded[at - 1:at] in CURRENCIES and at >= 1:  # "$10" is not "€10"; "-$5" is negative
            unit, start = folded[at - 1] + unit, at - 1
        numbers.append((_bound(folded, start) + _value(m.group(0)), unit))
    every_other = list(EVERY_OTHER_RE.finditer(folded))
    numbers.extend(("2", EVERY_OTHER_UNITS.get(m.group(1), "w")) for m in every_other)
    counted = {m.start(1) for m in every_other}  # where the unit of each "every other week" is: no bare unit
    bare_units: set[str] = set()
    for n, word in enumerate(words):
        if word in CADENCES and CADENCES[word][:1].isdigit():  # "biweekly": every 2 weeks, a number like any other
            numbers.append((CADENCES[word][:-1], CADENCES[word][-1:]))
        elif word in CADENCES:
            bare_units.add(CADENCES[word])
        elif found[n].start() in counted:
            pass  # the unit of "every other week", counted above
        elif word in BARE_UNITS and not (n and (words[n - 1].isdigit() or words[n - 1] in NUMBER_WORDS)) \
                and not (word == "second" and n + 1 < len(words) and words[n + 1] not in ORDINAL_SECOND_ENDS):
            # ("every second Wednesday", "the second floor": an ordinal; "per second", "a second", "in seconds": a unit)
            bare_units.add(UNITS[word])
    for n, word in enumerate(words):
        after = words[n + 1] if n + 1 < len(words) else ""
        if word in NUMBER_WORDS and not (word == "one" and (after == "of" or pronoun_one(words[max(0, n - 2):n]))) \
                and not (word == "once" and after in CLAUSE_OPENERS):  # "once the review is done": when, not how often
            numbers.append((NUMBER_WORDS[word], UNITS.get(after, "")))
    negations = sum(1 for w in words if w in NEGATIONS or (w.endswith("nt") and w in CONTRACTIONS))
    if "no" in words and PORTUGUESE_RE.search(folded) and not SPANISH_RE.search(folded):
        negations -= words.count("no")  # Portuguese "no" is "in the": "no lugar dele" (round 9 of issue 40)
    limiters = tuple(sorted(w for w in words if w in LIMITERS))
    poles: dict[str, set[str]] = {}
    pole_words = {w for n, w in enumerate(words) if w in POLES and w not in PARTICLES and not _a_place(words, n)} \
        | set(_switched(folded))
    for word in pole_words:
        axis, pole = POLES[word]
        poles.setdefault(axis, set()).add(pole)
    retired = frozenset(RETIRED_AS.get(w, w) for w in words if w in RETIRED)
    entities: list[str] = []
    capitalised: set[str] = set()
    for m in re.finditer(r"[^\W_](?:[\w.\-]*[^\W_])?", text):
        tok = m.group(0)
        low = tok.casefold()
        initial = not text[:m.start()].strip() or text[:m.start()].rstrip()[-1:] in ".!?;:\n-*#"
        if tok[:1].isupper():
            capitalised.add(stem(low))
        named = tok[:1].isupper() and not initial and low not in STOPWORDS and low not in CLAIM_WORDS
        named = named or (tok.isupper() and len(tok) >= 2 and low not in CLAIM_WORDS)
        ident = any(c.isdigit() for c in tok) and any(c.isalpha() for c in tok) or "_" in tok
        if _is_quantity(low):
            ident = False  # "3x", "30s", "512mb": an amount, compared with the numbers ("3 times" is "3x"; round 11)
        key = re.sub(r"[\W_]+", "", low)
        if (named or ident) and len(key) >= 2 and key not in entities and not calendar_values(tok):
            # (a day or month is a value, compared as one: "days or months differ")
            entities.append(key)
    lists = tuple(frozenset(re.sub(r"[\W_]+", "", w.casefold()) for w in LIST_MEMBER_WORD_RE.findall(m.group(0)))
                  for m in LIST_RE.finditer(text))
    return Claim(tuple(sorted(numbers)), negations, limiters, {k: frozenset(v) for k, v in poles.items()},
                 retired, tuple(entities), tuple(words), about.content, about.topic, frozenset(capitalised),
                 frozenset(bare_units),
                 _claim_stopwords(words, frozenset(n for n, m in enumerate(found) if folded[m.end():m.end() + 1] == "/")),
                 tuple(group for group in lists if len(group) >= 2), about.subject, calendar_values(text), about.names,
                 frozenset(pole_words))


# "above" / "below" before a determiner say where a thing is ("the paperwork is in the blue binder above the
# fridge"), not that an amount is higher (round 8 of issue 40: a copy that added where the paperwork lies read as
# a raised amount); "above 80%" and "below budget" still do
PLACE_WORDS = frozenset("above below".split())


def _a_place(words: list[str], n: int) -> bool:
    return words[n] in PLACE_WORDS and words[n + 1:n + 2] != [] and words[n + 1] in DETERMINERS


# words that mark a German note, where every noun is written with a capital and so names nothing by it
GERMAN_RE = re.compile(r"\b(?:ist|sind|und|für|nicht|wir|haben|unser|unsere|wird|werden|der|das|dem|den|bei|uns|immer"
                       r"|auch|noch|jede[nmrs]?|eine[nmrs]?|ein|zum|zur|auf|wurden?|kommt|gibt)\b", re.I)
# ("Die Müllabfuhr kommt bei uns immer am Mittwoch", round 8; "Die Müllabfuhr kommt jeden Mittwoch", round 12)
HANDLE_RE = re.compile(r"(?<!\w)[#@][\w][\w.-]*")  # a channel or a handle: a name whatever its case
TITLED_RE = re.compile(r"(?<![\w'’])[^\W\d_][\w'’-]*")


def names_in(text: str) -> frozenset[str]:
    """The stems of the words ``text`` writes as a name: a channel or handle ("#ops-fire", "@release-bot"),
    and a capital then a small letter ("Helga", "OpenVPN", "LaunchDarkly"; not "PM" or "QA", which stand
    for a word) outside a German note (where every noun is capitalised). A name found in one note only is
    a *value* it gives its subject ("Helga Sorensen owns the roadmap" / "The roadmap is owned by Kofi
    Mensah"): :func:`same_topic` and :func:`may_conflict` compare the rest (round 4 of issue 40)."""
    out = {t for m in HANDLE_RE.finditer(text) for t in tokens(m.group(0))}  # "#ops-fire", "@release-bot"
    if not GERMAN_RE.search(text):
        for m in TITLED_RE.finditer(text):
            word = m.group(0)
            if word[:1].isupper() and any(c.islower() for c in word[1:]):
                out.update(tokens(word))
    return frozenset(out - CALENDAR_STEMS)  # "Mondays" is when, not who


SERIAL_RE = re.compile(r"[^\W\d_]+\d+")  # the joined form of an identifier with a number: "node18", "inc4432"
NUMBERED_ID_RE = re.compile(r"[^\W_]+(?:[-_.][^\W_]+)+")  # "logs-us-2", "pg-main-01" (with a digit: see below)


def subject_of(topic: frozenset[str], text: str = "") -> frozenset[str]:
    """What a note is about, for matching one subject across notes: its topic without the values it gives
    that subject: days and months (:data:`CALENDAR_STEMS`), the joined forms of numbered identifiers
    ("node-18" leaves "node18": its word stays, its number is compared by the claim guard), and the words
    found only inside a numbered identifier of ``text`` ("logs-us-2" names a bucket, it is no note about
    logs). "The build image is node-18, rebuilt on Monday" and "Build image is node-20 and it rebuilds on
    Friday" share most of it. A turn of a chat (:data:`SPEAKER_RE`) keeps its whole topic: "Caroline: The
    support group meets every Tuesday" is no new value of the turn about the group she went to yesterday."""
    inside: set[str] = set()
    if text:
        ids = [m.group(0) for m in NUMBERED_ID_RE.finditer(text) if any(c.isdigit() for c in m.group(0))]
        if ids:
            rest = NUMBERED_ID_RE.sub(" ", text)
            inside = {t for i in ids for t in tokens(i)} - set(tokens(rest))
    # "Marco moved our one-on-ones" names Marco, not March (see calendar_values): a given name stays a subject word
    names = {w for w in CALENDAR_GIVEN_NAMES if w in topic and re.search(rf"\b{w.capitalize()}\b", text)}
    return frozenset(t for t in topic if (t not in CALENDAR_STEMS or t in names) and not SERIAL_RE.fullmatch(t)
                     and t not in inside and not _is_amount(t))


MAGNITUDES = frozenset({"k", "m", "bn", "mn"})  # "$420k", "1.2m users"
AMOUNT_RE = re.compile(r"\d+(?:[.,]\d+)?([^\W\d_]+)")


def _is_amount(token: str) -> bool:
    """A number joined to its unit or magnitude ("420k", "16gb", "30s") is a value, not what a note is about
    ("It's been cut back to $420k" names no subject); a name with a number in front ("2fa", "3d") stays one."""
    m = AMOUNT_RE.fullmatch(token)
    return m is not None and (m.group(1) in MAGNITUDES or m.group(1) in UNITS)


# stems of a claim word that are also a noun naming a subject: "works" is a pole ("the build works"), "to work"
# is a place ("I take the 42 bus to work" / "Since the route change, I ride the 17 to work"; round 6). The claim
# words of such a stem are left out as written, and the stem itself stays a subject word
NOUN_CLAIM_STEMS = frozenset({"work"})
WRITTEN_OUT = frozenset(NON_SUBJECT_WORDS | {w for w in CLAIM_WORDS if stem(w) in NOUN_CLAIM_STEMS})
SUBJECT_CLAIM_STEMS = frozenset(CLAIM_STEMS - NOUN_CLAIM_STEMS)


def _subject_tokens(text: str) -> tuple[str, ...]:
    """The content tokens that name what a note is about: claim words, bare numbers, words of change
    ("now", "moved") and French/German/Spanish function words left out, aliases spelled as one word."""
    plain = WORD_RE.sub(lambda m: " " if m.group(0).casefold() in WRITTEN_OUT else m.group(0),
                        PASSIVE_GET_RE.sub(" ", ORDINAL_RE.sub(r"\1", with_aliases(text))))
    return tuple(t for t in tokens(plain) if t not in SUBJECT_CLAIM_STEMS and not t.isdigit() and t not in NON_SUBJECT
                 and not _is_quantity(t))


def _is_quantity(token: str) -> bool:
    """A number written with its unit in one token ("3x", "30s", "512mb") or an ordinal ("4th"): a value, read with
    the numbers."""
    quantity = QUANTITY_RE.fullmatch(token)
    return quantity is not None and (quantity.group(1) in UNITS or quantity.group(1) in ORDINAL_SUFFIXES)


QUANTITY_RE = re.compile(r"\d+(?:[.,]\d+)?([a-z]+)")
ORDINAL_SUFFIXES = frozenset("st nd rd th".split())
ORDINAL_RE = re.compile(r"\b(\d+)(?:st|nd|rd|th)\b", re.I)  # "4th": the number, its suffix no word of the subject


def _claims_nothing(aside: str) -> bool:
    """A parenthesised aside that only spells out detail ("(dev, staging, prod)"): no number,
    negation, limiter, polarity, retirement or name. Such an aside is left out of the topic, so
    a note that adds one is worded like the note without it; any other aside counts in full."""
    claim = claim_of(aside)
    return not (claim.numbers or claim.negations or claim.limiters or claim.poles or claim.retired
                or claim.entities or claim.capitalised or claim.bare_units or claim.function)


# what opens a clause after a conjunction: "once the design review is done", "once we ship"
CLAUSE_OPENERS = frozenset("the this that these those we i you he she it they our my your their his her its "
                           "everyone everything all".split())
# after "out", a word that makes it part of a verb of motion: "a release goes out on Wednesdays", "rolls out to
# every region", "sent out at 9:00" (a stop word that claims, "opted out", only at the end of a clause or before "of")
OUT_MOTION = frozenset("on at to every each by in from with".split())
# before "all", a word that makes it the whole scope, what a note that names no scope says too: "issued by
# Let's Encrypt for all environments", "across all regions" (not "all admins" against "some admins")
ALL_SCOPE = frozenset("for across in on at to from".split())


# before a determiner, "out", "up", "down", "over" and "under" are the particle of a verb or a preposition ("swap
# out the filter", "set up the server", "over the holiday period"), not a state ("the server is up", "opted out")
PARTICLE_STOPWORDS = frozenset("out up down over under".split())
DETERMINERS = frozenset("the a an this that these those my our your his her its their".split())


# words that, before a date, end a stretch of time as "until" does
UNTIL_FORMS = frozenset("through thru till til".split())
# the prepositions after which "any" speaks of every one, as a bare plural does: "on any flight longer than three
# hours" / "on flights longer than three hours" (round 10; "not any", "if any" and "any admin can" still claim)
ANY_AFTER = frozenset("on for in at to with from of by during about into onto".split())


def _claim_stopwords(words: list[str], open_paths: frozenset[int] = frozenset()) -> frozenset[str]:
    """The :data:`CLAIM_STOPWORDS` of ``words`` that claim something: "out" of a verb of motion
    (:data:`OUT_MOTION`), "most" of a superlative ("the most recent tag") and "all" of a whole scope
    (:data:`ALL_SCOPE`) claim nothing, nor "up" of "up for renewal", nor "under" a path ("under secret/billing",
    round 10: ``open_paths`` are the words a "/" follows), nor "both" of "both X and Y", whose "and" says it
    (round 11): a note that has one says what a note without it says."""
    out = set()
    for n, word in enumerate(words):
        before, after = (words[n - 1] if n else ""), (words[n + 1] if n + 1 < len(words) else "")
        if word in UNTIL_FORMS and after[:1].isdigit():
            out.add("until")  # "booked through March 9" is "runs until the 9th of March" (round 9 of issue 40)
            continue
        if word not in CLAIM_STOPWORDS:
            continue
        if (word == "out" and after in OUT_MOTION) or (word == "most" and before == "the" and after not in ("of", "")) \
                or (word in PARTICLE_STOPWORDS and after in DETERMINERS) or (word == "up" and after == "for") \
                or (word == "all" and before in ALL_SCOPE and after not in ("but", "except", "")) \
                or (word == "any" and before in ANY_AFTER) or (word == "under" and n + 1 in open_paths) \
                or (word == "both" and "and" in words[n + 2:n + 5]):
            continue
        out.add(word)
    return frozenset(out)


# "on" and "off" name a switch's state ("the flag is on", "switched it off for good", "on by default") or are a
# preposition ("runs on Mattermost", "goes out on Wednesdays", "branch off the release tag"): a state only when
# nothing follows but the end of the clause or a word that opens another part of it (round 4 of issue 40: as
# prepositions they made reworded copies and corrections read as a switch turned on)
PARTICLES = frozenset({"on", "off"})
PARTICLE_RE = re.compile(r"\b(on|off)\b(?![-‐])(?=\s*([\w#@$€£]*))")
AFTER_A_STATE = frozenset("""for in by and or but until since during at again now today when if unless except only
after before from while so then too as""".split())


def _switched(folded: str) -> list[str]:
    """The "on" and "off" of ``folded`` that name a switch's state (see :data:`PARTICLES`)."""
    return [m.group(1) for m in PARTICLE_RE.finditer(folded) if not m.group(2) or m.group(2) in AFTER_A_STATE]
