"""The tags that structure the text Mnemara sends, and how quoted text is kept from forging them."""
from __future__ import annotations

import re

#: The tags that give the sent text its structure (Mnemara's own and the CLI's). Inside a row, a slot or a
#: recalled note they are escaped, so quoted text (a file, a tool result, a note) cannot open or close one.
DELIMITER_TAGS = ("turn", "slot", "pinned_slots", "conversation_history", "recalled_memory", "system-reminder")
_DELIMITER = re.compile(r"<(\s*/?\s*)(" + "|".join(re.escape(t) for t in DELIMITER_TAGS) + r")\b", re.I)


def escape_delimiters(text: str) -> str:
    """``text`` with every ``<`` that would start one of :data:`DELIMITER_TAGS` written ``&lt;``.

    Nothing else changes (``a < b`` and ``<div>`` stay as they are), and the result is a
    pure function of the text, so the same rows give the same bytes turn after turn.
    """
    if "<" not in text:
        return text
    return _DELIMITER.sub(lambda m: "&lt;" + m.group(1) + m.group(2), text)
