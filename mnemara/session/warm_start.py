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

from pathlib import Path
from typing import TYPE_CHECKING

from mnemara.core.backend_loader import preload_backend
from mnemara.core.debuglog import log_event
from mnemara.core.roledoc import read_role_doc

if TYPE_CHECKING:
    from mnemara.session.agent import AgentSession


class WarmStart:
    """Starts one session's next CLI process and its backends ahead of need."""

    def __init__(self, session: AgentSession) -> None:
        self.session = session
        self._backends_warmed = False

    def next_cli(self) -> None:
        """Start the next turn's CLI process now, with the options it will likely need."""
        session = self.session
        if not session.warm_spare or session.closed:
            return
        try:
            session.reload_config()
            prompt = session.system_prompt(read_role_doc(session.config.role_doc_path))
        except Exception as exc:
            log_event(session.instance.debug_log_path, "spare_failed", level="warning", error=repr(exc))
            return
        session.pool.keep_spare(session.launcher.key(prompt), lambda: session.launcher.launch(prompt))

    def wanted(self) -> bool:
        """Whether a prewarm would start anything (``warm_spare`` on, open, no spare yet)."""
        session = self.session
        early = session.launcher.early
        if early is not None and early.awaits_message:
            return False  # the first piped message may go to the early CLI before the SDK is imported
        return session.warm_spare and not session.closed and session.pool.spare is None

    def backends(self) -> None:
        """Once a session: import LanceDB / Kuzu in the background for an instance that uses them."""
        if self._backends_warmed:
            return
        self._backends_warmed = True
        session = self.session
        cfg, instance = session.config, session.instance
        recall_elsewhere = getattr(getattr(session, "auto_recall", None), "worker", None) is not None
        if cfg.rag_enabled and _has_files(instance.index_dir) and not recall_elsewhere:
            preload_backend("lancedb")  # not when a recall worker holds the index: ~105 MB kept out of the UI
        if cfg.graph_enabled and _has_files(instance.graph_dir):
            preload_backend("kuzu")


def _has_files(folder: Path) -> bool:
    try:
        return any(folder.iterdir())
    except OSError:
        return False
