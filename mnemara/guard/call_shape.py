"""What a tool call and its output look like once what varies without meaning is taken out.

The runtime sentinel (:mod:`mnemara.guard.sentinel`) compares calls and outputs in these
shapes, so a loop cannot dodge it by changing a counter, a timestamp, the sleep length, a
flag, a read offset, the whitespace or a Bash call's ``description``/``timeout``:

* :func:`call_key`: the tool and its input, with numbers and timestamps as placeholders,
  whitespace collapsed, cosmetic fields left out, and for Bash the command's words without
  its flags (``curl -sS URL`` and ``curl --silent URL`` are the same call);
* :func:`observation`: the output with timestamps and durations as placeholders and the
  numbers the call itself passed in (``echo check 4`` prints ``check 4``) as placeholders;
* :func:`error_shape`: an error's observation with the call's own words taken out too (a
  stale Edit's error quotes its ``old_string``), or None when it says nothing but an exit code.

Numbers glued to a name (``test_1``, ``module_56.c``) are part of the name and stay. Pure
functions, no I/O.
"""
from __future__ import annotations

import json
import re
from typing import Any

#: Input fields that never change what a call does: how a command is described or how long it may
#: take (other tools keep every field: an MCP tool's ``description`` may be what it writes).
COSMETIC_FIELDS = {"Bash": frozenset({"description", "timeout"})}
#: Tools whose input is a shell command (compared by its words, flags aside).
SHELL_TOOLS = frozenset({"Bash"})

_TIMESTAMP = re.compile(
    r"\d{4}-\d{2}-\d{2}(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?)?(?:Z|[+-]\d{2}:?\d{2})?"
    r"|(?<![\d:])\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?![\d:])"
)
_DURATION = re.compile(r"(?<![\w.])\d+(?:\.\d+)?\s?(?:ms|s|sec|secs|seconds|m|min)\b")
#: A number standing alone (not part of a name like test_1): the thing a counter changes.
_NUMBER = re.compile(r"(?<![A-Za-z_\d.])\d+(?:\.\d+)?(?![A-Za-z_\d])")
_SPACE = re.compile(r"\s+")
#: What the CLI puts in a tool result that came back empty ("(Bash completed with no output)"): the
#: stream and the request carry it, a ``PostToolUse`` hook's response does not, so it compares as empty.
_NO_OUTPUT = re.compile(r"\A\s*\([\w.-]+ completed with no output\)\s*\Z")
_EXIT_ONLY = re.compile(r"^\s*(?:Exit code \d+)?\s*$")
#: What the CLI appends to a tool result on its way to the API (a ``<system-reminder>`` with, say, the
#: tokens left): the request carries it, the stream and the hook do not, and it is not the tool's output.
_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)


#: Tools that change a file when they succeed.
WRITE_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
#: A shell command that probably writes a file: a redirection to a file, in-place edits, file and
#: git operations, package installs. Only ever used to see progress (never to halt), so it errs
#: towards seeing a write.
_SHELL_WRITE = re.compile(
    r"(?:^|[^<>&\d])\d?>>?\s*(?!&|=|/dev/null\b)[^\s&|;<>]"
    r"|\b(?:sed|perl)\b[^|;&]*\s-i"
    r"|\b(?:tee|patch)\b"
    r"|\bgit\s+(?:apply|checkout|switch|restore|reset|stash|commit|merge|rebase|cherry-pick|am|pull|mv|rm|add)\b"
    r"|(?:^|[\s;&|(])(?:mv|cp|rm|touch|mkdir|rmdir|chmod|chown|truncate|ln|install|unzip|dd)\s"
    r"|\b(?:pip3?|npm|yarn|pnpm|cargo|go|uv|poetry)\s+(?:install|add|get|sync|update|upgrade)\b"
)


def writes_files(tool_name: str, tool_input: object) -> bool:
    """Whether the call (when it succeeds) changes a file: a file tool, or a shell command that looks
    like it writes one."""
    if tool_name in WRITE_TOOLS:
        return True
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    return tool_name in SHELL_TOOLS and isinstance(command, str) and bool(_SHELL_WRITE.search(command))


def _text_shape(text: str) -> str:
    return _SPACE.sub(" ", _NUMBER.sub("#", _TIMESTAMP.sub("<time>", text))).strip()


#: A shell word (quoted parts joined, as the shell reads them) or a run of operators (``;``, ``&&``, ``|``, ``>``).
_SHELL_WORD = re.compile(r"""(?:'[^']*'|"(?:\\.|[^"\\])*"|[^\s;&|()<>'"])+|[;&|()<>]+""")
_QUOTED = re.compile(r"'([^']*)'" r'|"((?:\\.|[^"\\])*)"')
_ESCAPED = re.compile(r"\\(.)")


def _unquote(match: re.Match[str]) -> str:
    single, double = match.group(1), match.group(2)
    return single if single is not None else _ESCAPED.sub(r"\1", double)


def _shell_words(command: str) -> list[str]:
    """The command's words as a POSIX shell splits them (quotes removed); an unbalanced quote is
    skipped, so plain words still compare."""
    words = []
    for match in _SHELL_WORD.finditer(command):
        word = match.group(0)
        words.append(word if word[0] in ";&|()<>" else _QUOTED.sub(_unquote, word))
    return words


def _is_flag(word: str) -> bool:
    return len(word) > 1 and word[0] == "-" and (word[1].isalpha() or word[1] == "-")


def _value_shape(value: Any) -> Any:
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return "#"
    if isinstance(value, str):
        return _text_shape(value)
    if isinstance(value, dict):
        return {str(k): _value_shape(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_value_shape(v) for v in value]
    return repr(value)


def call_key(tool_name: str, tool_input: object) -> str:
    """The identity two calls share when they differ only in what does not matter."""
    if not isinstance(tool_input, dict):
        return f"{tool_name} {_value_shape(tool_input)!r}"
    kept = _meaningful(tool_name, tool_input)
    command = kept.get("command")
    if tool_name in SHELL_TOOLS and isinstance(command, str):
        words = [_text_shape(w) for w in _shell_words(command) if not _is_flag(w)]
        kept["command"] = " ".join(words)
        rest = {k: _value_shape(v) for k, v in kept.items() if k != "command"}
        return f"{tool_name} {kept['command']} {json.dumps(rest, sort_keys=True, default=str)}"
    return f"{tool_name} {json.dumps(_value_shape(kept), sort_keys=True, ensure_ascii=False, default=str)}"


def _meaningful(tool_name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    cosmetic = COSMETIC_FIELDS.get(tool_name, frozenset())
    return {k: v for k, v in tool_input.items() if k not in cosmetic}


def exact_input(tool_name: str, tool_input: object) -> str:
    """The input exactly as given, cosmetic fields aside (sorted-key JSON)."""
    if isinstance(tool_input, dict):
        tool_input = _meaningful(tool_name, tool_input)
    return json.dumps(tool_input, sort_keys=True, ensure_ascii=False, default=str)


def _input_numbers(tool_input: object) -> set[str]:
    found: set[str] = set()
    stack = [tool_input]
    while stack:
        value = stack.pop()
        if isinstance(value, bool):
            continue
        if isinstance(value, (int, float)):
            found.add(str(value))
        elif isinstance(value, str):
            found.update(_NUMBER.findall(value))
        elif isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, (list, tuple)):
            stack.extend(value)
    return found


def observation(output: str, tool_input: object) -> str:
    """The output as the sentinel compares it: times, durations and echoed input numbers as placeholders,
    the CLI's "completed with no output" as the empty output it stands for and the CLI's own reminders
    left out (whichever source told it)."""
    output = _REMINDER.sub("", output)
    if _NO_OUTPUT.match(output):
        return ""
    text = _DURATION.sub("<dur>", _TIMESTAMP.sub("<time>", output))
    echoed = _input_numbers(tool_input)
    if echoed:
        text = _NUMBER.sub(lambda m: "#" if m.group(0) in echoed else m.group(0), text)
    return _SPACE.sub(" ", text).strip()


def _input_words(tool_name: str, tool_input: object) -> list[str]:
    words: list[str] = []
    if isinstance(tool_input, dict):
        for key, value in _meaningful(tool_name, tool_input).items():
            if not isinstance(value, str):
                continue
            words.append(value)
            if tool_name in SHELL_TOOLS and key == "command":
                words.extend(_shell_words(value))
    return sorted({w for w in words if len(w.strip()) >= 3}, key=len, reverse=True)


def error_shape(output: str, tool_name: str, tool_input: object) -> str | None:
    """An error output with the call's own words replaced, so retries with trivial variations that
    fail the same way compare equal; None when there is nothing to compare but an exit code."""
    if _EXIT_ONLY.match(output):
        return None
    text = output
    for word in _input_words(tool_name, tool_input):
        text = text.replace(word, "<arg>")
    return observation(text, tool_input)
