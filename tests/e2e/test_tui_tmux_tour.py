"""Issue 17 in a real terminal (tmux): Markdown answers and queued sends in the panel and the REPL,
and the whole `mnemara demo` tour played with keys. Screens are read with capture-pane."""
from __future__ import annotations

import os
import shlex
import shutil
import sys
import time
from pathlib import Path

import pytest

from mnemara.store.instance import Instance
from mnemara.store.turns import TurnStore
from mnemara.testing.scripted_api import reply
from tests.conftest import ROOT
from tests.e2e.test_tui_tmux import Tmux

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed on this machine"),
]

MARKDOWN = "Use **two** steps:\n\n- read the lease\n- retry it\n\n```python\nLEASE_SECONDS = 30\n```\n"


@pytest.fixture
def tmux():
    session = Tmux()
    yield session
    session.close()


def start(tmux: Tmux, mnemara_home: Path, *args: str, size: tuple[int, int] = (100, 30),
          tmpdir: Path | None = None) -> None:
    env = {
        **{k: v for k, v in os.environ.items() if k.startswith(("ANTHROPIC_", "CLAUDE_"))},
        "HOME": os.environ["HOME"], "MNEMARA_HOME": str(mnemara_home), "MNEMARA_NO_TUI": "",
        "PYTHONPATH": str(ROOT), "PATH": os.environ["PATH"], "TERM": "xterm-256color", "LANG": "C.UTF-8",
    }
    if tmpdir is not None:
        env["TMPDIR"] = str(tmpdir)
    command = " ".join(["env", "-i", *(shlex.quote(f"{k}={v}") for k, v in env.items()),
                        shlex.quote(sys.executable), "-m", "mnemara", *args, "; echo PANEL-EXIT=$?; sleep 60"])
    tmux("new-session", "-d", "-s", "smoke", "-x", str(size[0]), "-y", str(size[1]), command)


def keys(tmux: Tmux, *sequence: str) -> None:
    tmux("send-keys", "-t", "smoke", *sequence)


def test_panel_draws_markdown_and_queues_a_message_sent_during_a_turn(tmux, scripted_api, mnemara_home):
    Instance.create("md")
    scripted_api.push(reply(MARKDOWN, delay=0.15, chunk_size=4), reply("second answer, after the queue"))
    start(tmux, mnemara_home, "run", "--instance", "md")
    tmux.wait_for("turns: 0/20")
    keys(tmux, "how do I fix the lease?", "C-s")
    tmux.wait_for("assistant:")
    keys(tmux, "and then?", "C-s")  # the first answer is still streaming
    screen = tmux.wait_for("queued: and then?")
    tmux.wait_for("second answer, after the queue")
    screen = tmux.screen()
    # the newer answer holds no block, so /copy 1 would not take this one: its caption offers the click only
    assert "• read the lease" in screen and "python · block 1 · click to copy" in screen
    assert "LEASE_SECONDS = 30" in screen and "**" not in screen and "```" not in screen
    assert "queued:" not in screen and "you: and then?" in screen
    tmux.wait_idle("turns: 4/20")  # both turns over: Ctrl+C twice quits (during a turn the first stops the turn)
    keys(tmux, "C-c", "C-c")
    tmux.wait_for("PANEL-EXIT=0", timeout=30)
    with TurnStore(Instance.open("md").turns_path) as store:
        assert [r.text for r in store.history() if r.role == "user"] == ["how do I fix the lease?", "and then?"]


def test_repl_draws_markdown_and_queues_a_line_entered_during_a_turn(tmux, scripted_api, mnemara_home):
    Instance.create("mdrepl")
    scripted_api.push(reply(MARKDOWN, delay=0.15, chunk_size=4), reply("second answer, after the queue"))
    start(tmux, mnemara_home, "run", "--instance", "mdrepl", "--no-tui")
    tmux.wait_for("you>")
    keys(tmux, "how do I fix the lease?", "Enter")
    tmux.wait_for("Use two steps")
    keys(tmux, "and then?", "Enter")
    tmux.wait_for("(queued: 'and then?'")
    tmux.wait_for("second answer, after the queue")
    screen = tmux.screen()
    assert "you> and then?   (queued, sending now)" in screen
    assert "• read the lease" in screen and "LEASE_SECONDS = 30" in screen and "**two**" not in screen
    for _ in range(10):  # Ctrl+D once the next prompt reads keys
        keys(tmux, "C-d")
        try:
            tmux.wait_for("PANEL-EXIT=0", timeout=3)
            break
        except AssertionError:
            continue
    assert "PANEL-EXIT=0" in tmux.screen()
    assert scripted_api.message_requests()[-1].user_text().endswith("and then?")


def test_the_demo_tour_in_a_terminal_from_first_to_last_screen(tmux, mnemara_home, tmp_path):
    started = time.monotonic()
    demo_tmp = tmp_path / "tmp"  # the demo's throwaway folder lands here, not among other tests' demos
    demo_tmp.mkdir()
    start(tmux, mnemara_home, "demo", size=(110, 36), tmpdir=demo_tmp)
    first = tmux.wait_for("Step 1/5")
    assert "Welcome to the Mnemara tour" in first and "Run date in the shell for me" in first
    (tmp_path / "first.txt").write_text(first, encoding="utf-8")
    keys(tmux, "C-s")
    modal = tmux.wait_for("Allow Bash?")
    (tmp_path / "permission.txt").write_text(modal, encoding="utf-8")
    tmux.wait_for("answer: y once")  # the answer keys are armed once the question has been on screen a moment
    keys(tmux, "y")
    for marker in ("Step 2/5", "Step 3/5", "Step 4/5"):
        tmux.wait_for(marker)
        keys(tmux, "C-s")
    tmux.wait_for("Step 5/5")
    tmux.wait_for("you like Helix")
    # step 5 with the user's own editor: the role doc is a file, re-read from disk before every call
    # (the in-panel editor is driven by the pilot test in test_demo_tour.py)
    [role] = demo_tmp.glob("mnemara-demo-*/demo-role.md")
    role.write_text(role.read_text(encoding="utf-8").replace("Demo Bot", "Tmux Tess"), encoding="utf-8")
    keys(tmux, "C-s")
    last = tmux.wait_idle("Tour done. Next steps:")
    (tmp_path / "last.txt").write_text(last, encoding="utf-8")
    assert "— Tmux Tess" in last
    seconds = time.monotonic() - started
    print(f"tour played with keys in {seconds:.0f} s")
    keys(tmux, "C-c", "C-c")  # idle: the first clears the input, the second quits
    done = tmux.wait_for("PANEL-EXIT=0", timeout=30)
    assert "mnemara init --instance mine" in done
