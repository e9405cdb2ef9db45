"""The one escaping function: text from config, imports, instance names, files or the model, made safe
to write to a terminal or to put into Textual markup.

Every place such text reaches the user goes through :func:`terminal_safe` (``mnemara list`` and
``show``, the panel header, the status line, notices, modals, the chat log, the REPL); permission
targets are shown through :func:`mnemara.guard.target_text.show_target`, which builds its one-line
form from the same :func:`escape_char` and :func:`unsafe_char`.

* Control characters (C0 except tab and newline, DEL, C1: a UTF-8 terminal may obey U+009B as
  CSI) and the bidirectional controls (U+200E/F, U+202A-U+202E, U+2066-U+2069) are shown as
  ``\\x1b`` / ``\\u202e`` instead of being obeyed; a carriage return is dropped. Written raw,
  an OSC 52 sequence sets the clipboard, OSC 0 retitles the terminal, ``ESC[8m`` hides the next
  permission question, and a right-to-left override reverses what a line seems to say.
* JSON for the terminal (every ``--json`` output) goes through :func:`json_safe`: the same JSON, with
  C1, DEL and the bidi controls inside strings written as ``\u009b``-style escapes.
* With ``markup=True`` every ``[`` is escaped for Textual markup,
  so ``[/]`` cannot raise a MarkupError and ``[@click=...]`` cannot run an action.

No UI imports: the domain and the CLI use it too.
"""
from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_UNSAFE_CATEGORIES = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}
#: Printable by category yet drawn as nothing or as blank space (default-ignorable code points
#: outside the Cf category, the Hangul fillers, the blank braille pattern).
BLANK_LOOKING = (
    (0x034F, 0x034F), (0x115F, 0x1160), (0x17B4, 0x17B5), (0x180B, 0x180F), (0x2800, 0x2800),
    (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFFA0, 0xFFA0), (0xE0000, 0xE0FFF),
)
#: What a terminal obeys or reorders: C0 but tab and newline, DEL, C1, and the bidi controls.
_TERMINAL_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def escape_char(ch: str) -> str:
    """How one character is shown escaped: ``\\n``, ``\\x1b``, ``\\u202e``, ``\\U000e0001``."""
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def unsafe_char(ch: str) -> bool:
    """Whether ``ch`` is shown escaped in a one-line form: controls, format and unassigned characters,
    line and paragraph separators, spaces other than U+0020, and blank-looking characters."""
    category = unicodedata.category(ch)
    if category in _UNSAFE_CATEGORIES or (category == "Zs" and ch != " "):
        return True
    code = ord(ch)
    return any(low <= code <= high for low, high in BLANK_LOOKING)


def escape_markup(text: str) -> str:
    """``text`` for Textual markup: a backslash before every ``[`` (Textual reads a backslash as an
    escape only there, and takes the one right before the ``[``; others stay as they are)."""
    return text.replace("[", "\\[")


def terminal_safe(text: str, *, markup: bool = False) -> str:
    """``text`` safe to write to a terminal (and, with ``markup``, to put into Textual markup)."""
    shown = _TERMINAL_UNSAFE.sub(lambda m: escape_char(m.group()), str(text).replace("\r", ""))
    return escape_markup(shown) if markup else shown


#: What ``json.dumps(..., ensure_ascii=False)`` leaves raw that a terminal obeys or reorders: DEL, C1
#: (U+009B is CSI to a UTF-8 terminal), the bidi controls and the line/paragraph separators. JSON
#: structure is ASCII, so these can only sit inside strings, where ``\\uXXXX`` means the same character.
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


def json_safe(value: object, **dumps: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, **dumps)`` safe to write to a terminal: the same JSON,
    with every character a terminal would obey written as a ``\\uXXXX`` escape (C0 controls are
    escaped by ``json.dumps`` already)."""
    text = json.dumps(value, ensure_ascii=False, **dumps)
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
