"""Assistant text as prose and fenced code blocks (no UI imports; the panel, the REPL and /copy share it).

The split is line-based and tolerant of a text that is still streaming in: a
fence that has not been closed yet runs to the end of the text, so a code block
being typed out renders as code from its first line.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*([^\s`]*)[^`]*$")
#: Markdown syntax worth a Markdown render; text without any of it is drawn as plain text (fast path).
_MARKUP = re.compile(
    r"(\*\*|__|`|^ {0,3}#{1,6} |^\s*[-*+] |^\s*\d+[.)] |^ {0,3}>|^\s*\|.*\|\s*$|\[[^\]]+\]\([^)]+\)|^ {0,3}(-{3,}|\*{3,})\s*$)",
    re.MULTILINE,
)


@dataclass(frozen=True)
class Part:
    """A run of prose (``lang`` is None) or one fenced code block (``lang`` may be "")."""

    text: str
    lang: str | None = None
    closed: bool = True

    @property
    def is_code(self) -> bool:
        return self.lang is not None


def looks_like_markdown(text: str) -> bool:
    return bool(_MARKUP.search(text))


def split_parts(text: str) -> list[Part]:
    """Prose and code blocks in order; blank prose between blocks is dropped."""
    parts: list[Part] = []
    prose: list[str] = []
    code: list[str] = []
    fence = ""
    lang = ""
    for line in text.split("\n"):
        match = _FENCE.match(line)
        if not fence:
            if match:
                if "".join(prose).strip():
                    parts.append(Part("\n".join(prose)))
                prose = []
                fence, lang, code = match.group(1), match.group(2), []
            else:
                prose.append(line)
        elif match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence) and not match.group(2):
            parts.append(Part("\n".join(code), lang))
            fence = ""
        else:
            code.append(line)
    if fence:
        parts.append(Part("\n".join(code), lang, closed=False))
    elif "".join(prose).strip():
        parts.append(Part("\n".join(prose)))
    return parts


def code_blocks(text: str) -> list[Part]:
    """The fenced code blocks of ``text`` (closed or still open), in order."""
    return [part for part in split_parts(text) if part.is_code]
