"""Command-aware matching of Bash ``allowed_patterns``: every simple command must be allowed.

A pattern such as ``^ls( |$)`` was once matched against the whole line, so ``ls; rm -rf ~``
ran unasked. Here the line is parsed first and each *simple command* (``ls -la``, ``grep x``)
must match an allowed pattern on its own. Constructs that run or write more than the
simple commands show ask unless a pattern that matches the command *names* them:

* command and process substitution (``$(...)``, backticks, ``<(...)``, ``>(...)``);
* redirection from or to a file (``> out``, ``< in``; ``2>&1`` and ``/dev/null`` are fine);
* here-documents and here-strings (``<<EOF``, ``<<<``);
* ``eval``, ``exec``, ``source`` and ``.``;
* ``&`` (a background job outlives the call).

A pattern names a construct when its text, with regex escapes removed, contains the
construct's marker (``$(``, ``>``, ``<<``, ``eval``, ``&`` ...) and it matches the command with
the construct in it. A line the parser cannot read (an unclosed quote, ``[[ ]]``, ``case``)
always asks.

Parsing uses ``bashlex``. It costs about 2 ms for a 500-character line, so lines made only
of plain words, quotes and the list operators ``; && || | &`` (no ``$``, backticks, ``\\``,
brackets, braces, redirections, ``#`` or reserved words) are split by :func:`_split_plain`,
whose result equals bashlex's on that subset (a property test checks it).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Iterable, NamedTuple, Sequence

#: Reserved words: a line that uses one takes the full parser.
RESERVED = frozenset({"if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac",
                      "function", "select", "time", "coproc", "in", "!", "{", "}", "[[", "]]"})
#: Builtins that run text or a file as commands.
RUNNERS = {"eval": "eval", "exec": "exec", "source": "source", ".": ". "}
#: Characters the plain splitter understands; anything else goes to bashlex.
_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 \t-_./,:=+@%~*?[]^'\";&|")
_LIST_OPERATORS = frozenset({";", "&&", "||", "|", "&", "|&"})
_SUBSTITUTION_MARKERS = ("$(", "`", "<(", ">(")
#: Redirection targets that are not files anyone keeps.
HARMLESS_TARGETS = frozenset({"/dev/null"})


@dataclass(frozen=True)
class Construct:
    """Something in a command beyond its words: what it is, and the text a pattern must contain to name it."""

    what: str
    marker: str


class SimpleCommand(NamedTuple):
    """One simple command: its words as written (no redirections), its full text, and its constructs.
    (A named tuple: a long line has many, and building them is most of the plain splitter's cost.)"""

    words: str
    full: str
    constructs: tuple[Construct, ...] = ()


@dataclass(frozen=True)
class ParsedLine:
    """A Bash line as the matcher sees it; ``problem`` is set when it could not be parsed."""

    commands: tuple[SimpleCommand, ...] = ()
    background: bool = False
    problem: str = ""


@dataclass(frozen=True)
class BashMatch:
    """The matcher's answer: ``allowed`` with the patterns used, or why the line must be asked."""

    allowed: bool
    reason: str


BACKGROUND = Construct("'&' (a background job)", "&")


def parse_line(command: str) -> ParsedLine:
    """The simple commands of ``command`` (cached: the gate decides a call more than once)."""
    return _parse_cached(command)


@lru_cache(maxsize=256)
def _parse_cached(command: str) -> ParsedLine:
    return parse_uncached(command)


def parse_uncached(command: str) -> ParsedLine:
    """:func:`parse_line` without the cache (what the benchmark measures)."""
    plain = _split_plain(command)
    if plain is not None:
        return plain
    return _parse_bashlex(command)


# -- the plain subset ------------------------------------------------------------------------
#: One simple command's text (quotes may hold operators) and the list operator after it.
_PLAIN_SEGMENT = re.compile(r"""((?:'[^']*'|"[^"]*"|[^'";&|])*)([;&|]+|$)""")
_PLAIN_WORD = re.compile(r"""(?:'[^']*'|"[^"]*"|[^'"\s])+""")


def _split_plain(command: str) -> ParsedLine | None:
    """Split a line of plain words and list operators; None when the line needs the full parser."""
    if not command.strip() or not _PLAIN.issuperset(command):
        return None
    commands: list[SimpleCommand] = []
    operators: list[str] = []
    at = 0
    while True:
        found = _PLAIN_SEGMENT.match(command, at)
        if found is None:
            return None  # an unclosed quote: let the full parser report it
        segment, operator = found.groups()
        words = _PLAIN_WORD.findall(segment)
        if words:
            if words[0] in RESERVED or words[0] in RUNNERS:
                return None
            commands.append(SimpleCommand(" ".join(words), segment.strip(" \t")))
        elif operator or not operators or operators[-1] not in (";", "&"):
            return None  # only a trailing ';' or '&' may leave nothing after it
        if not operator:
            return ParsedLine(tuple(commands), background="&" in operators)
        if operator not in _LIST_OPERATORS:
            return None
        operators.append(operator)
        at = found.end()


# -- the full parser -------------------------------------------------------------------------
def _parse_bashlex(command: str) -> ParsedLine:
    try:
        import bashlex

        trees = bashlex.parse(command)
    except Exception as exc:  # bashlex raises its own errors and NotImplementedError for some syntax
        why = " ".join(str(exc).split()) or type(exc).__name__
        return ParsedLine(problem=f"the command does not parse ({why[:120]}); it is asked")
    walker = _Walker(command)
    for tree in trees:
        walker.visit(tree)
    if not walker.commands:
        return ParsedLine(problem="the command has no simple command to match; it is asked")
    return ParsedLine(tuple(walker.commands), background=walker.background)


class _Walker:
    """Collects simple commands (and the constructs in them) from bashlex nodes."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.commands: list[SimpleCommand] = []
        self.background = False

    def visit(self, node: Any) -> None:
        kind = getattr(node, "kind", "")
        if kind == "command":
            self._command(node)
            return
        if kind == "operator" and node.op == "&":
            self.background = True
        for child in self._children(node):
            self.visit(child)

    @staticmethod
    def _children(node: Any) -> Iterable[Any]:
        for name in ("parts", "list"):
            yield from getattr(node, name, None) or ()
        for name in ("command", "output", "heredoc"):
            child = getattr(node, name, None)
            if child is not None and hasattr(child, "kind"):
                yield child

    def _command(self, node: Any) -> None:
        words: list[str] = []
        constructs: list[Construct] = []
        first_word = ""
        for part in node.parts:
            if part.kind == "redirect":
                constructs += _redirect_constructs(part)
                continue
            words.append(self.source[part.pos[0]:part.pos[1]])
            if part.kind == "word" and not first_word:
                first_word = part.word
            self._nested(part)
        full = self.source[node.pos[0]:node.pos[1]]
        if any(marker in full for marker in _SUBSTITUTION_MARKERS):
            constructs.append(Construct("command or process substitution", "$(" if "$(" in full else
                                        "`" if "`" in full else "<(" if "<(" in full else ">("))
        if first_word in RUNNERS:
            constructs.append(Construct(f"'{first_word}' (runs text as commands)", RUNNERS[first_word]))
        self.commands.append(SimpleCommand(" ".join(words), full, tuple(dict.fromkeys(constructs))))

    def _nested(self, part: Any) -> None:
        """Commands inside substitutions count too (they run whatever the outer command is)."""
        for child in getattr(part, "parts", None) or ():
            if child.kind in ("commandsubstitution", "processsubstitution"):
                self.visit(child.command)
            else:
                self._nested(child)


def _redirect_constructs(node: Any) -> list[Construct]:
    kind = node.type
    if kind in ("<<", "<<-", "<<<"):
        return [Construct("a here-document", "<<")]
    target = node.output
    if not hasattr(target, "kind"):  # a file descriptor: 2>&1, >&2
        return []
    if target.word in HARMLESS_TARGETS:
        return []
    marker = "<" if kind.startswith("<") else ">"
    return [Construct(f"redirection {'from' if marker == '<' else 'to'} a file ({kind} {target.word})", marker)]


# -- matching -----------------------------------------------------------------------------------
_UNESCAPE = re.compile(r"\\(\W)")


def names_marker(pattern: re.Pattern[str], marker: str) -> bool:
    """Whether ``pattern``'s text, regex escapes removed, contains ``marker`` (``>``, ``$(``, ``&`` ...)."""
    return marker in _UNESCAPE.sub(r"\1", pattern.pattern)


def _names(pattern: re.Pattern[str], construct: Construct) -> bool:
    return names_marker(pattern, construct.marker)


def match_bash(command: str, patterns: Sequence[re.Pattern[str]]) -> BashMatch:
    """Whether ``patterns`` allow every simple command of ``command`` (and name every construct)."""
    return match_parsed(parse_line(command), command, patterns)


def _first_match(patterns: Sequence[re.Pattern[str]], words: str, full: str) -> re.Pattern[str] | None:
    """The first pattern matching the command's words (or its full text, when that differs)."""
    for pattern in patterns:
        if pattern.search(words):
            return pattern
    if full != words:
        for pattern in patterns:
            if pattern.search(full):
                return pattern
    return None


def match_parsed(parsed: ParsedLine, command: str, patterns: Sequence[re.Pattern[str]]) -> BashMatch:
    """:func:`match_bash` of a line already parsed (the benchmark parses without the cache)."""
    if parsed.problem:
        return BashMatch(False, parsed.problem)
    used: list[str] = []
    for simple in parsed.commands:
        hit = _first_match(patterns, simple.words, simple.full)
        if hit is None:
            return BashMatch(False, f"no allowed pattern matches the command {simple.words!r}")
        used.append(hit.pattern)
        for construct in simple.constructs:
            namer = next((p for p in patterns if _names(p, construct) and p.search(simple.full)), None)
            if namer is None:
                return BashMatch(False, f"{simple.full!r} has {construct.what}, which no allowed pattern names")
            used.append(namer.pattern)
    if parsed.background:
        namer = next((p for p in patterns if _names(p, BACKGROUND) and p.search(command)), None)
        if namer is None:
            return BashMatch(False, f"the line has {BACKGROUND.what}, which no allowed pattern names")
        used.append(namer.pattern)
    return BashMatch(True, "every command matches an allowed pattern: " +
                     " and ".join(repr(p) for p in dict.fromkeys(used)))
