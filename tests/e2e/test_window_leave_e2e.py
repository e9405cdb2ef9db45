"""Rows leaving the window are announced in the panel log and the REPL, and the status line shows the oldest row."""
from __future__ import annotations

import io

from mnemara.core import events as ev
from mnemara.core.config import update_config
from mnemara.ui.repl.app import Renderer
from mnemara.ui.tui.transcript_view import TurnView


class _Log:
    def __init__(self) -> None:
        self.entries: list = []

    def append(self, entry) -> int:
        self.entries.append(entry)
        return len(self.entries) - 1

    def update_entry(self, index: int, text: str | None = None, detail: str | None = None) -> None:
        pass


def test_rows_that_leave_by_the_turn_cap_are_announced_once(scripted_api, session_factory):
    session = session_factory("leave")
    update_config(session.instance.config_path, max_window_turns=2, window_trim_to=1)  # one row at a time
    scripted_api.push("one", "two", "three")
    first = session.turn("first question")
    assert not [e for e in first.events if isinstance(e, ev.Notice) and "left the window" in e.message]
    second = session.turn("second question")
    lines = [e.message for e in second.events if isinstance(e, ev.Notice) and "left the window" in e.message]
    assert lines == ["rows 1–2 left the window (max_window_turns 2; kept on disk: `mnemara show --all` shows them, "
                     "/unevict 1 brings one back, /pin keeps a row in)"]
    assert [t.id for t in session.window().rows] == [3, 4]
    assert session.store.get(1).evicted  # trimmed after the line: still on disk
    third = session.turn("third question")
    again = [e.message for e in third.events if isinstance(e, ev.Notice) and "left the window" in e.message]
    assert again and again[0].startswith("rows 3–4 left")
    shown = io.StringIO()
    render = Renderer(io.StringIO(), shown)
    for event in third.events:
        render(event)
    assert "info: rows 3–4 left the window" in shown.getvalue()
    log = _Log()
    view = TurnView(log, "assistant")
    for event in third.events:
        view.feed(event)
    assert any("rows 3–4 left the window" in str(getattr(entry, "text", "")) for entry in log.entries)


def test_pinned_or_evicted_rows_did_not_leave_by_the_caps(scripted_api, session_factory):
    from mnemara.commands import dispatch

    session = session_factory("stay")
    update_config(session.instance.config_path, max_window_turns=2, window_trim_to=1)
    scripted_api.push("one", "two")
    session.turn("keep me")
    assert dispatch(session, "/pin 1 keep").ok
    second = session.turn("next")
    lines = [e.message for e in second.events if isinstance(e, ev.Notice) and "left the window" in e.message]
    assert lines == ["row 2 left the window (max_window_turns 2; kept on disk: `mnemara show --all` shows them, "
                     "/unevict 2 brings one back, /pin keeps a row in)"]


def test_the_status_line_shows_the_oldest_row_in_the_window(session_factory):
    from mnemara.ui.tui.bridge import PanelBridge

    session = session_factory("status")
    assert "from row" not in PanelBridge(session).status().line()
    for n in range(3):
        session.store.append("user", f"q{n}")
    update_config(session.instance.config_path, max_window_turns=2, window_trim_to=1)
    session.reload_config()
    line = PanelBridge(session).status().line()
    assert line.startswith("turns: 2/2 from row 2 |")


def test_row_spans_reads_like_a_person_would_write_it():
    from mnemara.context.window_leave import row_spans

    assert row_spans([4]) == "row 4"
    assert row_spans([3, 1, 2, 7]) == "rows 1–3, 7"
    assert row_spans(list(range(1, 40, 2))) == "rows 1, 3, 5, 7, 9, 11 and 14 more"
