"""The panel in a real pseudo-terminal given a byte that is not UTF-8 (a Latin-1 paste, an 8-bit
Meta key): Textual's input thread used to die on it (UnicodeDecodeError drawn over the panel), no key
reached the panel afterwards, Ctrl+C included, and what was in the input was lost with it.

The process boundary (a real terminal and Textual's own driver) is the point; no CLI is involved.
"""
from __future__ import annotations

import os

import pytest

from mnemara.store.instance import Instance
from tests.e2e.terminal import PanelTerminal

pytestmark = pytest.mark.e2e


def test_a_byte_that_is_not_utf8_does_not_kill_the_panels_keyboard(mnemara_home):
    inst = Instance.create("bytes")
    with PanelTerminal("run", "--instance", "bytes") as term:
        term.expect("Send")  # the button bar: the panel is drawn and reads keys
        os.write(term.master, b"abc\xffzqxw")
        term.expect("zqxw")  # echoed in the input: the keys after the bad byte still arrive
        os.write(term.master, b"\x03")  # idle, the first Ctrl+C clears the input into the history (issue 39)
        term.expect("again to quit")
        os.write(term.master, b"\x03")  # and the second quits
        assert term.proc.wait(timeout=60) == 0
        assert "Traceback" not in term.seen + term.buffer
    assert "+abc\ufffdzqxw\n" in inst.prompt_history_path.read_text(encoding="utf-8"), "cleared, not lost"
