"""How a permission target is shown to a human: whole, on one line, impossible to misread.

A target may hide a second command behind 60 newlines, a carriage return that
rewinds the line, an ANSI escape or a right-to-left override. Every place that
asks the user about a target (REPL prompt, panel modal, ``debug.log``) shows the
:class:`ShownTarget` built here:

* a target with no control, format, separator or blank-looking characters and no
  long run of spaces is shown as it is;
* otherwise every such character is escaped (``\\n``, ``\\r``, ``\\t``, ``\\x1b``,
  ``\\u202e``, ``\\u2800``); a run of :data:`REPEAT_RUN` or more of one such character,
  or of spaces, is shown once with its count (``\\n\\{60}``, ``\\x20\\{5000}``); and,
  so that no escape can be forged by typing it, every backslash is doubled; the
  summary says the text is escaped;
* the summary always says how many lines and characters the target has.

Blank-looking characters (the Hangul fillers, the blank braille pattern, variation
selectors and the other default-ignorable code points) and long runs of spaces
would otherwise push the rest of a target out of the user's sight: ``rm -rf ~``
followed by 5000 of them and ``ls -la`` leaves only ``ls -la`` on an 80x30 terminal.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import groupby

from mnemara.core.display import BLANK_LOOKING, escape_char, unsafe_char

#: This many of one escaped character (or of spaces) in a row are shown once with their count.
REPEAT_RUN = 20


@dataclass(frozen=True)
class ShownTarget:
    """A target ready for display: ``text`` on one line, plus facts about the original."""

    text: str
    lines: int
    chars: int
    escaped: bool
    counted_runs: bool = False  # some run is shown once with its count, e.g. \x20\{5000}

    @property
    def summary(self) -> str:
        """E.g. ``62 lines, 75 characters; shown escaped: \\n = newline, \\\\ = backslash``."""
        size = f"{self.lines} line{'s' if self.lines != 1 else ''}, {self.chars} character{'s' if self.chars != 1 else ''}"
        if not self.escaped:
            return size
        runs = ", \\{N} = the character before it N times" if self.counted_runs else ""
        return f"{size}; shown escaped: \\n = newline, \\\\ = backslash{runs}"


def show_target(target: str) -> ShownTarget:
    """The displayable form of ``target`` (see the module docstring)."""
    target = target if isinstance(target, str) else str(target)
    lines = target.count("\n") + 1
    runs = [(ch, sum(1 for _ in group)) for ch, group in groupby(target)]
    counted = [n >= REPEAT_RUN and (ch == " " or unsafe_char(ch)) for ch, n in runs]
    if not any(counted) and not any(unsafe_char(ch) for ch, _ in runs):
        return ShownTarget(target, lines, len(target), False)
    parts = []
    for (ch, n), count in zip(runs, counted):
        if count:
            parts.append(f"{escape_char(ch)}\\{{{n}}}")
        elif unsafe_char(ch):
            parts.append(escape_char(ch) * n)
        else:
            parts.append("\\\\" * n if ch == "\\" else ch * n)
    return ShownTarget("".join(parts), lines, len(target), True, any(counted))


#: In :func:`show_lines`, a run of this many spaces or more is shown with its count: more than any
#: indentation (code nests deeper than :data:`REPEAT_RUN` spaces), fewer than a terminal row.
LINE_SPACE_RUN = 64
_SAFE_LINE = re.compile("[" + "".join(f"{chr(low)}-{chr(high)}" for low, high in BLANK_LOOKING) + "]")


@dataclass(frozen=True)
class ShownLines:
    """Lines ready for display (a diff in a permission question), escaped as a whole or not at all."""

    lines: list[str]
    escaped: bool
    counted_runs: bool = False

    @property
    def legend(self) -> str:
        """How to read escaped lines ("" when they are shown as they are)."""
        if not self.escaped:
            return ""
        runs = ", \\{N} = the character before it N times" if self.counted_runs else ""
        return f"shown escaped: \\t = tab, \\r = carriage return, \\\\ = backslash{runs}"


def _plain_line(line: str, space_run: int) -> bool:
    return line.isprintable() and _SAFE_LINE.search(line) is None and " " * space_run not in line


def show_lines(lines: list[str], space_run: int = LINE_SPACE_RUN) -> ShownLines:
    """Lines (without their newline) for display, one screen line each: if any holds a character
    :func:`show_target` escapes, or a run of ``space_run`` spaces, *every* line is escaped (each
    backslash doubled), so that no line can pass for an escaped one. A run of :data:`REPEAT_RUN`
    of one escaped character, or of ``space_run`` spaces, is shown once with its count."""
    if all(_plain_line(line, space_run) for line in lines):
        return ShownLines(list(lines), False)
    out: list[str] = []
    counted_any = False
    for line in lines:
        parts = []
        for ch, group in groupby(line):
            n = sum(1 for _ in group)
            if n >= (space_run if ch == " " else REPEAT_RUN) and (ch == " " or unsafe_char(ch)):
                parts.append(f"{escape_char(ch)}\\{{{n}}}")
                counted_any = True
            elif unsafe_char(ch):
                parts.append(escape_char(ch) * n)
            else:
                parts.append("\\\\" * n if ch == "\\" else ch * n)
        out.append("".join(parts))
    return ShownLines(out, True, counted_any)
