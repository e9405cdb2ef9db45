"""Copy and paste through pyperclip (terminal paste keys can be swallowed before reaching a modal).

On a machine without a clipboard (no xclip/xsel/wl-clipboard, no display) the
calls raise :class:`ClipboardUnavailable` with one line telling the user why.
"""
from __future__ import annotations

from mnemara.core.errors import MnemaraError


class ClipboardUnavailable(MnemaraError):
    """No clipboard tool on this system; the message says what to install."""


def _explain(exc: Exception) -> ClipboardUnavailable:
    return ClipboardUnavailable(
        "no clipboard available on this system (install xclip, xsel or wl-clipboard, or use your terminal's paste): "
        + (str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
    )


def copy_text(text: str) -> None:
    try:
        import pyperclip

        pyperclip.copy(text)
    except Exception as exc:  # pyperclip raises its own PyperclipException or OS errors
        raise _explain(exc) from None


def paste_text() -> str:
    try:
        import pyperclip

        return pyperclip.paste() or ""
    except Exception as exc:
        raise _explain(exc) from None
