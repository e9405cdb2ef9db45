"""Issue 27 in the terminal REPL on a real pseudo-terminal: code-block captions numbered across the
session without "click", and an Edit question drawn as a coloured diff (then answered y)."""
from __future__ import annotations

from pathlib import Path

import pytest

from mnemara.store.instance import Instance
from mnemara.testing.scripted_api import reply, tool_use
from tests.e2e.terminal import Terminal

pytestmark = pytest.mark.e2e


def test_terminal_repl_numbers_captions_across_answers_and_colours_a_diff(scripted_api, mnemara_home: Path,
                                                                         isolated_home: Path) -> None:
    Instance.create("ttyhabits")
    target = isolated_home / "greet.txt"
    target.write_text("hello world\n", encoding="utf-8")
    scripted_api.push(reply("One:\n\n```python\nprint(1)\n```\n\nTwo:\n\n```sh\necho 2\n```\n"),
                      reply("Three:\n\n```python\nprint(3)\n```\n"),
                      reply(tool_use("Read", {"file_path": str(target)})),
                      reply(tool_use("Edit", {"file_path": str(target), "old_string": "hello",
                                              "new_string": "goodbye"})),
                      reply("edited"))
    with Terminal("run", "--instance", "ttyhabits", "--no-tui") as term:
        term.expect("you>")
        term.send("two blocks please\r")
        term.expect("block 2 · /copy 2 copies it")
        term.expect("you>")
        term.send("one more\r")
        term.expect("python · block 3 · /copy 3 copies it")
        term.expect("you>")
        term.send("edit the greeting\r")
        term.expect("change (1 line removed, 1 added)")
        term.expect("\x1b[32m    +goodbye world\x1b[0m")
        term.expect("[s]ession: ")
        term.send("y\r")
        term.expect("edited")
        term.expect("you>")
        assert term.quit() == 0
    assert "click" not in term.seen
    assert "\x1b[31m    -hello world\x1b[0m" in term.seen
    assert target.read_text(encoding="utf-8") == "goodbye world\n"
