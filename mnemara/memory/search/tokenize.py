"""THE tokenizer: one function shared by the full-text index, every query, the auto-recall gate,
dedupe and the claim guard, so "what matched" means the same thing everywhere.

:func:`tokens` lower-cases (NFKC, casefold), splits text into runs of letters and digits, drops
English stop words, stems with the Snowball English stemmer (PyStemmer: ``renews``, ``renewed``,
``renewal`` -> ``renew``) and spells identifiers every way a person types them (``INC-4432``,
``INC 4432`` and ``inc4432`` all give ``inc``, ``4432`` and ``inc4432``), and gives a short form's word
too (``DB`` gives ``db`` and ``databas``: :data:`ABBREVIATIONS`).

:func:`query_tokens` is the same for a question, less the words that only make it a question
(``what``, ``kind``, ``tell``): names, numbers and every content word stay.

Scripts written without spaces (Chinese, Japanese, Korean, Thai...) are cut into overlapping
character pairs, so a word of two characters inside a sentence matches.

To extend it (another script, another language) change :func:`words` or add a branch to
:func:`tokens`, and bump :data:`VERSION`: the index stores tokenized text, so a new version
makes every index re-tokenize itself once (:mod:`mnemara.memory.search.rag` checks it).
"""
from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Any

VERSION = 4  # 1: the suffix stripper of Mnemara <= 0.x; 2: Snowball English; 3: bigrams for scripts without spaces;
# 4: short forms also give the word they stand for (ABBREVIATIONS)

STOPWORDS = frozenset("""
a about above after again against all am an and any are as at be because been before being below between
both but by can could did do does doing down during each few for from further had has have having he her
here hers him his how i if in into is it its itself just me more most my no nor not now of off on once only
or other our ours out over own same she should so some such than that the their them then there these they
this those through to too under until up very was we were what when where which while who whom why will
with would you your yours also s t ll ve re d m
""".split())
# words that only make a sentence a question or a request; dropped from queries, kept in notes
QUESTION_WORDS = frozenset("""
whose kind kinds sort type types tell know remember recall mention mentioned please anything something
""".split())

# short forms a person types for a word: a token of one also gives the word's token, so "Primary DB" and
# "the primary database" meet. Only short forms that stand for one word ("dev", "auth", "ops" stand for several).
ABBREVIATIONS = {"db": "database", "dbs": "databases", "prod": "production", "env": "environment",
                 "envs": "environments", "repo": "repository", "repos": "repositories", "config": "configuration",
                 "configs": "configurations", "infra": "infrastructure", "perf": "performance",
                 # (round 12 of issue 40: "jake's bday = oct 2", "prod k8s cluster" restate a note in its long words)
                 "k8s": "kubernetes", "bday": "birthday", "bdays": "birthdays", "appt": "appointment",
                 "appts": "appointments", "dept": "department", "mgr": "manager", "acct": "account",
                 "accts": "accounts", "pwd": "password", "addr": "address", "mtg": "meeting", "mtgs": "meetings",
                 "msg": "message", "msgs": "messages", "info": "information"}

RUN_RE = re.compile(r"[^\W_]+", re.UNICODE)
# scripts written without spaces between words (Han, kana, Hangul, Thai, Lao, Myanmar, Khmer): a run of them
# is a whole sentence to RUN_RE, so it is cut into overlapping character pairs ("東京都" -> "東京", "京都")
NO_SPACE_RE = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
                         "\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff]+")
PART_RE = re.compile(r"[^\W\d_]+|\d+")


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    import Stemmer  # PyStemmer (Snowball); imported on first use

    return Stemmer.Stemmer("english")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The Snowball English stem of a lower-case word (numbers and short words unchanged)."""
    if len(word) <= 2 or not word.isalpha():
        return word
    return str(_stemmer().stemWord(word))


def words(text: str) -> list[tuple[str, int, int]]:
    """``(run, start, end)`` of every run of letters or digits in ``text`` (already NFKC)."""
    return [(m.group(0), m.start(), m.end()) for m in RUN_RE.finditer(text)]


def tokens(text: str, keep_stopwords: bool = False) -> list[str]:
    """The tokens of ``text``.

    Letter+digit identifiers are emitted whole and in parts, and a run of
    letters followed by a run of digits (``INC-4432``, and ``INC 4432`` when
    the letters are capitals) also yields the joined form, so every spelling
    meets every other.
    """
    text = NO_SPACE_RE.sub(lambda m: f" {m.group(0)} ", unicodedata.normalize("NFKC", text))
    runs = words(text)
    out: list[str] = []
    for n, (raw, start, _end) in enumerate(runs):
        if NO_SPACE_RE.fullmatch(raw):
            out.extend([raw] if len(raw) == 1 else [raw[i:i + 2] for i in range(len(raw) - 1)])
            continue
        run = raw.casefold()
        parts = PART_RE.findall(run)
        if len(parts) > 1:
            out.append(run)
            if run in ABBREVIATIONS:  # "k8s"
                out.append(stem(ABBREVIATIONS[run]))
            out.extend(p if p.isdigit() else stem(p) for p in parts if p.isdigit() or p not in STOPWORDS)
        elif run.isdigit():
            out.append(run)
        elif keep_stopwords or run not in STOPWORDS:
            if len(run) > 1 or keep_stopwords:
                out.append(stem(run))
                if run in ABBREVIATIONS:
                    out.append(stem(ABBREVIATIONS[run]))
        if n and run.isdigit() and len(run) >= 2:
            prev, _pstart, pend = runs[n - 1]
            gap = text[pend:start]
            joined = gap in ("-", "_", "#", "") or (gap == " " and prev.isupper())
            if prev.isalpha() and len(prev) >= 2 and joined and prev.casefold() not in STOPWORDS:
                out.append(prev.casefold() + run)
    return out


def query_tokens(question: str) -> list[str]:
    """The tokens of a question: :func:`tokens` without the words that only make it a question."""
    drop = _question_stems()
    return [t for t in tokens(question) if t not in drop]


@lru_cache(maxsize=1)
def _question_stems() -> frozenset[str]:
    return frozenset(stem(w) for w in QUESTION_WORDS)


def fts_text(text: str) -> str:
    """What the full-text index stores for ``text``: its tokens, space separated."""
    return " ".join(tokens(text))
