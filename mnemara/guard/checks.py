"""Checks the permission gate runs that are not about a tool's mode.

* :func:`process_relative_path`: ``/proc/self/...``, ``/dev/fd/N`` and friends name
  files of *whichever process opens them*. The gate runs in Mnemara, the tool in
  the Claude CLI, so the gate would judge Mnemara's file while the CLI reads its
  own (its stdout pipe: the turn hangs). Such paths are refused for file tools.
* :func:`loose_bash_patterns`: an ``allowed_patterns`` entry for Bash that, on its own,
  allows a second, unrelated command chained after the first (``.*`` allows
  ``ls; touch x``: Bash patterns are matched command by command, see
  :mod:`mnemara.guard.bash_patterns`) is reported when the session starts, naming the entry.
"""
from __future__ import annotations

import os
import re
import stat

#: Folders whose entries are resolved relative to the process that opens them.
_PER_PROCESS_DIRS = ("/dev/fd", "/proc/self", "/proc/thread-self", "/proc/curproc")
_PER_PROCESS_FILES = ("/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/tty")
_PROC_PID = re.compile(r"^/proc/\d+(/|$)")


def _per_process(path: str) -> bool:
    if path in _PER_PROCESS_FILES or _PROC_PID.match(path):
        return True
    return any(path == d or path.startswith(d + "/") for d in _PER_PROCESS_DIRS)


def process_relative_path(path: str, cwd: str | None = None) -> str | None:
    """Why ``path`` must not reach a file tool, or None when it is an ordinary path.

    Refused: anything under ``/proc/self``, ``/proc/thread-self``, ``/proc/<pid>``,
    ``/dev/fd``, ``/dev/std{in,out,err}`` (as written or after resolving symlinks),
    and existing targets that are not regular files or folders (pipes, sockets, devices),
    because reading those blocks or reads another process's state.
    """
    expanded = os.path.expanduser(path)
    if not os.path.isabs(expanded):
        expanded = os.path.join(cwd or os.getcwd(), expanded)
    resolved = os.path.realpath(expanded)
    for form in (*_link_chain(os.path.normpath(expanded)), resolved):
        if _per_process(form):
            return (f"{path} names a per-process file ({form}); it would be resolved in the tool's own "
                    "process, not the one checked, so file tools never open /proc/<pid>, /proc/self or /dev/fd paths")
    try:
        mode = os.stat(resolved).st_mode
    except OSError:
        return None
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        return f"{path} is not a regular file (a pipe, socket or device); file tools only open regular files"
    return None


def _link_chain(path: str, hops: int = 40) -> list[str]:
    """``path`` and every form it takes while its symlinks are followed one at a time.

    ``realpath`` alone is not enough: a link to ``/dev/fd/1`` resolves, *in Mnemara*, to
    whatever Mnemara's stdout is (maybe an ordinary file), hiding the per-process hop.
    """
    forms = [path]
    current = path
    for _ in range(hops):
        parts = current.split("/")
        prefix = "/"
        for index, part in enumerate(parts[1:], start=1):
            candidate = os.path.join(prefix, part)
            try:
                target = os.readlink(candidate)
            except OSError:  # not a link (or not there): keep walking down
                prefix = candidate
                continue
            current = os.path.normpath(os.path.join(prefix, target, *parts[index + 1:]))
            forms.append(current)
            break
        else:
            return forms
    return forms


#: Appended to a command the pattern allows; a match means the pattern lets a second command through.
SHELL_SUFFIXES = ("; touch x", " ; touch x", " && touch x", " || touch x", " | sh", " > x", " $(touch x)",
                  " `touch x`", " & touch x", "\ntouch x")
_LITERAL_END = set(".^$*+?{}[]|()")


def _literal_prefix(pattern: str) -> str:
    """The plain text a pattern starts with (``^git\\ status$`` -> ``git status``), best effort."""
    text = pattern
    for anchor in ("^", "\\A"):
        text = text.removeprefix(anchor)
    out = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt.isalnum():
                break
            out.append(nxt)
            i += 2
            continue
        if ch in _LITERAL_END:
            break
        out.append(ch)
        i += 1
    return "".join(out)


def loose_match(pattern: re.Pattern[str]) -> str | None:
    """A probe command with a second command chained on that ``pattern`` alone allows, or None."""
    from mnemara.guard.bash_patterns import match_bash, names_marker

    # Every probe holds a second simple command ('touch x' or 'sh') except '> x', which needs a
    # pattern naming '>': a pattern matching neither, and not naming '>', allows none of them
    # (this skips the full parser for the probes with $(...), backticks and newlines).
    if not (pattern.search("touch x") or pattern.search("sh") or names_marker(pattern, ">")):
        return None
    base = _literal_prefix(pattern.pattern).rstrip()
    bases = [b for b in dict.fromkeys([base, base + " -l", base + " x", "ls", "echo hi"]) if b.strip()]
    for start in bases:
        for suffix in SHELL_SUFFIXES:
            probe = start + suffix
            if match_bash(probe, [pattern]).allowed:
                return probe
    return None


def loose_bash_patterns(entries: list[tuple[str, re.Pattern[str]]]) -> list[str]:
    """One warning per Bash pattern (``(where, compiled)``) that also allows a chained command."""
    problems = []
    for where, pattern in entries:
        probe = loose_match(pattern)
        if probe is not None:
            problems.append(f"{where}: Bash pattern {pattern.pattern!r} also allows {probe!r} (it matches the "
                            "second command too); anchor it with ^ and $ and list the arguments you allow, "
                            "e.g. ^ls( [-\\w./]+)*$")
    return problems
