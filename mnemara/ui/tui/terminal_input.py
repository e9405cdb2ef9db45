"""Bytes from the terminal that are not UTF-8 must not end the panel's keyboard.

Textual's Linux driver decodes the terminal's input with a strict UTF-8 decoder in
its input thread: one byte that is not UTF-8 (a paste from a Latin-1 source, a
terminal sending 8-bit Meta keys) raised UnicodeDecodeError there, the thread died,
its traceback was drawn over the panel, and from then on no key reached it, Ctrl+C
included: what was in the input was lost with the panel. :func:`tolerate_bad_bytes`
makes that decoder replace such a byte with U+FFFD, which then shows in the input.

Alt+Enter reaches a terminal program as ESC then CR; Textual reads that pair as a
plain Enter (its Alt prefix applies to printable keys only), so with ``send_key:
"enter"`` the newline key would send. :func:`decode_alt_enter` makes the pair the
``alt+enter`` key (terminals speaking the kitty protocol send that name already).
"""
from __future__ import annotations

import codecs
import functools
from dataclasses import dataclass
from typing import Any, cast

_PATCHED = "_mnemara_tolerant"


def _tolerant_decoder(encoding: str) -> Any:
    return functools.partial(codecs.getincrementaldecoder(encoding), errors="replace")


def tolerate_bad_bytes() -> bool:
    """Make the Linux driver's input decoder replace undecodable bytes; True when it now does."""
    try:
        from textual.drivers import linux_driver
    except ImportError:  # another platform's driver
        return False
    if getattr(linux_driver, _PATCHED, False):
        return True
    if not hasattr(linux_driver, "getincrementaldecoder"):  # a Textual that decodes differently
        return False
    linux_driver.getincrementaldecoder = _tolerant_decoder
    setattr(linux_driver, _PATCHED, True)
    return True


@dataclass(frozen=True)
class _Key:
    value: str  # what Textual's parser reads from a key of ANSI_SEQUENCES_KEYS (an enum's value)


def decode_alt_enter() -> bool:
    """Make ESC CR (Alt+Enter on most terminals) the ``alt+enter`` key; True when it now is."""
    try:
        from textual._ansi_sequences import ANSI_SEQUENCES_KEYS
    except ImportError:  # a Textual that keeps its key table elsewhere: Ctrl+J still makes a newline
        return False
    table = cast("dict[str, Any]", ANSI_SEQUENCES_KEYS)  # a dict, typed as a Mapping
    table.setdefault("\x1b\r", (_Key("alt+enter"),))
    return bool(getattr(table["\x1b\r"][0], "value", None) == "alt+enter")
