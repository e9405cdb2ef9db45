"""Bytes from the terminal that are not UTF-8 must not end the panel's keyboard.

Textual's Linux driver decodes the terminal's input with a strict UTF-8 decoder in
its input thread: one byte that is not UTF-8 (a paste from a Latin-1 source, a
terminal sending 8-bit Meta keys) raised UnicodeDecodeError there, the thread died,
its traceback was drawn over the panel, and from then on no key reached it, Ctrl+C
included: what was in the input was lost with the panel. :func:`tolerate_bad_bytes`
makes that decoder replace such a byte with U+FFFD, which then shows in the input.
"""
from __future__ import annotations

import codecs
import functools
from typing import Any

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
