"""How a permission target is shown to a human: whole, on one line, impossible to misread.

A target may hide a second command behind 60 newlines, a carriage return that
rewinds the line, an ANSI escape or a right-to-left override. Every place that
asks the user about a target (REPL prompt, panel modal, ``debug.log``) shows the
:class:`ShownTarget` built here:

* a target with no control, format or separator characters is shown as it is;
* otherwise every such character is escaped (``\\n``, ``\\r``, ``\\t``, ``\\x1b``,
  ``\\u202e``) and, so that the escapes cannot be forged by typing them, every
  backslash is doubled; the summary says the text is escaped;
* the summary always says how many lines and characters the target has.
"""
from __future__ import annotations

import unicodedata
from dataclasses import dataclass

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_UNSAFE_CATEGORIES = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}


def _unsafe(ch: str) -> bool:
    category = unicodedata.category(ch)
    return category in _UNSAFE_CATEGORIES or (category == "Zs" and ch != " ")


def _escape(ch: str) -> str:
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


@dataclass(frozen=True)
class ShownTarget:
    """A target ready for display: ``text`` on one line, plus facts about the original."""

    text: str
    lines: int
    chars: int
    escaped: bool

    @property
    def summary(self) -> str:
        """E.g. ``62 lines, 75 characters; shown escaped: \\n = newline, \\\\ = backslash``."""
        size = f"{self.lines} line{'s' if self.lines != 1 else ''}, {self.chars} character{'s' if self.chars != 1 else ''}"
        if not self.escaped:
            return size
        return f"{size}; shown escaped: \\n = newline, \\\\ = backslash"


def show_target(target: str) -> ShownTarget:
    """The displayable form of ``target`` (see the module docstring)."""
    target = target if isinstance(target, str) else str(target)
    lines = target.count("\n") + 1
    if not any(_unsafe(ch) for ch in target):
        return ShownTarget(target, lines, len(target), False)
    text = "".join(_escape(ch) if _unsafe(ch) else ("\\\\" if ch == "\\" else ch) for ch in target)
    return ShownTarget(text, lines, len(target), True)
