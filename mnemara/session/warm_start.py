"""What a session starts before it is needed, so the user does not wait for it.

* The next turn's CLI process (``warm_spare``): started when a turn ends, or
  when a UI opens (:meth:`AgentSession.prewarm`), with the options the next
  turn will likely need; :mod:`mnemara.claude.pool` keeps it.
* The heavy backends: after the first turn (the user is reading), LanceDB and
  Kuzu are imported in the background, through the one guarded loader, for an
  instance that already has an index / a graph on disk. Never at start (it
  would fight the SDK import and the CLI start-up for the CPU) and never for an
  instance that has not used them: there the first use imports them.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from mnemara.core.backend_loader import preload_backend
from mnemara.core.debuglog import log_event

if TYPE_CHECKING:
    from mnemara.claude.options import CliLauncher
    from mnemara.claude.pool import CliPool
    from mnemara.core.config import ConfigSource
    from mnemara.store.instance import Instance


@dataclass(frozen=True)
class WarmNeeds:
    """What a :class:`WarmStart` uses of its session, and nothing more."""

    config: ConfigSource  # the one live config (rag_enabled, graph_enabled)
    instance: Instance  # where the index and the graph live, the debug log
    pool: CliPool  # keeps the spare
    launcher: CliLauncher  # starts it
    next_prompt: Callable[[], str]  # the system prompt the next turn will likely send (config re-read)
    is_closed: Callable[[], bool]
    recall_elsewhere: Callable[[], bool]  # a recall worker holds the index (not loaded in this process)


class WarmStart:
    """Starts one session's next CLI process and its backends ahead of need."""

    def __init__(self, needs: WarmNeeds, *, enabled: bool) -> None:
        self.needs = needs
        self.enabled = enabled  # the session's warm_spare
        self._backends_warmed = False

    def next_cli(self) -> None:
        """Start the next turn's CLI process now, with the options it will likely need."""
        needs = self.needs
        if not self.enabled or needs.is_closed():
            return
        try:
            prompt = needs.next_prompt()
        except Exception as exc:
            log_event(needs.instance.debug_log_path, "spare_failed", level="warning", error=repr(exc))
            return
        needs.pool.keep_spare(needs.launcher.key(prompt), lambda: needs.launcher.launch(prompt))

    def wanted(self) -> bool:
        """Whether a prewarm would start anything (``warm_spare`` on, open, no spare yet)."""
        early = self.needs.launcher.early
        if early is not None and early.awaits_message:
            return False  # the first piped message may go to the early CLI before the SDK is imported
        return self.enabled and not self.needs.is_closed() and self.needs.pool.spare is None

    def backends(self) -> None:
        """Once a session: import LanceDB / Kuzu in the background for an instance that uses them."""
        if self._backends_warmed:
            return
        self._backends_warmed = True
        cfg, instance = self.needs.config.current, self.needs.instance
        if cfg.rag_enabled and _has_files(instance.index_dir) and not self.needs.recall_elsewhere():
            preload_backend("lancedb")  # not when a recall worker holds the index: ~105 MB kept out of the UI
        if cfg.graph_enabled and _has_files(instance.graph_dir):
            preload_backend("kuzu")


def _has_files(folder: Path) -> bool:
    try:
        return any(folder.iterdir())
    except OSError:
        return False
