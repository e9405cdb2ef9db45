"""What ``graph_query`` may run: an allowlist over a single left-to-right scan of the raw text.

Kuzu reads and writes files from Cypher (``LOAD FROM``, ``COPY ... TO``, ``ATTACH``,
``EXPORT DATABASE``, extension ``INSTALL``/``LOAD``), and a read-only transaction
does not stop that. So the statement is accepted only when it is safe by
construction, not when a filter fails to spot something:

* One scanner walks the text once, left to right. String literals, backtick
  names, comments and punctuation are recognised by that same pass, so the scan
  cannot disagree with itself about where a string ends.
* Anything whose meaning could differ between this scanner and Kuzu's lexer is
  refused outright: comments, backslashes inside strings or names, a quote that
  directly follows a string (``'a''b'``), a doubled backtick, characters outside
  printable ASCII outside literals.
* Words are compared as whole tokens outside literals: ``LOAD``, ``COPY``,
  ``ATTACH``, transaction and schema commands and the rest of :data:`REFUSED_WORDS`
  are refused anywhere (also as variable names: rename the variable).
* ``;`` is refused (one trailing ``;`` is dropped); ``CALL`` must name one of
  :data:`CALL_ALLOWLIST`; ``CREATE`` must be followed by a pattern; the statement
  must start with a query clause.

Values that need quotes or backslashes travel as ``$parameters``.

``range()`` must have integer literals for bounds and step, and all the ranges of one statement
together may produce at most :data:`MAX_RANGE_VALUES` values: ``UNWIND range(1, 20000000)`` is refused
before it runs (Kuzu builds the list outside its buffer pool). What else a statement builds is
bounded where it runs (:mod:`mnemara.memory.graph.bounded_query`).
"""
from __future__ import annotations

from dataclasses import dataclass

from mnemara.core.errors import UsageError

#: Words never accepted outside a string literal (file access, transactions, schema, extensions).
REFUSED_WORDS = frozenset({
    "LOAD", "COPY", "ATTACH", "USE", "INSTALL", "UNINSTALL", "EXTENSION", "EXPORT", "IMPORT", "BEGIN",
    "COMMIT", "ROLLBACK", "TRANSACTION", "CHECKPOINT", "DROP", "ALTER", "MACRO",
})
#: The only procedures ``CALL`` may name (read-only catalogue information).
CALL_ALLOWLIST = frozenset({"SHOW_TABLES", "TABLE_INFO", "SHOW_CONNECTION", "DB_VERSION"})
#: Clauses a statement may start with.
FIRST_WORDS = frozenset({"MATCH", "OPTIONAL", "UNWIND", "WITH", "RETURN", "CALL", "CREATE", "MERGE"})
PUNCTUATION = set("()[]{}<>=+-*/%^,.:|!$&~?")
MAX_CYPHER = 20_000
#: The most values all ``range()`` calls of one statement may produce together (their product).
MAX_RANGE_VALUES = 100_000


@dataclass(frozen=True)
class Token:
    kind: str  # "word", "string", "name" (backtick), "number", "punct", "semicolon"
    text: str
    at: int


def _refuse(why: str) -> UsageError:
    return UsageError(f"graph_query refused: {why}")


def tokenize(cypher: str) -> list[Token]:
    """Split ``cypher`` into tokens in one pass; raise :class:`UsageError` on anything ambiguous."""
    tokens: list[Token] = []
    i, n = 0, len(cypher)
    while i < n:
        ch = cypher[i]
        if ch in " \t\r\n":
            i += 1
        elif ch in "'\"`":
            end = i + 1
            while end < n and cypher[end] != ch:
                if cypher[end] == "\\":
                    raise _refuse(f"backslash inside a {'name' if ch == '`' else 'string'} at offset {end} "
                                  "(pass such values as $parameters)")
                end += 1
            if end >= n:
                raise _refuse(f"unterminated {'name' if ch == '`' else 'string'} starting at offset {i}")
            if end + 1 < n and cypher[end + 1] in "'\"`":
                raise _refuse(f"a quote directly after a {'name' if ch == '`' else 'string'} at offset {end + 1}")
            tokens.append(Token("name" if ch == "`" else "string", cypher[i + 1:end], i))
            i = end + 1
        elif ch == "/" and i + 1 < n and cypher[i + 1] in "/*":
            raise _refuse(f"comments are not accepted (offset {i})")
        elif ch == ";":
            tokens.append(Token("semicolon", ch, i))
            i += 1
        elif ch.isascii() and (ch.isalpha() or ch == "_"):
            end = i + 1
            while end < n and cypher[end].isascii() and (cypher[end].isalnum() or cypher[end] == "_"):
                end += 1
            tokens.append(Token("word", cypher[i:end], i))
            i = end
        elif ch.isascii() and ch.isdigit():
            end = _number_end(cypher, i)
            if end < n and cypher[end].isascii() and (cypher[end].isalnum() or cypher[end] == "_"):
                raise _refuse(f"a number runs into a word at offset {end}")
            tokens.append(Token("number", cypher[i:end], i))
            i = end
        elif ch in PUNCTUATION:
            tokens.append(Token("punct", ch, i))
            i += 1
        else:
            raise _refuse(f"character {ch!r} at offset {i} is not accepted outside a string")
    return tokens


def _number_end(text: str, i: int) -> int:
    """End of the number starting at ``i``: digits, an optional fraction, an optional exponent."""
    n = len(text)

    def digits(j: int) -> int:
        while j < n and text[j] in "0123456789":
            j += 1
        return j

    i = digits(i)
    if i + 1 < n and text[i] == "." and text[i + 1] in "0123456789":
        i = digits(i + 1)
    if i < n and text[i] in "eE":
        j = i + 1 + (i + 1 < n and text[i + 1] in "+-")
        if j < n and text[j] in "0123456789":
            i = digits(j)
    return i


def check_cypher(cypher: object) -> str:
    """The statement to run (without a trailing ``;``), or :class:`UsageError` saying what was refused."""
    if not isinstance(cypher, str) or not cypher.strip():
        raise UsageError("the Cypher query is empty")
    if len(cypher) > MAX_CYPHER:
        raise _refuse(f"longer than {MAX_CYPHER} characters")
    tokens = tokenize(cypher)
    if tokens and tokens[-1].kind == "semicolon":
        end = tokens[-1].at
        tokens = tokens[:-1]
    else:
        end = len(cypher)
    if not tokens:
        raise UsageError("the Cypher query is empty")
    for index, token in enumerate(tokens):
        if token.kind == "semicolon":
            raise _refuse("one statement at a time (found ';')")
        if token.kind != "word":
            continue
        word = token.text.upper()
        if word in REFUSED_WORDS:
            raise _refuse(f"{word} is not accepted (file, transaction, schema and extension commands "
                          "never run here; rename a variable that uses this word)")
        after = tokens[index + 1] if index + 1 < len(tokens) else None
        if word == "CALL":
            if after is None or after.kind != "word" or after.text.upper() not in CALL_ALLOWLIST:
                raise _refuse(f"CALL may only name {', '.join(sorted(p.lower() for p in CALL_ALLOWLIST))}")
        elif word == "CREATE":
            after2 = tokens[index + 2] if index + 2 < len(tokens) else None
            pattern = after is not None and (after.text == "(" or (
                after.kind in ("word", "name") and after2 is not None and after2.text == "="))
            if not pattern:
                raise _refuse("CREATE is accepted only for nodes and edges (CREATE (...)); schema commands "
                              "never run here")
        elif word == "DETACH" and (after is None or after.text.upper() != "DELETE"):
            raise _refuse("DETACH is accepted only as DETACH DELETE")
    _check_ranges(tokens)
    first = tokens[0]
    if first.kind != "word" or first.text.upper() not in FIRST_WORDS:
        raise _refuse(f"a statement starts with one of {', '.join(sorted(FIRST_WORDS))}")
    return cypher[:end].strip()


def _range_arguments(tokens: list[Token], start: int) -> list[int] | None:
    """The integer literals of ``range(a, b[, step])`` whose ``(`` is at ``start``, or None if any is not one."""
    values: list[int] = []
    i = start + 1
    while i < len(tokens):
        sign = 1
        if tokens[i].text == "-":
            sign, i = -1, i + 1
        if i >= len(tokens) or tokens[i].kind != "number" or not tokens[i].text.isdigit():
            return None
        values.append(sign * int(tokens[i].text))
        i += 1
        if i < len(tokens) and tokens[i].text == ")":
            return values if len(values) in (2, 3) else None
        if i >= len(tokens) or tokens[i].text != ",":
            return None
        i += 1
    return None


def _check_ranges(tokens: list[Token]) -> None:
    """Refuse ``range()`` without literal bounds, and ranges producing over :data:`MAX_RANGE_VALUES` values."""
    total = 1
    for index, token in enumerate(tokens[:-1]):
        if token.kind != "word" or token.text.upper() != "RANGE" or tokens[index + 1].text != "(":
            continue
        args = _range_arguments(tokens, index + 1)
        if args is None:
            raise _refuse("range() takes integer literals for its bounds and step (a variable or $parameter "
                          "could ask for billions of values)")
        low, high, step = (*args, 1) if len(args) == 2 else args
        if step == 0:
            raise _refuse("range() with a step of 0")
        total *= max(0, (high - low) // step + 1)
        if total > MAX_RANGE_VALUES:
            raise _refuse(f"range() would produce {total} values; at most {MAX_RANGE_VALUES} per statement")
