"""One escaping function for terminal and markup (issue 25, item 4).

An imported ``model`` holding OSC 52 (clipboard), OSC 0 (title) and ``[/]`` was written raw by
``mnemara list``; the panel header parsed it as Textual markup (``[/]`` raised MarkupError and
``[@click=...]`` would run an action).
"""
from __future__ import annotations

import json
import re

from hypothesis import given
from hypothesis import strategies as st
from textual.markup import to_content

from mnemara.core.display import escape_char, terminal_safe
from mnemara.guard.target_text import show_target

HOSTILE = "\x1b]52;c;ZXZpbA==\x07\x1b]0;pwned\x07[/][@click=app.quit]x[/]\u202eevil"
OBEYED = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


PIECES = [*"ab [/]@=\\\x1b\x07\x9b\r\n\t\u202e", "[b]", "[@click=x]", "[/]", "\\["]


@given(st.lists(st.sampled_from(PIECES), max_size=20).map("".join))
def test_nothing_obeyable_survives_and_markup_shows_the_text_as_is(text: str) -> None:
    shown = terminal_safe(text)
    assert not OBEYED.search(shown) and "\r" not in shown
    assert to_content(terminal_safe(text, markup=True)).plain == shown


def test_mnemara_list_escapes_an_imported_model(isolated_home) -> None:
    from mnemara.cli.instances import _list_line
    from mnemara.store.instance import Instance, mnemara_home

    inst = Instance.create("hostile")
    raw = json.loads(inst.config_path.read_text())
    raw["model"] = HOSTILE
    inst.config_path.write_text(json.dumps(raw))
    line = _list_line("hostile", [])
    assert not OBEYED.search(line) and "\\x1b]52;c;" in line and "\\u202e" in line
    assert mnemara_home() == inst.root.parent


def test_the_panel_header_shows_markup_as_text() -> None:
    from mnemara.ui.tui.widgets.panel_header import header_text

    content = to_content(header_text("inst[b]", HOSTILE, "/x/[/]role.md"))  # raised MarkupError before
    assert "[/][@click=app.quit]x[/]" in content.plain and "inst[b]" in content.plain
    assert not OBEYED.search(content.plain)
    assert not any("click" in str(span.style) for span in content.spans)  # no action was parsed


def test_the_status_line_escapes_the_model() -> None:
    from mnemara.ui.tui.widgets.status_line import Status

    line = Status(turns=1, max_turns=20, tokens=10, max_tokens=100, model=HOSTILE, inbox="inbox: n/a").line()
    assert not OBEYED.search(line) and "\\x1b]0;pwned" in line


def test_permission_targets_use_the_same_escapes() -> None:
    for ch in ("\x1b", "\u202e", "\x9b", "\U000e0001"):
        assert show_target(f"a{ch}b").text == f"a{escape_char(ch)}b"
