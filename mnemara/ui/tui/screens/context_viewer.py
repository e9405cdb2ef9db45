"""The context viewer: where the tokens go, and the rows and pinned slots the next turn is built from.

Tabs: *Breakdown* (bars against the window's token cap), *Rows* (the working
window, filtered by role; evict, pin), *Pinned* (slots in slot order with
their ``03`` badge; rename, add, move, unpin), *Last request* (the last API
call exactly as the API received it, each block with its origin; the same as
``mnemara context --call last``; the highlighted block, the first at first, is shown whole and
read-only in the detail pane) and, after a turn that ran
auto-recall, *Recall* (what was injected and every hit's per-channel scores). The detail pane on the right
shows the selected row: a read-only header and an editable body that
💾 Save edit writes back to the same row. Every change goes straight to the
store (and to ``debug.log``), then the lists are redrawn from the store.
"""
from __future__ import annotations

from typing import Any, Callable

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, OptionList, Select, Static, TabbedContent, TabPane, TextArea
from textual.widgets.option_list import Option

from mnemara.core.errors import MnemaraError
from mnemara.store.rows import Turn
from mnemara.ui.tui.bridge import PanelBridge
from mnemara.core.display import terminal_safe
from mnemara.ui.tui.clipboard import ClipboardUnavailable, copy_text, paste_text
from mnemara.ui.tui.screens.text_prompt import TextPrompt
from mnemara.ui.tui.transcript_view import one_line
from mnemara.ui.tui.widgets.status_line import human_tokens
from mnemara.ui.tui.widgets.token_bars import TokenBars

ROLE_FILTERS = (("all roles", "all"), ("user", "user"), ("assistant", "assistant"), ("system", "system"))


def slot_badge(turn: Turn) -> str:
    return f"{turn.slot_pos:02d}  📌 slot: {turn.pin_label}"


def agent_badge(turn: Turn) -> str:
    """``🤖 `` before a row the agent made or changed (the detail header says what it did)."""
    return "🤖 " if turn.agent_marks() else ""


def row_label(turn: Turn) -> str:
    return f"#{turn.id:<5} {turn.role:<9} {turn.tokens:>6} tok  {agent_badge(turn)}{one_line(turn.text or _kinds(turn), 60)}"


def pinned_label(turn: Turn) -> str:
    return f"{slot_badge(turn)}  ({turn.role}, {turn.tokens} tok)  {agent_badge(turn)}{one_line(turn.text, 40)}"


def detail_header(turn: Turn) -> str:
    pin = slot_badge(turn) if turn.pinned else "not pinned"
    marks = "".join(f" · {mark}" for mark in turn.agent_marks())
    return f"Turn {turn.id} · {turn.role} · {turn.created_at} · {pin} · ~{turn.tokens} tok{marks}"


def _kinds(turn: Turn) -> str:
    return "[" + ", ".join(str(b.get("type")) for b in turn.blocks) + "]"


class ContextViewer(ModalScreen[None]):
    CSS_PATH = "../styles/context_viewer.tcss"
    BINDINGS = [Binding("escape", "close", "close")]

    def __init__(self, bridge: PanelBridge) -> None:
        super().__init__()
        self.bridge = bridge
        self.request_blocks: list[tuple[str, str]] = []  # the last request's (label, text), shown in its tab
        self.role_filter = "all"
        self.selected: int | None = None

    # -- layout -------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        with Vertical(id="ctx-box"):
            yield Static("", id="ctx-title")
            with Horizontal(id="ctx-main"):
                with TabbedContent(id="ctx-tabs", initial="tab-breakdown"):
                    with TabPane("Breakdown", id="tab-breakdown"):
                        yield TokenBars(self.bridge.breakdown(), id="ctx-bars")
                    with TabPane("Rows", id="tab-rows"):
                        yield Select(ROLE_FILTERS, value="all", allow_blank=False, id="role-filter", compact=True)
                        yield OptionList(id="rows-list", markup=False)  # labels hold the model's text: never markup
                        with Horizontal(classes="ctx-actions"):
                            yield Button("🗑 Evict", id="row-evict", variant="error", compact=True)
                            yield Button("📌 Pin", id="row-pin", compact=True)
                    with TabPane("Pinned", id="tab-pinned"):
                        yield OptionList(id="pinned-list", markup=False)
                        with Horizontal(classes="ctx-actions"):
                            yield Button("✏️ Rename", id="slot-rename", compact=True)
                            yield Button("➕ Add slot", id="slot-add", compact=True)
                            yield Button("⇅ Move", id="slot-move", compact=True)
                            yield Button("Unpin", id="slot-unpin", compact=True)
                    with TabPane("Last request", id="tab-request"):
                        yield Static("", id="request-text", markup=False)  # filled by reload()
                        yield OptionList(id="request-blocks", markup=False)  # the blocks: the model's text
                    recall = self.bridge.recall_lines()
                    if recall:  # only after a turn that ran auto-recall
                        with TabPane("Recall", id="tab-recall"):
                            yield Static("\n".join(recall), id="recall-text", markup=False)
                with Vertical(id="ctx-detail"):
                    yield Static("select a row", id="detail-header", markup=False)
                    yield TextArea("", id="detail-body", soft_wrap=True)
                    with Horizontal(classes="ctx-actions"):
                        yield Button("💾 Save edit", id="detail-save", variant="primary", compact=True)
                        yield Button("📋 Paste", id="detail-paste", compact=True)
                        yield Button("⎘ Copy", id="detail-copy", compact=True)
            with Horizontal(id="ctx-footer"):
                yield Static("", id="ctx-status", markup=False)
                yield Button("Close", id="ctx-close", compact=True)

    def on_mount(self) -> None:
        self.reload()

    # -- drawing from the store ------------------------------------------------------
    def reload(self) -> None:
        """Redraw everything from the store (after any change)."""
        window = self.bridge.window()
        breakdown = self.bridge.breakdown()
        self.query_one("#ctx-title", Static).update(
            f"💬 Context — next request ~{human_tokens(breakdown.total)} tokens (tools, role doc, manifest, window) · "
            f"window tokens {human_tokens(window.tokens)}/{human_tokens(breakdown.cap)} as in the status line · "
            f"{len(window.pinned)} pinned · {len(window.rows)} rows"
        )
        self.query_one(TokenBars).show(breakdown)
        header, self.request_blocks = self.bridge.last_request_blocks()
        self.query_one("#request-text", Static).update(terminal_safe(header))
        blocks = self.query_one("#request-blocks", OptionList)
        keep = blocks.highlighted
        blocks.clear_options()
        blocks.add_options([Option(label, id=f"block-{n}") for n, (label, _) in enumerate(self.request_blocks)])
        if self.request_blocks:
            blocks.highlighted = keep if keep is not None and keep < len(self.request_blocks) else 0
        rows = [t for t in window.rows if self.role_filter in ("all", t.role)]
        self._fill(self.query_one("#rows-list", OptionList), [(row_label(t), t.id) for t in rows])
        self._fill(self.query_one("#pinned-list", OptionList), [(pinned_label(t), t.id) for t in window.pinned])
        if self._on_request_tab():
            self._show_block(blocks.highlighted or 0)
        elif self.selected is not None:
            self._show_detail(self.selected)

    @staticmethod
    def _fill(option_list: OptionList, items: list[tuple[str, int]]) -> None:
        keep = option_list.highlighted_option.id if option_list.highlighted_option else None
        option_list.clear_options()
        option_list.add_options([Option(label, id=str(turn_id)) for label, turn_id in items])
        ids = [str(i) for _, i in items]
        if keep in ids:
            option_list.highlighted = ids.index(keep)

    def _show_detail(self, turn_id: int) -> None:
        try:
            turn = self.bridge.store.get(turn_id)
        except MnemaraError:
            self.selected = None
            self.query_one("#detail-header", Static).update("select a row")
            self.query_one("#detail-body", TextArea).load_text("")
            return
        self.selected = turn_id
        self.query_one("#detail-header", Static).update(detail_header(turn))
        body = self.query_one("#detail-body", TextArea)
        shown = terminal_safe(turn.text)  # the editor draws text raw: the model's ESC would reach the terminal
        if body.text != shown:
            body.load_text(shown)

    def say(self, text: str, error: bool = False) -> None:
        status = self.query_one("#ctx-status", Static)
        status.set_class(error, "-error")
        status.update(text)

    def _selected_turn(self) -> Turn | None:
        if self.selected is None:
            self.say("select a row first", error=True)
            return None
        try:
            return self.bridge.store.get(self.selected)
        except MnemaraError as exc:
            self.say(exc.message, error=True)
            return None

    def _apply(self, done: str, change: Callable[..., object], *args: Any, event: str = "", **fields: Any) -> bool:
        """Run one store change; report the result; redraw. Errors change nothing and say why."""
        try:
            change(*args)
        except MnemaraError as exc:
            self.say(exc.message, error=True)
            return False
        if event:
            self.bridge.log(event, **fields)
        self.say(done)
        self.reload()
        return True

    # -- selection -----------------------------------------------------------------------
    @on(OptionList.OptionHighlighted)
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option_list.id == "request-blocks":
            if self._on_request_tab():
                self._show_block(event.option_index)
        elif event.option.id is not None:
            self._show_detail(int(event.option.id))

    @on(TabbedContent.TabActivated, "#ctx-tabs")
    def _tab_changed(self, event: TabbedContent.TabActivated) -> None:
        """The detail pane follows the tab: the Last request tab shows its highlighted block (the first
        when it opens); the other tabs the selected row again."""
        if self._on_request_tab():
            self._show_block(self.query_one("#request-blocks", OptionList).highlighted or 0)
        else:
            self._show_row_pane()

    def _on_request_tab(self) -> bool:
        return self.query_one("#ctx-tabs", TabbedContent).active == "tab-request"

    def _show_block(self, index: int) -> None:
        """One block of the last request in the detail pane, whole and read-only."""
        body = self.query_one("#detail-body", TextArea)
        body.read_only = True
        self.query_one("#detail-save", Button).disabled = True
        header = self.query_one("#detail-header", Static)
        if not 0 <= index < len(self.request_blocks):
            header.update("no API call recorded yet: the blocks of the next one show here")
            body.load_text("")
            return
        label, text = self.request_blocks[index]
        header.update(f"request block {index + 1} of {len(self.request_blocks)} (read-only) · {label}")
        body.load_text(terminal_safe(text))

    def _show_row_pane(self) -> None:
        self.query_one("#detail-body", TextArea).read_only = False
        self.query_one("#detail-save", Button).disabled = False
        if self.selected is not None:
            self._show_detail(self.selected)
        else:
            self.query_one("#detail-header", Static).update("select a row")
            self.query_one("#detail-body", TextArea).load_text("")

    @on(Select.Changed, "#role-filter")
    def _filter(self, event: Select.Changed) -> None:
        self.role_filter = str(event.value)
        self.reload()

    # -- row actions ---------------------------------------------------------------------
    @on(Button.Pressed, "#row-evict")
    def action_evict(self) -> None:
        turn = self._selected_turn()
        if turn is None:
            return
        if turn.pinned:
            self.say(f"row {turn.id} is pinned; unpin it before evicting", error=True)
            return
        if self._apply(f"evicted row {turn.id} (kept on disk)", self.bridge.store.evict, [turn.id],
                       event="evict", ids=[turn.id], how="context viewer"):
            self.selected = None

    @on(Button.Pressed, "#row-pin")
    @work
    async def action_pin(self) -> None:
        turn = self._selected_turn()
        if turn is None:
            return
        if turn.pinned:
            self.say(f"row {turn.id} is already pinned as {turn.pin_label}")
            return
        label = await self.app.push_screen_wait(
            TextPrompt(f"Pin row {turn.id} as slot (a slug):", f"row-{turn.id}")
        )
        if label:
            self._apply(f"pinned row {turn.id} as {label}", self.bridge.store.pin, turn.id, label,
                        event="pin", id=turn.id, label=label)

    @on(Button.Pressed, "#slot-unpin")
    def action_unpin(self) -> None:
        turn = self._selected_turn()
        if turn is None or not turn.pinned:
            self.say("select a pinned slot first", error=True)
            return
        self._apply(f"unpinned {turn.pin_label} (row {turn.id} is a normal row again)", self.bridge.store.unpin,
                    turn.id, event="unpin", id=turn.id, label=turn.pin_label)

    @on(Button.Pressed, "#slot-rename")
    @work
    async def action_rename(self) -> None:
        turn = self._selected_turn()
        if turn is None or not turn.pinned:
            self.say("select a pinned slot first", error=True)
            return
        new = await self.app.push_screen_wait(
            TextPrompt(f"Rename slot {turn.slot_pos:02d} (slug only; the position stays):", turn.pin_label or "")
        )
        if new:
            self._apply(f"renamed {turn.pin_label} to {new} (position {turn.slot_pos:02d} kept)",
                        self.bridge.store.rename_slot, turn.pin_label, new,
                        event="slot_rename", old=turn.pin_label, new=new)

    @on(Button.Pressed, "#slot-add")
    @work
    async def action_add_slot(self) -> None:
        label = await self.app.push_screen_wait(TextPrompt("New slot label (a slug):", "", "e.g. health"))
        if not label:
            return
        if any(t.pin_label == label for t in self.bridge.store.pinned()):
            self.say(f"a slot named {label!r} already exists", error=True)
            return
        try:
            row_id = self.bridge.store.upsert_slot(label, "system", "")
        except MnemaraError as exc:
            self.say(exc.message, error=True)
            return
        self.bridge.log("slot_add", label=label, id=row_id)
        self.selected = row_id
        self.say(f"added slot {label}; write its body on the right and 💾 Save edit")
        self.reload()

    @on(Button.Pressed, "#slot-move")
    @work
    async def action_move(self) -> None:
        turn = self._selected_turn()
        if turn is None or not turn.pinned:
            self.say("select a pinned slot first", error=True)
            return
        last = len(self.bridge.store.pinned()) - 1
        answer = await self.app.push_screen_wait(
            TextPrompt(f"Move {turn.pin_label} from {turn.slot_pos:02d} to position (00-{last:02d}):")
        )
        if not answer:
            return
        if not answer.isdigit():
            self.say(f"not a position: {answer!r} (use a number 00-{last:02d})", error=True)
            return
        self._apply(f"moved {turn.pin_label} to {int(answer):02d}", self.bridge.store.move_slot, turn.pin_label,
                    int(answer), event="slot_move", label=turn.pin_label, position=int(answer))

    # -- detail pane ---------------------------------------------------------------------
    @on(Button.Pressed, "#detail-save")
    def action_save_edit(self) -> None:
        turn = self._selected_turn()
        if turn is None:
            return
        body = self.query_one("#detail-body", TextArea).text
        if body == terminal_safe(turn.text):  # not edited: never store the shown form of its control characters
            self.say(f"row {turn.id} is unchanged")
            return
        self._apply(f"saved the body of row {turn.id} in place", self.bridge.store.set_text, turn.id, body,
                    event="row_edit", id=turn.id, chars=len(body))

    @on(Button.Pressed, "#detail-paste")
    def _paste(self) -> None:
        body = self.query_one("#detail-body", TextArea)
        try:
            pasted = paste_text()
        except ClipboardUnavailable as exc:
            self.say(str(exc), error=True)
            return
        body.replace(pasted, *body.selection)
        self.say(f"pasted {len(pasted)} characters (💾 Save edit to keep them)")

    @on(Button.Pressed, "#detail-copy")
    def _copy(self) -> None:
        body = self.query_one("#detail-body", TextArea)
        text = body.selected_text or body.text
        try:
            copy_text(text)
        except ClipboardUnavailable as exc:
            self.say(str(exc), error=True)
            return
        self.say(f"copied {len(text)} characters")

    @on(Button.Pressed, "#ctx-close")
    def action_close(self) -> None:
        self.dismiss(None)
