"""Anthropic's prompt cache, emulated for the scripted Messages API.

The scripted server prices every request the way Anthropic's documented prompt-cache rules
would, so tests and benches measure cost through the real path (our code -> SDK -> CLI -> usage):

- the prompt is read as one sequence of blocks: every tool definition, then every ``system``
  block, then every content block of every message (a string ``content`` is one block);
- a block carrying ``cache_control: {"type": "ephemeral"}`` is a breakpoint (``"ttl": "1h"``
  for the 1-hour cache; 5 minutes otherwise), at most 4 per request; a 1-hour breakpoint after
  a 5-minute one, an unknown ttl or a fifth breakpoint is refused as the API refuses it (400);
- at each breakpoint the cache is looked up at the breakpoint's block boundary and the
  boundaries before it, 20 boundaries in all (the breakpoint's own included): the longest
  prefix found cached (and not expired) is read;
- every breakpoint whose prefix holds at least ``min_tokens`` (1,024) tokens is then written;
  a read or a write (re)starts the entry's lifetime;
- ``cache_read_input_tokens`` is the prefix read, ``cache_creation_input_tokens`` what the
  breakpoints wrote past it (split by TTL in ``cache_creation``), and ``input_tokens`` only what
  comes after the last prefix read or written.

A prefix is identified by the blocks' content without their ``cache_control`` (moving a mark
does not change what is cached) and by the message role each block sits in, under one model.
Tokens are the project's estimate (:mod:`mnemara.core.tokens`, about four characters a token).
The clock is injectable (:class:`ManualClock`) so expiry is tested without sleeping.
"""
from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from mnemara.core.errors import MnemaraError
from mnemara.core.tokens import estimate_blocks, estimate_text

__all__ = ["PromptCache", "CacheUsage", "CacheRuleError", "ManualClock", "prompt_blocks", "PromptBlock",
           "TTL_SECONDS", "MIN_CACHEABLE_TOKENS", "LOOKBACK_BLOCKS", "MAX_BREAKPOINTS"]

#: The documented lifetimes of a cache entry, by the ``ttl`` of its ``cache_control``.
TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}
#: The shortest prefix the cache keeps (Sonnet and Opus; set ``min_tokens`` for other models).
MIN_CACHEABLE_TOKENS = 1024
#: Block boundaries a breakpoint's lookup checks, its own included.
LOOKBACK_BLOCKS = 20
MAX_BREAKPOINTS = 4


class CacheRuleError(MnemaraError, ValueError):
    """A request the real API would refuse for its ``cache_control`` marks (answered 400)."""


class ManualClock:
    """A clock that moves only when told: ``clock.advance(301)`` lets a 5-minute entry expire."""

    def __init__(self, start: float = 0.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@dataclass(frozen=True)
class PromptBlock:
    """One block of a request's prompt as the cache sees it."""

    where: str  # "tools[3]", "system[1]", "messages[4].content[0]"
    tokens: int
    ttl: str | None  # the breakpoint's TTL ("5m" / "1h"), None when the block is not a breakpoint
    prefix_key: str  # identifies the prompt up to and including this block


@dataclass
class CacheUsage:
    """What one request read from, wrote to and sent past the cache, in tokens."""

    input_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_5m: int = 0
    cache_creation_1h: int = 0
    breakpoints: list[int] = field(default_factory=list)  # block indexes of the request's breakpoints

    @property
    def cache_creation_input_tokens(self) -> int:
        return self.cache_creation_5m + self.cache_creation_1h

    @property
    def total_input_tokens(self) -> int:
        return self.input_tokens + self.cache_read_input_tokens + self.cache_creation_input_tokens

    def as_usage(self) -> dict[str, Any]:
        """The fields of the API's ``usage`` object."""
        return {"input_tokens": self.input_tokens,
                "cache_creation_input_tokens": self.cache_creation_input_tokens,
                "cache_read_input_tokens": self.cache_read_input_tokens,
                "cache_creation": {"ephemeral_5m_input_tokens": self.cache_creation_5m,
                                   "ephemeral_1h_input_tokens": self.cache_creation_1h}}


def _breakpoint_ttl(block: dict[str, Any], where: str) -> str | None:
    mark = block.get("cache_control")
    if mark is None:
        return None
    if not isinstance(mark, dict) or mark.get("type") != "ephemeral":
        raise CacheRuleError(f"{where}.cache_control: only {{'type': 'ephemeral'}} is supported, got {mark!r}")
    ttl = mark.get("ttl", "5m")
    if ttl not in TTL_SECONDS:
        raise CacheRuleError(f"{where}.cache_control.ttl: must be '5m' or '1h', got {ttl!r}")
    return str(ttl)


def _block_tokens(block: dict[str, Any], section: str) -> int:
    if section == "tools":
        return estimate_text(json.dumps(block, sort_keys=True))
    return estimate_blocks([block])


def prompt_blocks(body: dict[str, Any]) -> list[PromptBlock]:
    """The request's prompt as the cache reads it: tools, then system, then every message's blocks."""
    digest = hashlib.sha256(str(body.get("model", "")).encode())
    out: list[PromptBlock] = []

    def add(block: dict[str, Any], where: str, section: str, role: str) -> None:
        content = {k: v for k, v in block.items() if k != "cache_control"}
        digest.update(json.dumps([section, role, content], sort_keys=True).encode())
        out.append(PromptBlock(where, _block_tokens(content, section), _breakpoint_ttl(block, where),
                               digest.copy().hexdigest()))

    for i, tool in enumerate(body.get("tools") or []):
        if isinstance(tool, dict):
            add(tool, f"tools[{i}]", "tools", "")
    system = body.get("system")
    if isinstance(system, str) and system:
        add({"type": "text", "text": system}, "system", "system", "")
    elif isinstance(system, list):
        for i, block in enumerate(system):
            if isinstance(block, dict):
                add(block, f"system[{i}]", "system", "")
    for m, message in enumerate(body.get("messages") or []):
        if not isinstance(message, dict):
            continue
        role = str(message.get("role", ""))
        digest.update(b"\x00message")  # two messages are not one message with both blocks
        content = message.get("content")
        if isinstance(content, str):
            add({"type": "text", "text": content}, f"messages[{m}].content", "messages", role)
        elif isinstance(content, list):
            for i, block in enumerate(content):
                if isinstance(block, dict):
                    add(block, f"messages[{m}].content[{i}]", "messages", role)
    return out


@dataclass
class _Entry:
    ttl: str
    expires: float


class PromptCache:
    """The cache of one organisation: prefixes written by earlier requests, with their expiry."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, *, min_tokens: int = MIN_CACHEABLE_TOKENS,
                 lookback: int = LOOKBACK_BLOCKS) -> None:
        self.clock = clock
        self.min_tokens = min_tokens
        self.lookback = lookback
        self._entries: dict[str, _Entry] = {}
        self._lock = threading.Lock()

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def account(self, body: dict[str, Any]) -> CacheUsage:
        """Price one request against the cache, then write its breakpoints. Raises CacheRuleError."""
        blocks = prompt_blocks(body)
        marks = [i for i, b in enumerate(blocks) if b.ttl is not None]
        if len(marks) > MAX_BREAKPOINTS:
            raise CacheRuleError(f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. "
                                 f"Found {len(marks)}.")
        seen_5m = False
        for i in marks:
            if blocks[i].ttl == "5m":
                seen_5m = True
            elif seen_5m:
                raise CacheRuleError(f"{blocks[i].where}: a ttl='1h' cache_control block must not come after "
                                     "a ttl='5m' cache_control block")
        ends = []  # ends[i]: tokens of the prompt up to and including block i
        total = 0
        for b in blocks:
            total += b.tokens
            ends.append(total)
        with self._lock:
            now = self.clock()
            self._entries = {k: e for k, e in self._entries.items() if e.expires > now}
            read_at = -1  # the last block of the longest cached prefix found
            for mark in marks:
                for i in range(mark, max(-1, mark - self.lookback), -1):
                    if i > read_at and blocks[i].prefix_key in self._entries:
                        read_at = i
                        break
            usage = CacheUsage(breakpoints=marks)
            covered = ends[read_at] if read_at >= 0 else 0
            usage.cache_read_input_tokens = covered
            if read_at >= 0:
                hit = self._entries[blocks[read_at].prefix_key]
                hit.expires = now + TTL_SECONDS[hit.ttl]
            for mark in marks:
                ttl = blocks[mark].ttl
                assert ttl is not None
                if ends[mark] < self.min_tokens:
                    continue  # processed without caching, as documented
                entry = self._entries.get(blocks[mark].prefix_key)
                if entry is None or TTL_SECONDS[ttl] > TTL_SECONDS[entry.ttl]:
                    self._entries[blocks[mark].prefix_key] = entry = _Entry(ttl, 0.0)
                entry.expires = max(entry.expires, now + TTL_SECONDS[entry.ttl])
                if ends[mark] > covered:
                    written = ends[mark] - covered
                    if ttl == "1h":
                        usage.cache_creation_1h += written
                    else:
                        usage.cache_creation_5m += written
                    covered = ends[mark]
            usage.input_tokens = total - covered
        return usage
