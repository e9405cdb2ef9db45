"""What the panel reads from the session: config, store, window, role doc, status.

The screens talk to this small object instead of reaching into ``AgentSession``
so they can be driven by any session-like object (the real one, or one an
embedder builds). Everything here is a read or a store primitive; slash
commands still go through :func:`mnemara.commands.dispatch`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mnemara.core.config import Config
from mnemara.core.debuglog import log_event
from mnemara.core.errors import StoreUnavailable
from mnemara.store.instance import Instance
from mnemara.core.roledoc import read_role_doc
from mnemara.store.rows import Window
from mnemara.store.turns import TurnStore
from mnemara.context.breakdown import Breakdown, compute
from mnemara.tools import enabled_specs
from mnemara.ui.tui.widgets.button_bar import inbox_label
from mnemara.ui.tui.widgets.status_line import Status

if TYPE_CHECKING:
    from mnemara.commands.session_api import SessionAPI


class PanelBridge:
    def __init__(self, session: SessionAPI) -> None:
        self.session = session
        self.instance: Instance = session.instance
        self.store_problem: str | None = None  # why the last window read failed (the panel says it once)

    # -- live state ------------------------------------------------------------
    @property
    def config(self) -> Config:
        cfg = getattr(self.session, "config", None)
        return cfg if isinstance(cfg, Config) else Config.load(self.instance.config_path)

    @property
    def store(self) -> TurnStore:
        return self.session.store

    @property
    def busy(self) -> bool:
        return bool(getattr(self.session, "busy", False))

    @property
    def assistant_name(self) -> str:
        return self.config.display_name or "assistant"

    def window(self) -> Window:
        """The rolling window; empty while turns.sqlite cannot be read (damaged): the panel stays up, and
        what is sent then waits in the spool (the session says so)."""
        try:
            window = self.store.window_for(self.config)
        except StoreUnavailable as exc:
            self.store_problem = exc.message
            return Window([], [])
        self.store_problem = None
        return window

    def spooled_rows(self) -> int:
        """Rows waiting in the spool for turns.sqlite (0 for a session that has no spool)."""
        count = getattr(self.session, "spooled_rows", None)
        return int(count()) if callable(count) else 0

    def role_path(self) -> str:
        """The configured role doc path, or the instance's role.md when none is set yet."""
        return self.config.role_doc_path or str(self.instance.role_copy_path)

    def role_text(self) -> str:
        return read_role_doc(self.config.role_doc_path).text

    def manifest_text(self) -> str:
        """The file-stat manifest the next request will carry (empty when off or nothing was Read)."""
        try:
            from mnemara.context.hooks import manifest_text

            return str(manifest_text(self.session) or "")
        except Exception:  # the manifest is informational; never break the viewer
            return ""

    def breakdown(self) -> Breakdown:
        kept = getattr(getattr(self.session, "pool", None), "spare", None)  # the CLI the next turn will likely get
        conversation = getattr(kept, "conversation", None)
        return compute(self.config, self.window(), self.role_text(), self.manifest_text(),
                       tools=enabled_specs(self.config), carried=conversation.carried_tokens if conversation else 0)

    def recall_lines(self) -> list[str]:
        """What auto-recall added to the last turn and why (empty when it did not run)."""
        record = getattr(getattr(self.session, "auto_recall", None), "last", None)
        if record is None:
            return []
        lines = record.describe()
        for n, hit in enumerate(record.injected, 1):
            lines.append(f"[{n}] {hit['id']}\n{hit['text']}")
        return lines

    def last_request_blocks(self) -> tuple[str, list[tuple[str, str]]]:
        """The last API call as a header (call, usage, tokens by origin, where to see it whole) and its blocks,
        each ``(one-line label, whole text)``; the tool schemas are one entry. No call yet: the reason, no blocks."""
        from mnemara.context.request_view import call_report, format_call
        from mnemara.core.errors import MnemaraError
        from mnemara.store.request_log import RequestLog

        try:
            call = RequestLog(self.instance.root).load("last")
        except MnemaraError as exc:
            return exc.message, []
        report = call_report(call)
        header = "\n".join(format_call({**report, "blocks": []}).splitlines()[:3]) + (
            f"\nfull text and JSON: mnemara context --instance {self.instance.name} --call {call.seq} --full|--json")
        blocks = [(f"[{b['origin']:<8}] {b['label']} · ~{b['tokens']} tok", b["text"])
                  for b in report["blocks"] if b["origin"] != "tools"]
        tools = [b for b in report["blocks"] if b["origin"] == "tools"]
        if tools:
            blocks.append((f"[tools   ] {len(tools)} tool schemas · ~{sum(b['tokens'] for b in tools)} tok",
                           "\n".join(f"{b['detail']['tool']}: ~{b['tokens']} tok" for b in tools)))
        return header, blocks

    # -- inbox (peer poll) ---------------------------------------------------
    @property
    def inbox(self) -> Any:
        return getattr(self.session, "peer_inbox", None)

    def inbox_state(self) -> bool | None:
        """None when the panel runs no peer inbox (peer poll not configured); else whether delivery is ON."""
        return None if self.inbox is None else bool(self.inbox.enabled)

    def status(self, busy: bool = False) -> Status:
        cfg = self.config
        win = self.window()
        inbox = self.inbox
        return Status(
            turns=len(win.rows), max_turns=cfg.max_window_turns, tokens=win.tokens, max_tokens=cfg.max_window_tokens,
            model=cfg.model, inbox=inbox_label(None) if inbox is None else inbox.state_text, busy=busy or self.busy,
            oldest=win.rows[0].id if win.rows else None, cost=self._cost_forms(),
        )

    def _cost_forms(self) -> tuple[str, ...]:
        """What the session cost so far (the spend ledger), for the status line; nothing when it cannot say."""
        spend = getattr(self.session, "spend", None)
        try:
            return spend.view().status_forms() if spend is not None else ()
        except Exception:  # a damaged spend.sqlite never breaks the panel; /cost says what is wrong
            return ()

    def log(self, event: str, **fields: Any) -> None:
        log_event(self.instance.debug_log_path, event, source="tui", **fields)
