"""The one loader for JSON a user (or anyone with their files) can edit: size- and depth-limited.

config.json, permissions.json, unsent.json, the cache folder's start-up records, import files and
the request log are parsed here. Python's parser recurses once per nesting level, so
``'[' * 100000 + ']' * 100000`` would end in a ``RecursionError`` traceback; a file of gigabytes
would be read whole. :func:`loads` refuses both with :class:`JSONRefused`, a ``ValueError`` (as a
syntax error is), whose text is one line naming the limit, so every reader's existing handler for
bad JSON gives the user one line and leaves the file as it is.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from mnemara.core.errors import MnemaraError

#: Deeper nesting than this is refused (Mnemara's own files nest a few levels; an API request about 10).
MAX_DEPTH = 64
#: A file (or text) larger than this is refused before it is parsed.
MAX_BYTES = 16 * 1024 * 1024


class JSONRefused(MnemaraError, ValueError):
    """JSON refused by a limit (too large, nested too deep); the message is one line."""


def loads(data: str | bytes, *, max_bytes: int = MAX_BYTES, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads`` within the limits: :class:`JSONRefused` past one, ``json.JSONDecodeError`` on bad JSON."""
    if len(data) > max_bytes:
        raise JSONRefused(f"{len(data)} bytes is over the {max_bytes}-byte limit for a JSON file")
    try:
        value = json.loads(data)
    except RecursionError:
        raise JSONRefused(f"nested deeper than {max_depth} levels (the limit for a JSON file)") from None
    if _deeper_than(value, max_depth):
        raise JSONRefused(f"nested deeper than {max_depth} levels (the limit for a JSON file)")
    return value


def read_text(path: Path, *, max_bytes: int = MAX_BYTES) -> str:
    """The UTF-8 text of ``path``, refused (:class:`JSONRefused`) before it is read when it is larger
    than ``max_bytes``. Raises ``OSError`` and ``UnicodeDecodeError`` as ``Path.read_text`` does."""
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > max_bytes:
            raise JSONRefused(f"{size} bytes is over the {max_bytes}-byte limit for a JSON file")
        data = fh.read(max_bytes + 1)
    return data.decode("utf-8")


def load_file(path: Path, *, max_bytes: int = MAX_BYTES, max_depth: int = MAX_DEPTH) -> Any:
    """The JSON in ``path`` within the limits. Raises ``OSError`` (FileNotFoundError ...),
    ``UnicodeDecodeError`` or ``ValueError`` (:class:`JSONRefused` or ``json.JSONDecodeError``)."""
    return loads(read_text(path, max_bytes=max_bytes), max_bytes=max_bytes, max_depth=max_depth)


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether ``value`` nests containers more than ``limit`` deep (walked without recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False
