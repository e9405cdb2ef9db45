"""Eviction: strip bulky blocks from stored rows, or take whole rows out of the window.

Block strategies (the agent's tools and ``/evict tools|thinking``) rewrite rows
in place and report how many rows they touched and the estimated tokens freed:

* :func:`evict_thinking_blocks` drops ``thinking`` blocks, text and tool use kept.
* :func:`evict_tool_use_blocks` replaces each ``tool_use`` input with an audit
  shell (tool name + a short target) and its ``tool_result`` with a one-line stub.
* :func:`evict_write_pairs` stubs Edit/Write/MultiEdit/NotebookEdit bodies and
  the earlier Read results of the same path as ``{file_path, evicted: true}``.

Row strategies (``/evict user|assistant|N|last N``) soft-evict: rows stay on disk
with ``evicted=1``. Pinned rows are never touched by any of them.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterable

from mnemara.context.blocks import (
    READ_TOOL,
    STUB_PREFIX,
    WRITE_TOOLS,
    file_path_of,
    is_stub_result,
    is_stub_use,
    result_index,
    short_target,
    stub_result,
    tool_uses,
)
from mnemara.store.rows import Turn
from mnemara.store.turns import TurnStore
from mnemara.core.tokens import estimate_blocks


@dataclass
class EvictionResult:
    """What one eviction pass did."""

    strategy: str
    rows: int = 0
    tokens_freed: int = 0
    row_ids: list[int] = field(default_factory=list)
    skipped: list[int] = field(default_factory=list)  # requested ids that are not live, unpinned rows

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        text = f"{self.strategy}: {self.rows} row(s) touched, ~{self.tokens_freed} tokens freed"
        if self.skipped:
            text += f" (skipped ids not in the live window or pinned: {', '.join(map(str, self.skipped))})"
        return text


class RowRewrite:
    """Copy-on-write edits of a set of rows, committed in one transaction.

    Planners read :meth:`current` (so several strategies compose in memory)
    and write through :meth:`replace` / :meth:`set`; :meth:`tokens` gives a
    row's estimate after the edits so far.
    """

    def __init__(self, turns: list[Turn]) -> None:
        self.turns = turns
        self.by_id = {t.id: t for t in turns}
        self.new: dict[int, list[dict[str, Any]]] = {}
        self.protect: set[int] = set()
        self.touched: set[int] = set()  # rows changed since the last :meth:`take_touched`
        self._tokens: dict[int, int] = {}

    def current(self, turn: Turn) -> list[dict[str, Any]]:
        return self.new.get(turn.id, turn.blocks)

    def set(self, turn: Turn, blocks: list[dict[str, Any]]) -> None:
        self.new[turn.id] = blocks
        self.touched.add(turn.id)
        self._tokens.pop(turn.id, None)

    def replace(self, turn: Turn, index: int, block: dict[str, Any]) -> None:
        if turn.id not in self.new:
            self.new[turn.id] = list(turn.blocks)
        self.new[turn.id][index] = block
        self.touched.add(turn.id)
        self._tokens.pop(turn.id, None)

    def tokens(self, turn: Turn) -> int:
        if turn.id not in self.new:
            return turn.tokens
        if turn.id not in self._tokens:
            self._tokens[turn.id] = estimate_blocks(self.new[turn.id])
        return self._tokens[turn.id]

    def total(self) -> int:
        return sum(self.tokens(t) for t in self.turns)

    def take_touched(self) -> list[int]:
        out, self.touched = sorted(self.touched), set()
        return out

    def commit(self, store: TurnStore, result: EvictionResult | None = None, *, protect: bool = False) -> EvictionResult:
        """Write every changed row in one transaction; fills ``result`` with rows and tokens freed."""
        result = result or EvictionResult("rewrite")
        updates = []
        for tid, blocks in self.new.items():
            old = self.by_id[tid]
            if blocks == old.blocks:
                continue
            updates.append((tid, blocks, True if (protect and tid in self.protect) else None))
            result.rows += 1
            result.tokens_freed += max(0, old.tokens - self.tokens(old))
            result.row_ids.append(tid)
        if updates:
            store.set_blocks_many(updates)
        result.row_ids.sort()
        return result


def select_rows(live: list[Turn], ids: Iterable[int] | None) -> tuple[list[Turn], list[int]]:
    """The rows of ``live`` named by ``ids`` (all when None), plus requested ids not among them."""
    if ids is None:
        return live, []
    wanted = {int(i) for i in ids}
    chosen = [t for t in live if t.id in wanted]
    return chosen, sorted(wanted - {t.id for t in chosen})


# -- planners: edit a RowRewrite in memory; ``selected`` None means every row --------
def plan_thinking(rw: RowRewrite, selected: set[int] | None = None) -> None:
    for turn in rw.turns:
        if selected is not None and turn.id not in selected:
            continue
        blocks = rw.current(turn)
        kept = [b for b in blocks if b.get("type") not in ("thinking", "redacted_thinking")]
        if len(kept) != len(blocks):
            rw.set(turn, kept)


def tool_use_shell(block: dict[str, Any]) -> dict[str, Any]:
    """The audit shell of a ``tool_use`` block: same id and name, input reduced to a short target."""
    out = {k: v for k, v in block.items() if k != "input"}
    out["input"] = {"target": short_target(str(block.get("name", "")), block.get("input")), "evicted": True}
    return out


def plan_tool_use(rw: RowRewrite, selected: set[int] | None = None) -> None:
    results = result_index(rw.turns, rw.current)
    for turn, i, block in list(tool_uses(rw.turns, rw.current)):
        if selected is not None and turn.id not in selected:
            continue
        if not is_stub_use(block):
            rw.replace(turn, i, tool_use_shell(block))
        found = results.get(str(block.get("id")))
        if found:
            rturn, ri = found
            rblock = rw.current(rturn)[ri]
            if not is_stub_result(rblock):
                size = estimate_blocks([rblock])
                rw.replace(rturn, ri, stub_result(rblock, f"{STUB_PREFIX} tool result, ~{size} tokens]"))


def file_stub(path: str) -> dict[str, Any]:
    return {"file_path": path, "evicted": True}


def plan_write_pairs(rw: RowRewrite, selected: set[int] | None = None) -> None:
    results = result_index(rw.turns, rw.current)
    earlier_reads: dict[str, list[tuple[Turn, int, dict[str, Any]]]] = {}

    def stub_call(turn: Turn, i: int, block: dict[str, Any], path: str) -> None:
        if not is_stub_use(block):
            out = {k: v for k, v in block.items() if k != "input"}
            out["input"] = file_stub(path)
            rw.replace(turn, i, out)
        found = results.get(str(block.get("id")))
        if found:
            rturn, ri = found
            rblock = rw.current(rturn)[ri]
            if not is_stub_result(rblock):
                rw.replace(rturn, ri, stub_result(rblock, json.dumps(file_stub(path), ensure_ascii=False)))

    for turn, i, block in list(tool_uses(rw.turns, rw.current)):
        name = block.get("name")
        path = file_path_of(block)
        if path is None:
            continue
        if name == READ_TOOL:
            earlier_reads.setdefault(path, []).append((turn, i, block))
        elif name in WRITE_TOOLS and (selected is None or turn.id in selected):
            stub_call(turn, i, block, path)
            for rturn, ri, rblock in earlier_reads.pop(path, []):
                stub_call(rturn, ri, rblock, path)


def _run(store: TurnStore, name: str, planner: Callable[[RowRewrite, set[int] | None], object],
         ids: Iterable[int] | None) -> EvictionResult:
    live = store.live_rows()
    rows, skipped = select_rows(live, ids)
    rw = RowRewrite(live)
    planner(rw, None if ids is None else {t.id for t in rows})
    return rw.commit(store, EvictionResult(name, skipped=skipped))


def evict_thinking_blocks(store: TurnStore, ids: Iterable[int] | None = None) -> EvictionResult:
    """Drop ``thinking`` / ``redacted_thinking`` blocks from the selected rows."""
    return _run(store, "evict_thinking_blocks", plan_thinking, ids)


def evict_tool_use_blocks(store: TurnStore, ids: Iterable[int] | None = None) -> EvictionResult:
    """Reduce every tool call in the selected rows to its audit shell; stub its result (in any live row)."""
    return _run(store, "evict_tool_use_blocks", plan_tool_use, ids)


def evict_write_pairs(store: TurnStore, ids: Iterable[int] | None = None) -> EvictionResult:
    """Stub write-tool bodies in the selected rows and every earlier Read of the same path.

    A Read earlier than a stubbed write (in any live row) is reduced to
    ``{file_path, evicted: true}``, its result too; the write keeps its name and path.
    """
    return _run(store, "evict_write_pairs", plan_write_pairs, ids)


def has_write_tool(turn: Turn) -> bool:
    return any(b.get("type") == "tool_use" and b.get("name") in WRITE_TOOLS for b in turn.blocks)


# -- whole rows -------------------------------------------------------------------
def _evict_rows(store: TurnStore, strategy: str, rows: list[Turn]) -> EvictionResult:
    result = EvictionResult(strategy)
    if rows:
        result.rows = store.evict(t.id for t in rows)
        result.tokens_freed = sum(t.tokens for t in rows)
        result.row_ids = sorted(t.id for t in rows)
    return result


def evict_role(store: TurnStore, role: str) -> EvictionResult:
    """Take every live unpinned row of ``role`` out of the window."""
    return _evict_rows(store, f"evict {role}", [t for t in store.live_rows() if t.role == role])


def evict_oldest(store: TurnStore, n: int) -> EvictionResult:
    """Take the ``n`` oldest live unpinned rows out of the window."""
    return _evict_rows(store, f"evict {n} oldest", store.live_rows()[:n])


def evict_newest(store: TurnStore, n: int) -> EvictionResult:
    """Take the ``n`` newest live unpinned rows out of the window (roll back a bad turn)."""
    return _evict_rows(store, f"evict last {n}", store.live_rows(limit=n))


def clear_window(store: TurnStore) -> EvictionResult:
    """Everything but the pinned rows leaves the window; reports the tokens freed."""
    rows, tokens = store.clear()
    return EvictionResult("clear", rows=rows, tokens_freed=tokens)


# -- stats --------------------------------------------------------------------------
def eviction_stats(store: TurnStore) -> dict[str, Any]:
    """Where the window's tokens are: per block kind and per role, plus row counts."""
    live = store.live_rows()
    pinned = store.pinned()
    by_kind: dict[str, int] = {}
    by_role: dict[str, int] = {}
    stubs = 0
    for turn in live:
        by_role[turn.role] = by_role.get(turn.role, 0) + 1
        for block in turn.blocks:
            kind = str(block.get("type"))
            by_kind[kind] = by_kind.get(kind, 0) + estimate_blocks([block])
            if (kind == "tool_use" and is_stub_use(block)) or (kind == "tool_result" and is_stub_result(block)):
                stubs += 1
    counts = store.counts()
    return {
        "live_rows": len(live),
        "pinned_rows": len(pinned),
        "evicted_rows": counts["evicted"],
        "protected_rows": sum(1 for t in live if t.protected),
        "live_tokens": sum(t.tokens for t in live),
        "pinned_tokens": sum(t.tokens for t in pinned),
        "tokens_by_block": dict(sorted(by_kind.items())),
        "rows_by_role": dict(sorted(by_role.items())),
        "stubbed_blocks": stubs,
        "write_turns": sum(1 for t in live if has_write_tool(t)),
    }


def format_stats(stats: dict[str, Any]) -> str:
    lines = [
        f"window: {stats['live_rows']} live rows (~{stats['live_tokens']} tokens), "
        f"{stats['pinned_rows']} pinned (~{stats['pinned_tokens']} tokens), {stats['evicted_rows']} evicted on disk",
        "tokens by block: " + (", ".join(f"{k} ~{v}" for k, v in stats["tokens_by_block"].items()) or "none"),
        "rows by role: " + (", ".join(f"{k} {v}" for k, v in stats["rows_by_role"].items()) or "none"),
        f"stubbed blocks: {stats['stubbed_blocks']}, protected rows: {stats['protected_rows']}, "
        f"turns with writes: {stats['write_turns']}",
    ]
    return "\n".join(lines)
