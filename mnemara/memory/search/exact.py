"""What counts as an *exact copy*: the only kind of sameness any automatic step may act on.

Issue 31's rule: ``write_memory``, ``mnemara note`` and replay may skip or archive a
note only when it is an exact copy of a kept note; everything that is merely close
(a possible copy or a possible correction) becomes a proposal the user accepts.

Two texts are exact copies when their :func:`copy_key` is equal. The key
normalises only what never carries a fact:

* Unicode form (NFKC: ``é`` composed or not, full-width digits, no-break spaces);
* whitespace (runs of spaces and line breaks are one space);
* markdown dressing: a leading bullet, emphasis marks, backticks, and the
  punctuation that ends the note (``.``, ``!``, ``;`` ...);
* the case of *plain words*: tokens made only of letters, written all lower,
  all upper or capitalised, that are not a unit (``MB``/``Mb``, ``GiB``/``GB``,
  ``ms``/``Ms`` keep their case).

Everything else stays as written: word order, every token that holds a digit or
punctuation inside it (identifiers, paths, emails, numbers, dates, versions,
operators), quoted values (``"Lax"`` is not ``"lax"``) and mixed-case words
(``GitHub``).
"""
from __future__ import annotations

import difflib
import re
import unicodedata
from functools import lru_cache

from mnemara.memory.search.claim_words import strip_marks

# unit symbols whose case (or prefix) is part of the value: "Mb/s" is not "MB/s", "Ms" is not "ms"
CASE_UNITS = frozenset("""
b kb mb gb tb pb eb kib mib gib tib pib bit bits kbit mbit gbit bps kbps mbps gbps tbps
ms ns us ps hz khz mhz ghz kw mw gw kwh mwh mm cm km mg kg nm
""".split())
# a quoted value: its case and spelling are part of the fact (apostrophes inside words are no quotes)
QUOTED_RE = re.compile(r"\"[^\"\n]*\"|“[^”\n]*”|‘[^’\n]*’|«[^»\n]*»|(?<![\w'])'[^'\n]*'(?![\w'])")
# a run of letters that is a whole token: no letter, digit or in-token punctuation touches it
# ("kv/team-payments", "alert@x", "v2" are tokens of their own); a "." or ":" followed by a space
# or the end is sentence punctuation, not part of the word
PLAIN_RE = re.compile(r"(?<![\w\-./@:#$%&+=~\\])[^\W\d_]+(?![\w\-/@#$%&+=~\\]|[.:]\w)")
END_RE = re.compile(r"[\s.!?;:]+$")
BULLET_RE = re.compile(r"^\s*(?:[-+*]|\d+[.)])\s+")


def _fold(word: str) -> str:
    if word.casefold() in CASE_UNITS:
        return word
    if word.islower() or word.isupper() or word.istitle():
        return word.casefold()
    return word  # mixed case ("GitHub", "iOS"): written that way on purpose


def _fold_plain(text: str) -> str:
    return PLAIN_RE.sub(lambda m: _fold(m.group(0)), text)


@lru_cache(maxsize=16384)
def copy_key(text: str) -> str:
    """The text as exact-copy checks compare it (see the module docstring)."""
    text = unicodedata.normalize("NFKC", text)
    text = BULLET_RE.sub("", text)
    out: list[str] = []
    last = 0
    for m in QUOTED_RE.finditer(text):
        out.append(_fold_plain(strip_marks(text[last:m.start()])))
        out.append(m.group(0))  # a quoted value stays exactly as written
        last = m.end()
    out.append(_fold_plain(strip_marks(text[last:])))
    joined = " ".join("".join(out).split())
    return END_RE.sub("", joined)


def is_exact_copy(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` are the same note (an automatic skip or archive may act on this)."""
    key = copy_key(a)
    return bool(key) and key == copy_key(b)


WORD_RE = re.compile(r"\S+")


def highlight_difference(older: str, newer: str) -> tuple[str, str]:
    """Both texts with the words that differ marked: ``[-removed-]`` in the older, ``{+added+}`` in
    the newer (word by word, so a one-letter change marks its whole token)."""
    a, b = WORD_RE.findall(older), WORD_RE.findall(newer)
    left: list[str] = []
    right: list[str] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op == "equal":
            left.extend(a[i1:i2])
            right.extend(b[j1:j2])
            continue
        if i2 > i1:
            left.append("[-" + " ".join(a[i1:i2]) + "-]")
        if j2 > j1:
            right.append("{+" + " ".join(b[j1:j2]) + "+}")
    return " ".join(left), " ".join(right)
