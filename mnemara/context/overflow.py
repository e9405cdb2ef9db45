"""Recovery when the API answers "prompt is too long".

The API counts tokens its own way; Mnemara estimates about four characters a
token. When a request is refused as too long, :func:`plan` takes the ratio the
error states (``215000 tokens > 200000 maximum``; 0.5 when it states none),
aims a little lower, and picks the oldest live unpinned rows of the window to
evict until the estimate fits. Pinned rows and slots are never evicted: when
they (with the role doc and the new message) cannot fit on their own, the plan
says so and names them, so the user knows what to unpin or shorten.
The session evicts the planned rows (kept on disk, like any eviction), tells
the user in one line and retries the turn once.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from mnemara.store.rows import Turn, Window

_TOO_LONG = re.compile(r"prompt is too long|prompt_too_long|input is too long", re.IGNORECASE)
# the API: "215000 tokens > 200000 maximum"; the Claude CLI rewords it: "~215000 tokens (limit 200000)"
_COUNTS = re.compile(r"(\d[\d,]*)\s*tokens?\s*(?:>|\(limit)\s*(\d[\d,]*)")
SAFETY = 0.85  # aim below the stated maximum: our estimate is not the API's count
FALLBACK_RATIO = 0.5


def is_overflow(*texts: str) -> bool:
    """Whether an API failure text says the prompt was too long."""
    return any(_TOO_LONG.search(t or "") for t in texts)


def stated_ratio(*texts: str) -> float | None:
    """``maximum / actual`` from an error like ``215000 tokens > 200000 maximum``."""
    for text in texts:
        m = _COUNTS.search(text or "")
        if m:
            actual, maximum = (int(g.replace(",", "")) for g in m.groups())
            if actual > 0 and 0 < maximum < actual:
                return maximum / actual
    return None


@dataclass
class OverflowPlan:
    """What to evict (oldest first), or why nothing can help."""

    evict: list[Turn] = field(default_factory=list)
    target: int = 0
    estimate: int = 0
    fixed_tokens: int = 0
    pinned: list[Turn] = field(default_factory=list)

    @property
    def tokens_freed(self) -> int:
        return sum(t.tokens for t in self.evict)

    @property
    def fits(self) -> bool:
        return self.estimate - self.tokens_freed <= self.target

    def notice(self) -> str:
        """One line for the user about what was evicted before the retry."""
        ids = [t.id for t in self.evict]
        shown = ", ".join(map(str, ids[:12])) + (f" … ({len(ids)} rows)" if len(ids) > 12 else "")
        return (f"prompt too long for the model: evicted the {len(ids)} oldest unpinned row(s) "
                f"(~{self.tokens_freed} tokens; ids {shown}; kept on disk, `mnemara show --all` lists them) "
                "and retrying once")

    def too_big(self) -> str:
        """Why no eviction can help: the pinned rows (named) and the fixed parts alone are too big."""
        pins = sorted(self.pinned, key=lambda t: -t.tokens)
        named = ", ".join(f"{t.pin_label} (row {t.id}, ~{t.tokens} tokens)" for t in pins[:8])
        more = f" and {len(pins) - 8} more" if len(pins) > 8 else ""
        return (f"prompt too long even with an empty rolling window: pinned slots ~{sum(t.tokens for t in pins)} "
                f"tokens ({named or 'none'}{more}) plus role doc and message ~{self.fixed_tokens} tokens, against "
                f"about {self.target} that fit; unpin or shorten them (/unpin LABEL) and send again")


def plan(window: Window, fixed_tokens: int, *failure_texts: str) -> OverflowPlan:
    """Rows to evict so the next request fits (see the module docstring)."""
    estimate = fixed_tokens + window.tokens
    ratio = stated_ratio(*failure_texts) or FALLBACK_RATIO
    out = OverflowPlan(target=int(estimate * ratio * SAFETY), estimate=estimate, fixed_tokens=fixed_tokens,
                       pinned=list(window.pinned))
    if fixed_tokens + sum(t.tokens for t in window.pinned) > out.target:
        return out  # nothing evictable can help; the caller reports too_big()
    for turn in window.rows:  # oldest first
        if out.fits:
            break
        out.evict.append(turn)
    return out
