"""Compression: bring the window down to a token target, or collapse repeated Reads.

:func:`compress_to` applies, in order, the cheap and safe strategies first and
stops as soon as the target is met: strip thinking -> stub write pairs -> reduce
tool calls to audit shells -> FIFO (oldest live rows leave the window). Pinned
rows are never touched; with ``preserve_protected`` compression stubs are kept
through FIFO like pins.

:func:`compress_repeated_reads` keeps the latest Read of each file whole and
replaces earlier ones by a unified diff against it, or "unchanged".

:func:`build_audit_prompt` writes the ``/compress smart`` turn: a table of the
window and instructions for the agent to choose what to evict itself.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass, field, replace
from typing import Any

from mnemara.context.blocks import (
    READ_TOOL,
    STUB_PREFIX,
    file_path_of,
    is_stub_result,
    result_index,
    result_text,
    stub_result,
    tool_uses,
)
from mnemara.context.eviction import (
    EvictionResult,
    RowRewrite,
    plan_thinking,
    plan_tool_use,
    plan_write_pairs,
)
from mnemara.store.rows import Turn
from mnemara.store.turns import TurnStore
from mnemara.core.tokens import estimate_blocks, estimate_text

DEFAULT_FRACTION = 0.25
AUDIT_MAX_ROWS = 200
MIN_SIMILARITY = 0.5  # below this share of common lines a diff cannot beat the text


def window_tokens(store: TurnStore) -> int:
    """Tokens of everything the next turn could carry: pinned rows plus live rows."""
    return int(store.counts()["live_tokens"])


@dataclass
class CompressReport:
    before: int
    target: int
    after: int = 0
    stages: list[EvictionResult] = field(default_factory=list)
    kept_last: list[int] = field(default_factory=list)  # the last exchange's rows, which always stay

    @property
    def reached(self) -> bool:
        return self.after <= self.target

    def summary(self) -> str:
        lines = [f"compressed ~{self.before} -> ~{self.after} tokens (target {self.target})"]
        lines += [f"  {s.summary()}" for s in self.stages if s.rows]
        if not self.reached:
            lines.append(f"  target not reached: what is left is {_kept_words(self.kept_last)}, pinned or protected rows")
        elif self.kept_last:
            lines.append(f"  {_kept_words(self.kept_last)} stays in the window")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "before": self.before,
            "target": self.target,
            "after": self.after,
            "reached": self.reached,
            "stages": [s.to_dict() for s in self.stages],
            "kept_last": self.kept_last,
        }


def _kept_words(ids: list[int]) -> str:
    if not ids:
        return "nothing of the conversation"
    span = f"rows {ids[0]}-{ids[-1]}" if len(ids) > 1 else f"row {ids[0]}"
    return f"the last exchange ({span})"


def default_target(store: TurnStore) -> int:
    """25% of the current token count (at least 1); ``/compress`` measures against the budget instead."""
    return max(1, int(window_tokens(store) * DEFAULT_FRACTION))


def budget_target(max_window_tokens: int, fraction: float = DEFAULT_FRACTION) -> int:
    """``fraction`` of the window's token budget (``max_window_tokens``), not of what is in it now."""
    return max(1, int(max_window_tokens * fraction))


def last_exchange(live: list[Turn]) -> list[Turn]:
    """The newest user row and every live row after it (the newest row alone when no user row is live):
    what compression never takes out of the window, so it can never empty the conversation."""
    start = next((i for i in range(len(live) - 1, -1, -1) if live[i].role == "user"), len(live) - 1)
    return live[max(start, 0):]


def _fifo_doomed(live: list[Turn], total: int, target: int, preserve_protected: bool) -> list[Turn]:
    doomed: list[Turn] = []
    kept = {t.id for t in last_exchange(live)}
    for turn in live:
        if total <= target or turn.id in kept:
            break
        if preserve_protected and turn.protected:
            continue
        doomed.append(turn)
        total -= turn.tokens
    return doomed


def evict_fifo(store: TurnStore, target: int, *, preserve_protected: bool = False,
               live: list[Turn] | None = None, total: int | None = None) -> EvictionResult:
    """Evict the oldest live unpinned rows until the window fits ``target`` tokens."""
    result = EvictionResult("fifo")
    total = window_tokens(store) if total is None else total
    doomed = _fifo_doomed(store.live_rows() if live is None else live, total, target, preserve_protected)
    if doomed:
        result.rows = store.evict(t.id for t in doomed)
        result.tokens_freed = sum(t.tokens for t in doomed)
        result.row_ids = [t.id for t in doomed]
    return result


STAGES = (
    ("evict_thinking_blocks", plan_thinking),
    ("evict_write_pairs", plan_write_pairs),
    ("evict_tool_use_blocks", plan_tool_use),
)
STAGE_WORDS = {
    "evict_thinking_blocks": "drop thinking blocks in",
    "evict_write_pairs": "stub finished edits (and the Reads before them) in",
    "evict_tool_use_blocks": "reduce tool calls and results to one-line shells in",
    "fifo": "take out of the window (kept on disk) the oldest",
}


@dataclass
class CompressPlan:
    """What :func:`compress_to` would do, computed in memory; nothing is written until :func:`apply_plan`."""

    before: int
    target: int
    after: int
    rewrite: RowRewrite
    stages: list[EvictionResult]
    fifo: list[Turn]
    kept_last: list[int] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.fifo and not any(s.rows for s in self.stages)

    def describe(self) -> list[str]:
        """One line per step, for a confirmation question."""
        lines = [f"{STAGE_WORDS[s.strategy]} {s.rows} row(s), ~{s.tokens_freed} tokens"
                 for s in self.stages if s.rows]
        if self.fifo:
            ids = [t.id for t in self.fifo]
            span = f"rows {ids[0]}-{ids[-1]}" if len(ids) > 1 else f"row {ids[0]}"
            lines.append(f"{STAGE_WORDS['fifo']} {len(ids)} row(s) ({span}), ~{sum(t.tokens for t in self.fifo)} tokens")
        if self.kept_last:
            lines.append(f"keep {_kept_words(self.kept_last)} whatever the target: /compress never empties the window")
        return lines


def plan_compress(store: TurnStore, target: int, *, preserve_protected: bool = False) -> CompressPlan:
    """Plan the cheapest strategies first (see module doc) until the window fits ``target`` tokens."""
    if target <= 0:
        raise ValueError("target must be a positive token count")
    pinned = sum(t.tokens for t in store.pinned())
    live = store.live_rows()
    rw = RowRewrite(live)
    current = pinned + rw.total()
    before = current
    stages: list[EvictionResult] = []
    for name, planner in STAGES:
        if current <= target:
            break
        planner(rw)
        after = pinned + rw.total()
        touched = rw.take_touched()
        stages.append(EvictionResult(name, rows=len(touched), tokens_freed=max(0, current - after), row_ids=touched))
        current = min(current, after)
    fifo: list[Turn] = []
    if current > target:
        rewritten = [replace(t, blocks=rw.current(t), tokens=rw.tokens(t)) for t in live]
        fifo = _fifo_doomed(rewritten, current, target, preserve_protected)
        current -= sum(t.tokens for t in fifo)
    return CompressPlan(before=before, target=target, after=max(current, pinned), rewrite=rw, stages=stages, fifo=fifo,
                        kept_last=[t.id for t in last_exchange(live)])


def apply_plan(store: TurnStore, plan: CompressPlan) -> CompressReport:
    """Write a plan: the block rewrites in one transaction, then the FIFO eviction."""
    report = CompressReport(before=plan.before, target=plan.target, stages=list(plan.stages), kept_last=plan.kept_last)
    plan.rewrite.commit(store)
    if plan.fifo:
        fifo = EvictionResult("fifo", row_ids=[t.id for t in plan.fifo], tokens_freed=sum(t.tokens for t in plan.fifo))
        fifo.rows = store.evict(fifo.row_ids)
        report.stages.append(fifo)
    report.after = window_tokens(store)
    return report


def compress_to(store: TurnStore, target: int, *, preserve_protected: bool = False) -> CompressReport:
    """Shrink the window to ``target`` tokens, cheapest strategy first (see module doc).

    The block strategies are planned in memory on one read of the window and
    written in one transaction; FIFO then evicts whole rows if still needed.
    """
    return apply_plan(store, plan_compress(store, target, preserve_protected=preserve_protected))


# -- repeated reads -------------------------------------------------------------
def _read_key(block: dict[str, Any]) -> tuple[str, Any, Any] | None:
    path = file_path_of(block)
    if path is None:
        return None
    inp = block.get("input") or {}
    return path, inp.get("offset"), inp.get("limit")


def compress_repeated_reads(store: TurnStore, *, protect: bool = False) -> EvictionResult:
    """Keep the latest Read of each file (same range) whole; stub earlier ones.

    An earlier result becomes "unchanged" when identical to the latest, else a
    unified diff from the latest to it (so it can be rebuilt), unless the diff
    would not be smaller. With ``protect`` the stubbed rows are marked protected.
    """
    live = store.live_rows()
    results = result_index(live)
    groups: dict[tuple[str, Any, Any], list[tuple[Turn, int, dict[str, Any]]]] = {}
    for turn, _i, block in tool_uses(live):
        if block.get("name") != READ_TOOL:
            continue
        key = _read_key(block)
        found = results.get(str(block.get("id")))
        if key is None or found is None:
            continue
        rturn, ri = found
        if is_stub_result(rturn.blocks[ri]):
            continue
        groups.setdefault(key, []).append((rturn, ri, rturn.blocks[ri]))
    rw = RowRewrite(live)
    for (path, _off, _lim), reads in groups.items():
        if len(reads) < 2:
            continue
        latest_turn, _li, latest_block = reads[-1]
        latest = result_text(latest_block)
        for rturn, ri, rblock in reads[:-1]:
            text = result_text(rblock)
            if text == latest:
                stub = f"{STUB_PREFIX} repeated Read of {path}: unchanged, identical to the Read in row {latest_turn.id}]"
            else:
                old_lines, new_lines = latest.splitlines(keepends=True), text.splitlines(keepends=True)
                if difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False).quick_ratio() < MIN_SIMILARITY:
                    continue  # mostly different: a diff would not be smaller than the text
                diff = "".join(
                    difflib.unified_diff(
                        old_lines,
                        new_lines,
                        fromfile=f"{path} (row {latest_turn.id}, latest)",
                        tofile=f"{path} (row {rturn.id}, this Read)",
                    )
                )
                stub = f"{STUB_PREFIX} repeated Read of {path}: diff against the later Read in row {latest_turn.id}]\n{diff}"
                if estimate_text(stub) >= estimate_blocks([rblock]):
                    continue
            rw.replace(rturn, ri, stub_result(rblock, stub))
            rw.protect.add(rturn.id)
    return rw.commit(store, EvictionResult("compress_repeated_reads"), protect=protect)


# -- /compress smart ----------------------------------------------------------------
def _row_summary(turn: Turn) -> tuple[str, str]:
    kinds: dict[str, int] = {}
    for block in turn.blocks:
        kind = str(block.get("type"))
        if kind == "tool_use":
            kind = f"tool_use:{block.get('name')}"
        kinds[kind] = kinds.get(kind, 0) + 1
    blocks = ", ".join(f"{k}x{v}" if v > 1 else k for k, v in kinds.items()) or "empty"
    preview = " ".join(turn.text.split())[:60].replace("|", "/")
    return blocks, preview


def build_audit_prompt(store: TurnStore, max_window_tokens: int) -> str:
    """The structured turn ``/compress smart`` sends so the agent audits its own window."""
    live = store.live_rows()
    pinned = store.pinned()
    shown = live
    if len(live) > AUDIT_MAX_ROWS:
        biggest = sorted(live, key=lambda t: t.tokens, reverse=True)[:AUDIT_MAX_ROWS]
        shown = sorted(biggest, key=lambda t: t.id)
    total = sum(t.tokens for t in live) + sum(t.tokens for t in pinned)
    lines = [
        "[MNEMARA CONTEXT AUDIT] This is a context-maintenance turn requested by the user, not a new task.",
        f"Your window holds {len(live)} rows (~{total} tokens of a {max_window_tokens}-token cap); "
        f"{len(pinned)} pinned slot(s) (~{sum(t.tokens for t in pinned)} tokens) stay whatever you decide.",
        "",
        "Review the rows below and decide, for each bulky one, whether the current work still needs it.",
        "",
        "| row | role | ~tokens | blocks | starts with |",
        "|---|---|---|---|---|",
    ]
    lines += [f"| {t.id} | {t.role} | {t.tokens} | {_row_summary(t)[0]} | {_row_summary(t)[1]} |" for t in shown]
    if len(shown) < len(live):
        lines.append(f"({len(live) - len(shown)} smaller rows not listed)")
    lines += [
        "",
        "Act with your tools, passing the row ids you chose as `row_ids`:",
        "- mcp__mnemara__evict_thinking_blocks: drop reasoning you no longer need.",
        "- mcp__mnemara__evict_write_pairs: stub finished edits and the Reads that preceded them.",
        "- mcp__mnemara__evict_tool_use_blocks: reduce old tool calls and results to their audit shell.",
        "- mcp__mnemara__upsert_slot: first move any fact you must keep into a pinned slot.",
        "",
        "Then answer in this shape:",
        "KEEP: row ids you kept and why (one line each)",
        "EVICTED: what you evicted, with which tool, and the tokens freed",
        "ASK: anything you were unsure about, for the user to decide",
    ]
    return "\n".join(lines)
