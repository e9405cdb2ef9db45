"""Issue 27's keys in a real terminal (tmux at 80x24): what the pilot cannot show is how a terminal
encodes them (Alt+Enter is ESC CR, Ctrl+J is LF, End an escape sequence, Ctrl+C a byte that must not
kill the process). Screens are read with capture-pane."""
from __future__ import annotations

import re
import shutil
import time

import pytest

from mnemara.core.config import update_config
from mnemara.store.instance import Instance
from mnemara.testing.scripted_api import reply
from tests.e2e.test_tui_tmux import Tmux
from tests.e2e.test_tui_tmux_tour import keys, start

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed on this machine"),
]
ROWS = "\n".join(f"row {n:03d} of the long answer" for n in range(400))
ROW_NUMBER = re.compile(r"row (\d{3}) of the long answer")


@pytest.fixture
def tmux():
    session = Tmux()
    yield session
    session.close()


def input_line(screen: str) -> str:
    """The input box's first line (under the status line, between the box's borders)."""
    lines = screen.splitlines()
    status = next(i for i, line in enumerate(lines) if "turns: " in line)
    return next(line for line in lines[status + 1:] if line.strip("▊▎ ▔▁")).strip("▊▎ ")


def test_enter_sends_alt_enter_and_ctrl_j_break_lines_tab_completes_end_follows_and_ctrl_c_stops(
        tmux, scripted_api, mnemara_home):
    inst = Instance.create("keys")
    update_config(inst.config_path, send_key="enter")
    # One row per chunk, 0.2 s apart: the answer streams for ~80 s, far longer than the steps that need a
    # turn still running (the PageUp marker needs new output, Ctrl+C must cancel), even on a loaded machine.
    scripted_api.push(reply(ROWS, delay=0.2, chunk_size=len(ROWS.split("\n")[0]) + 1))
    start(tmux, mnemara_home, "run", "--instance", "keys", size=(80, 24))
    tmux.wait_for("turns: 0/20")

    keys(tmux, "/sw", "Tab")
    assert input_line(tmux.wait_for("/swap")).startswith("/swap")
    keys(tmux, "Escape")  # alone: Escape and a key read in one go are Alt+key
    tmux.wait_for("Message or /command")  # the input is empty again (its placeholder shows)
    keys(tmux, "/co", "Tab")
    screen = tmux.wait_for("/context")
    assert "[/compress" in screen and "/copy" in screen, screen  # the choices, the shown one in brackets
    keys(tmux, "Escape")
    assert "Enter sends" in tmux.wait_for("Message or /command"), "the first run says which keys do what"

    asked = len(scripted_api.message_requests())
    keys(tmux, "line one", "M-Enter", "line two", "C-j", "line three", "Enter")
    assert scripted_api.wait_for_requests(asked + 1, timeout=60), "Enter sent the message"
    sent = scripted_api.message_requests()[-1].messages[-1]
    words = sent["content"] if isinstance(sent["content"], str) else " ".join(
        b.get("text", "") for b in sent["content"] if b.get("type") == "text")
    assert "line one\nline two\nline three" in words
    screen = tmux.wait_for("working… Esc stops")  # the busy state, at 80 columns
    assert next(line for line in screen.splitlines() if "working…" in line).rstrip().endswith("working… Esc stops")
    # More than a screenful has streamed (so PageUp can scroll): a row numbered 30 or more is on screen.
    # Not one given row: following the bottom, a row is on screen only briefly, and a loaded machine
    # (slow captures, long frames) can miss it.
    tmux.wait_screen(lambda screen: max(map(int, ROW_NUMBER.findall(screen)), default=-1) >= 30,
                     "a row numbered 30 or more")

    keys(tmux, "PageUp")
    tmux.wait_for("new output below, End to follow")  # scrolled up: the view stays, the marker says why
    keys(tmux, "End")
    deadline = time.monotonic() + 20
    while "new output below" in tmux.screen():  # End: following again, the marker gone
        assert time.monotonic() < deadline, tmux.screen()
        time.sleep(0.1)

    keys(tmux, "C-c")
    tmux.wait_for("press Ctrl+C again to quit")
    tmux.wait_for("the turn was cancelled")
    assert "PANEL-EXIT" not in tmux.screen(), "Ctrl+C during a turn keeps the panel open"
    keys(tmux, "C-c")
    tmux.wait_for("PANEL-EXIT=0", timeout=30)
