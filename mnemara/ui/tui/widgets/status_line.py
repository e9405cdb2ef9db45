"""The status line under the chat log: ``turns: n/max from row N | window tokens: used/max | model | cost | inbox``.

"window tokens" counts the pinned rows and the rolling window against
``max_window_tokens``; the context viewer's title shows the same number and,
apart from it, the whole next request (tool schemas, role doc, manifest too).

The line fits any width: it is made of :class:`StatusPart` s, each with a priority
and shorter forms. :func:`fit` shortens the least important parts first and drops
parts only when shortening is not enough; the busy state is never dropped, so
"working… Esc stops" shows at 80 columns whatever else is there. A new piece of
status is one more part in :meth:`Status.parts`.
"""
from __future__ import annotations

from dataclasses import dataclass

from rich.cells import cell_len
from rich.text import Text
from textual.widgets import Static

from mnemara.core.display import terminal_safe

SEPARATOR = " | "
DROP = 100  # dropping a part costs its priority plus this; shortening costs its priority
BUSY_FULL = "working… (Esc or /stop cancels)"
BUSY_SHORT = "working… Esc stops"


def human_tokens(n: int) -> str:
    """``950`` -> ``950``, ``14_200`` -> ``14K``, ``1_250_000`` -> ``1.2M``."""
    if n < 1000:
        return str(n)
    if n < 1_000_000:
        return f"{n // 1000}K"
    millions = n / 1_000_000
    return f"{millions:.1f}M".replace(".0M", "M")


@dataclass(frozen=True)
class StatusPart:
    """One piece of the status line: its full text, shorter forms (longest first) and priority.

    The cheapest change is made first: shortening a part costs its ``priority``, dropping it
    ``priority + DROP`` (so every part is shortened before any is dropped, unless its priority is
    below ``-DROP``); a ``keep`` part is never dropped."""

    text: str
    priority: int
    shorter: tuple[str, ...] = ()
    keep: bool = False


def fit(parts: list[StatusPart], width: int) -> str:
    """The parts joined by :data:`SEPARATOR` in at most ``width`` cells, the cheapest changes first."""
    forms = [0] * len(parts)  # which form of each part is shown (0: its full text)
    shown = [bool(part.text) for part in parts]

    def line() -> str:
        return SEPARATOR.join(_form(parts[i], forms[i]) for i in range(len(parts)) if shown[i])

    while cell_len(line()) > width:
        steps: list[tuple[int, int, bool]] = []  # (cost, -position, shorten?)
        for i, part in enumerate(parts):
            if not shown[i]:
                continue
            if forms[i] < len(part.shorter):
                steps.append((part.priority, -i, True))
            elif not part.keep:
                steps.append((part.priority + DROP, -i, False))
        if not steps:
            return _cut(line(), width)
        _, position, shorten = min(steps)
        if shorten:
            forms[-position] += 1
        else:
            shown[-position] = False
    return line()


def _cut(text: str, width: int) -> str:
    """``text`` cut to ``width`` cells, ending in an ellipsis."""
    cut = Text(text)
    cut.truncate(width, overflow="ellipsis")
    return cut.plain


def _form(part: StatusPart, index: int) -> str:
    return part.text if index == 0 else part.shorter[index - 1]


@dataclass(frozen=True)
class Status:
    turns: int
    max_turns: int
    tokens: int
    max_tokens: int
    model: str
    inbox: str  # the inbox's state text, or "inbox: n/a" when peer poll is not configured
    busy: bool = False
    oldest: int | None = None  # the oldest row id in the window (rows before it have left)
    cost: tuple[str, ...] = ()  # the spend's forms, longest first (mnemara.session.spend.SpendView)

    def parts(self) -> list[StatusPart]:
        """The pieces of the line, in display order, each with its priority and shorter forms."""
        turns = f"{self.turns}/{self.max_turns}"
        since = f" from row {self.oldest}" if self.oldest is not None else ""
        tokens = f"{human_tokens(self.tokens)}/{human_tokens(self.max_tokens)}"
        shown_model = terminal_safe(self.model)  # from config or an import: never obeyed by the terminal
        model = shown_model.removeprefix("claude-")
        parts = [
            StatusPart(f"turns: {turns}{since}", 60, (f"turns: {turns}", f"t {turns}") if since else (f"t {turns}",)),
            StatusPart(f"window tokens: {tokens}", 55, (f"tokens: {tokens}", f"tok {tokens}")),
            StatusPart(f"model: {shown_model}", 50, (shown_model, model)),
            StatusPart(self.inbox, -DROP if self.inbox.endswith("n/a") else 45),
        ]
        if self.cost:
            parts.insert(3, StatusPart(self.cost[0], 52, self.cost[1:]))
        if self.busy:
            parts.append(StatusPart(BUSY_FULL, 30, (BUSY_SHORT,), keep=True))
        return parts

    def line(self, width: int | None = None) -> str:
        """The whole line, or the line fitted into ``width`` cells."""
        parts = self.parts()
        if width is None:
            return SEPARATOR.join(part.text for part in parts if part.text)
        return fit(parts, width)


class StatusLine(Static):
    """Shows a :class:`Status` fitted to its width; the app pushes a new one after every turn or command."""

    status: Status | None = None

    def show_status(self, status: Status) -> None:
        self.status = status
        self.refresh()

    def render(self) -> Text:
        if self.status is None:
            return Text("")
        return Text(self.status.line(self.content_size.width or None), no_wrap=True)
