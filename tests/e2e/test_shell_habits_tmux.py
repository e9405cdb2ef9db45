"""``@file`` and ``!command`` in the panel in a real terminal (tmux; issue 39): what the user sees at each
step. Run with ``-s`` to print the screens."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from mnemara.store.instance import Instance
from mnemara.testing.scripted_api import reply
from tests.e2e.test_tui_tmux import Tmux
from tests.e2e.test_tui_tmux_tour import keys, start

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed on this machine"),
]


def test_at_file_and_bang_command_in_the_panel(scripted_api, mnemara_home: Path):
    home = Path(os.environ["HOME"])
    (home / "lease.py").write_text("LEASE_SECONDS = 30\n\ndef renew():\n    return LEASE_SECONDS\n", encoding="utf-8")
    Instance.create("habits")
    scripted_api.push(reply("The lease lasts 30 seconds (LEASE_SECONDS in lease.py)."))
    tmux = Tmux()
    try:
        start(tmux, mnemara_home, "run", "--instance", "habits")
        tmux.wait_for("turns: 0/20")
        keys(tmux, "how long is the lease in @~/lea")
        keys(tmux, "Tab")
        tmux.wait_for("@~/lease.py")
        keys(tmux, "C-s")
        screen = tmux.wait_for("The lease lasts 30 seconds")
        print("\n--- @file ---\n" + screen)
        assert f"attached by you: {home}/lease.py (4 lines, 58 bytes)" in screen
        assert "you: how long is the lease in @~/lease.py" in screen
        assert "<user_attachment" in scripted_api.last.user_text()
        tmux.wait_idle("turns: 2/20")

        keys(tmux, "!printf 'one\\ntwo\\n'; ls ~/lease.py", "C-s")
        screen = tmux.wait_for("Run a command in your shell?")
        print("\n--- !command: the question ---\n" + screen)
        assert "printf 'one\\ntwo\\n'; ls ~/lease.py" in screen
        keys(tmux, "y")
        screen = tmux.wait_for("ran by you:")
        print("\n--- !command: the output in the input ---\n" + screen)
        assert "ran by you: printf 'one\\ntwo\\n'; ls ~/lease.py (exit 0, 3 lines of output)" in screen
        assert f"▊ {home}/lease.py" in screen  # the output's last lines, in the input (the panel's own tests read it all)
        assert len(scripted_api.message_requests()) == 1, "the output waits in the input for the user"
    finally:
        tmux.close()
