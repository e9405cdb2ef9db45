"""Command-aware Bash patterns (issue 25, item 5): every simple command must be allowed on its own."""
from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mnemara.core.config import Config, ToolPolicy
from mnemara.guard import bash_patterns as bp
from mnemara.guard.gate import PermissionGate

LS = [re.compile(r"^ls( |$)")]

#: The attack pass's ten smuggles behind a user pattern ^ls( |$): six ran unasked before.
SMUGGLES = ["ls; touch x", "ls && touch x", "ls | sh", "ls $(touch x)", "ls `touch x`", "ls > x",
            "ls & touch x", "ls\ntouch x", "ls || touch x", "ls <(touch x)"]


@pytest.mark.parametrize("command", SMUGGLES)
def test_the_smuggles_are_asked(command: str) -> None:
    found = bp.match_bash(command, LS)
    assert not found.allowed, found


@pytest.mark.parametrize("command, why", [
    ("ls ${x:-$(rm y)}", "substitution"), ("ls > out.txt", "redirection to a file"),
    ("ls < /etc/passwd", "redirection from a file"), ("ls <<< hi", "here-document"),
    ("cat <<EOF\nhi\nEOF\n", "no allowed pattern"), ("ls &", "background"), ("eval ls", "no allowed pattern"),
    ("ls 'unclosed", "does not parse"), ("[[ -f x ]] && ls", "does not parse"),
])
def test_constructs_and_unparsable_lines_ask(command: str, why: str) -> None:
    found = bp.match_bash(command, LS)
    assert not found.allowed and why in found.reason, found


@pytest.mark.parametrize("command", ["ls", "ls -la", "ls; ls src", "ls -la | ls", "ls 2>&1", "ls 2>/dev/null",
                                     "ls 'a b'", "ls && ls -l"])
def test_plain_uses_of_an_allowed_command_run(command: str) -> None:
    assert bp.match_bash(command, LS).allowed


def test_a_pattern_that_names_a_construct_allows_it() -> None:
    assert bp.match_bash("make > build.log", [re.compile(r"^make > build\.log$")]).allowed
    assert bp.match_bash("sleep 1 &", [re.compile(r"^sleep \d+( &)?$")]).allowed
    assert bp.match_bash("eval x", [re.compile(r"^eval x$")]).allowed
    assert not bp.match_bash("make > /etc/x", [re.compile(r"^make")]).allowed  # ^make does not name '>'


def test_the_gate_asks_for_a_smuggle_and_allows_the_plain_command(tmp_path) -> None:
    from mnemara.store.instance import Instance

    inst = Instance.create("bashp")
    gate = PermissionGate(Config(allowed_tools=[ToolPolicy(tool="Bash", mode="ask", allowed_patterns=[r"^ls( |$)"])]),
                          inst)
    assert gate.decide("Bash", {"command": "ls -la"}).verdict == "allow"
    asked = gate.decide("Bash", {"command": "ls; rm -rf ~"})
    assert asked.verdict == "ask" and "'rm -rf ~'" in asked.reason
    gate.persist_always("Bash", "ls; rm -rf build")  # an 'a' answer allows exactly that line
    assert gate.decide("Bash", {"command": "ls; rm -rf build"}).verdict == "allow"
    assert gate.decide("Bash", {"command": "ls; rm -rf ~"}).verdict == "ask"


# The fast splitter must read the plain subset exactly as bashlex does.
_WORDS = st.sampled_from(["ls", "git", "status", "-la", "x.py", "a=1", "'a b'", '"c;d"', "'&&'", "src/", "*.md",
                          "~", "--x=y", "a,b", "%s", "@"])
_OPS = st.sampled_from([";", " && ", " || ", " | ", " & ", " ; ", "|&"])


@st.composite
def plain_lines(draw: st.DrawFn) -> str:
    commands = [" ".join(draw(st.lists(_WORDS, min_size=1, max_size=4))) for _ in range(draw(st.integers(1, 4)))]
    line = commands[0]
    for command in commands[1:]:
        line += draw(_OPS) + command
    return line + draw(st.sampled_from(["", ";", " &"]))


@settings(max_examples=150, deadline=None)
@given(plain_lines())
def test_the_plain_splitter_agrees_with_bashlex(line: str) -> None:
    plain = bp._split_plain(line)
    assert plain is not None, line
    full = bp._parse_bashlex(line)
    assert not full.problem, (line, full.problem)
    assert [(c.words, c.full) for c in plain.commands] == [(c.words, c.full) for c in full.commands]
    assert plain.background == full.background
