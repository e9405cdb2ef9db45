"""Issue 13 item 4: a role doc of any size reaches the API without riding on argv.

Through the real `mnemara` CLI, the real SDK and the real Claude Code CLI against the
scripted API: a 600 KiB role doc (over Linux's 128 KiB per-argument limit that used
to break every turn) arrives whole as the system prompt, no process on the machine
shows its text in its command line while the turn runs, and the private file that
carried it is gone afterwards.
"""
from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from mnemara.store.instance import Instance
from mnemara.store.turns import TurnStore
from mnemara.testing.scripted_api import reply
from tests.conftest import run_cli

pytestmark = pytest.mark.e2e

MARKER = "ROLE-SIZE-MARKER-7f3a"


def _cmdlines_with(needle: bytes) -> tuple[list[int], list[bytes]]:
    """PIDs whose command line holds ``needle``, and every claude CLI command line seen."""
    hits, clis = [], []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if needle in cmd:
            hits.append(int(entry.name))
        if b"--system-prompt" in cmd:
            clis.append(cmd)
    return hits, clis


def test_role_doc_over_128_kib_reaches_the_api_and_never_shows_in_ps(scripted_api, mnemara_home, tmp_path):
    role = tmp_path / "big-role.md"
    line = f"{MARKER} " + "r" * 100 + "\n"
    role.write_text(line * (600 * 1024 // len(line)) + "END-OF-ROLE\n", encoding="utf-8")
    assert role.stat().st_size > 128 * 1024
    assert run_cli("init", "--instance", "big", "--role", str(role)).returncode == 0
    tmp = tmp_path / "tmpdir"
    tmp.mkdir()
    scripted_api.push(reply("answer under a huge role doc", delay=0.15))

    seen: dict[str, list] = {"hits": [], "clis": []}
    stop = threading.Event()

    def watch_ps() -> None:
        while not stop.is_set():
            hits, clis = _cmdlines_with(MARKER.encode())
            seen["hits"].extend(h for h in hits if h != os.getpid())
            seen["clis"].extend(clis)
            time.sleep(0.05)

    watcher = threading.Thread(target=watch_ps, daemon=True)
    watcher.start()
    try:
        proc = run_cli("run", "--instance", "big", "--no-tui", input="hello\n", env={"TMPDIR": str(tmp)},
                       subprocess_only=True)  # its own TMPDIR: the process boundary is the point
    finally:
        stop.set()
        watcher.join(5)
    assert proc.returncode == 0, proc.stderr
    assert "answer under a huge role doc" in proc.stdout
    assert "Argument list too long" not in proc.stderr
    system = scripted_api.last.system_text
    assert system.count(MARKER) == role.read_text().count(MARKER) and "END-OF-ROLE" in system
    ours = [c for c in seen["clis"] if str(tmp).encode() in c]  # other suites' CLIs may run meanwhile
    assert ours, "the Claude CLI was never seen running"
    prompt_file = [b"--system-prompt-file" + sep + str(tmp).encode() for sep in (b"=", b"\0")]  # either SDK form
    assert all(any(arg in c for arg in prompt_file) for c in ours)
    assert seen["hits"] == [], "the role doc text was visible in a process command line"
    assert list(tmp.glob("mnemara-system-*")) == []  # the prompt file lived only until the CLI started
    with TurnStore(Instance.open("big").turns_path) as store:
        assert [t.text for t in store.history()] == ["hello", "answer under a huge role doc"]
