"""Copy and paste through pyperclip (terminal paste keys can be swallowed before reaching a modal).

On a machine without a clipboard (no xclip/xsel/wl-clipboard, no display) the
calls raise :class:`ClipboardUnavailable` with one line telling the user why.
:func:`copy_for_user` then falls back to the terminal's clipboard sequence (OSC 52,
which Textual's ``copy_to_clipboard`` writes), so a copy works over SSH too. It is
called only for a copy the user asked for (/copy, a click on a code block, ``c`` in
the log), never with text on its way from the model to the screen.
"""
from __future__ import annotations

from typing import Protocol

from mnemara.core.errors import MnemaraError

THROUGH_TERMINAL = " through the terminal (OSC 52: no xclip, xsel or wl-clipboard here; the terminal must allow it)"


class ClipboardUnavailable(MnemaraError):
    """No clipboard tool on this system; the message says what to install."""


#: pyperclip's own message is one long sentence with a URL: a toast wraps it over several lines.
NO_CLIPBOARD = "no clipboard available on this system (install xclip, xsel or wl-clipboard)"


def _explain(exc: Exception) -> ClipboardUnavailable:
    """One short line; an OS error keeps its reason (pyperclip's "could not find a mechanism" says no more)."""
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else ""
    return ClipboardUnavailable(NO_CLIPBOARD + (f": {reason}" if reason else ""))


def copy_text(text: str) -> None:
    try:
        import pyperclip

        pyperclip.copy(text)
    except Exception as exc:  # pyperclip raises its own PyperclipException or OS errors
        raise _explain(exc) from None


class TerminalClipboard(Protocol):
    """What copies through the terminal (OSC 52): the panel app."""

    def copy_to_clipboard(self, text: str) -> None: ...


def copy_for_user(app: TerminalClipboard, text: str) -> str:
    """Copy ``text`` the user asked to copy: the system clipboard, else the terminal's (OSC 52).

    Returns "" for the system clipboard, or :data:`THROUGH_TERMINAL` to add to the message."""
    try:
        copy_text(text)
        return ""
    except ClipboardUnavailable:
        app.copy_to_clipboard(text)
        return THROUGH_TERMINAL


def paste_text() -> str:
    try:
        import pyperclip

        return pyperclip.paste() or ""
    except Exception as exc:
        raise _explain(exc) from None
