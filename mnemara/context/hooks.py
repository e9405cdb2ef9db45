"""Wire context discipline into an :class:`~mnemara.session.agent.AgentSession`.

:func:`install` adds a :class:`ContextDiscipline` part to the session. After every
persisted turn it notes the files the agent Read (for the manifest) and,
as the config says at that moment, runs ``evict_write_pairs`` on a turn that
wrote files (``auto_evict_after_write``) and collapses repeated Reads
(``compress_repeated_reads``, stubs protected when ``preserve_compressed_reads``).
When ``file_stat_manifest_enabled`` is on it sends the file-stat manifest: as a block of the
turn's message after the cached window (``request_layout`` ``"cache"``, the default: the
manifest changes whenever a file is Read or changes, and anything that changes before the
window makes the prompt cache write the whole window again), or at the bottom of the system
prompt, where the spec puts it (``request_layout`` ``"spec"``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from mnemara.core.debuglog import log_event
from mnemara.core.turn_parts import TurnPart

if TYPE_CHECKING:
    from mnemara.core.turn_parts import PartHost, TurnHost
    from mnemara.context.eviction import EvictionResult


def _log(session: TurnHost, result: EvictionResult) -> None:
    if result.rows:
        log_event(session.instance.debug_log_path, "eviction", strategy=result.strategy, rows=result.rows,
                  tokens_freed=result.tokens_freed, row_ids=result.row_ids[:1000], by="auto")


def after_turn(session: TurnHost, assistant_row_id: int) -> None:
    """The post-turn hook: track Reads, then the opt-in automatic evictions."""
    from mnemara.context.compress import compress_repeated_reads  # after the first answer, not before it
    from mnemara.context.eviction import evict_write_pairs, has_write_tool

    turn = session.store.get(assistant_row_id)
    session.tool_context.state.file_tracker.observe([turn])
    cfg = session.config
    if cfg.auto_evict_after_write and has_write_tool(turn) and not turn.pinned:
        _log(session, evict_write_pairs(session.store, [assistant_row_id]))
    if cfg.compress_repeated_reads:
        _log(session, compress_repeated_reads(session.store, protect=cfg.preserve_compressed_reads))


def manifest_text(session: TurnHost) -> str:
    """The file-stat manifest the next request carries ('' when off or no file was Read yet)."""
    if not session.config.file_stat_manifest_enabled:
        return ""
    return session.tool_context.state.file_tracker.manifest()


def manifest_extra(session: TurnHost) -> str:
    """The system-prompt extra: the manifest, in the spec's layout only."""
    return manifest_text(session) if session.config.request_layout == "spec" else ""


def manifest_context(session: TurnHost) -> str:
    """The per-turn block: the manifest after the cached window, in the cache layout."""
    return manifest_text(session) if session.config.request_layout == "cache" else ""


class ContextDiscipline(TurnPart):
    """Read tracking, the opt-in automatic evictions and the file-stat manifest, as one turn part."""

    name = "context"

    def after_turn(self, host: TurnHost, assistant_row_id: int) -> None:
        after_turn(host, assistant_row_id)

    def system_prompt_extra(self, host: TurnHost) -> str:
        return manifest_extra(host)

    def turn_context(self, host: TurnHost, text: str) -> str:
        return manifest_context(host)


def install(session: PartHost) -> ContextDiscipline:
    """Add the context part to ``session`` (once)."""
    for part in session.parts:
        if isinstance(part, ContextDiscipline):
            return part
    return session.add_part(ContextDiscipline())
