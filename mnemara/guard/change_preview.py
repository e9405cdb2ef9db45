"""What an Edit, MultiEdit, Write or NotebookEdit would do: a unified diff a permission prompt shows.

The gate builds a :class:`ChangePreview` when it asks about one of these tools. It reads the
file the path reaches (a regular file of at most :data:`MAX_FILE_BYTES`, UTF-8, opened without
blocking and without following a link planted after the path was resolved), applies the call to
a copy in memory as the tool would, and diffs the two (for a notebook, the source of the one cell
the call changes: :mod:`mnemara.guard.notebook_change`). A new file shows its first
:data:`NEW_FILE_LINES` lines. Every line is escaped by
:func:`mnemara.guard.target_text.show_lines`, so a diff can no more hide text than a target can.

Building a preview never raises and never changes a file. When there is nothing trustworthy
to show (the file is not text, an ``old_string`` is missing so the tool would fail, ...) the
preview carries only a :attr:`ChangePreview.problem` and the prompt shows the call's input.
"""
from __future__ import annotations

import difflib
import os
import stat
from dataclasses import dataclass
from typing import Any

from mnemara.guard.target_text import show_lines

#: The tools whose question shows a diff.
EDIT_TOOLS = frozenset({"Edit", "MultiEdit", "Write", "NotebookEdit"})
#: A file larger than this is not read for a preview.
MAX_FILE_BYTES = 2_000_000
#: Lines of a diff shown at most (then one line says how many more there are).
MAX_DIFF_LINES = 2000
#: Lines of a new file shown (then one line says how many more there are).
NEW_FILE_LINES = 40
#: Files (before or after the call) longer than this are not diffed: difflib's time grows with
#: lines times lines on text that moved around (2.8 s for 90,000 shuffled lines, 0.2 s for 20,000).
MAX_DIFF_INPUT_LINES = 20_000
#: Unchanged lines shown around each change.
CONTEXT_LINES = 3
#: Pseudo file systems whose files are never read for a preview.
_SPECIAL_TREES = ("/proc", "/sys", "/dev")


@dataclass(frozen=True)
class DiffLine:
    """One line of a preview as shown (escaped), and what it is.

    ``kind``: ``header`` (``---``/``+++``), ``hunk`` (``@@``), ``-`` removed, ``+`` added,
    `` `` unchanged, ``note`` (said by Mnemara, not file content: it starts with ``\\`` or ``…``).
    """

    kind: str
    text: str


@dataclass(frozen=True)
class ChangePreview:
    """The change a file tool would make, ready for a prompt; see the module docstring."""

    lines: tuple[DiffLine, ...] = ()
    summary: str = ""
    problem: str = ""  # why there is no diff; the prompt shows the call's input instead
    shown_keys: tuple[str, ...] = ()  # the input keys the diff stands for (not repeated as JSON)

    @property
    def text_lines(self) -> list[str]:
        return [line.text for line in self.lines]


def preview_change(tool_name: str, tool_input: object, path: str | None, shown_path: str = "") -> ChangePreview | None:
    """The preview of one Edit/MultiEdit/Write/NotebookEdit call on the file ``path`` (resolved, absolute);
    None for any other tool. ``shown_path`` names the file in the diff's header (default ``path``)."""
    if tool_name not in EDIT_TOOLS:
        return None
    if not isinstance(tool_input, dict) or not isinstance(path, str) or not path:
        return ChangePreview(problem="no file path to preview")
    try:
        return _preview(tool_name, tool_input, path, shown_path or path)
    except Exception as exc:  # a preview is a courtesy: the question is asked all the same
        return ChangePreview(problem=f"no preview ({type(exc).__name__}: {exc})")


def _preview(tool_name: str, tool_input: dict[str, Any], path: str, shown_path: str) -> ChangePreview:
    if any(path == tree or path.startswith(tree + "/") for tree in _SPECIAL_TREES):
        return ChangePreview(problem=f"{path} is in a system pseudo file system: not read for a preview")
    before, problem = read_text_file(path)
    if problem:
        return ChangePreview(problem=problem)
    if tool_name == "NotebookEdit":
        return _notebook(before, tool_input, shown_path)
    after, problem, keys = _apply(tool_name, tool_input, before)
    if problem or after is None:
        return ChangePreview(problem=problem or "nothing to preview")
    if before is None:
        return _new_file(after, shown_path, keys)
    return _diff(before, after, shown_path, keys)


def _notebook(before: str | None, tool_input: dict[str, Any], shown_path: str) -> ChangePreview:
    """The diff of the one cell the call changes; its other keys (cell_id, cell_type, edit_mode)
    are still shown as input."""
    from mnemara.guard.notebook_change import cell_change

    change = cell_change(before, tool_input)
    if change.problem:
        return ChangePreview(problem=change.problem)
    if change.before == change.after:
        return ChangePreview(summary=f"no change: {change.label} already holds this source", shown_keys=("new_source",))
    return _diff(change.before, change.after, f"{shown_path} {change.label}", ("new_source",))


def read_text_file(path: str) -> tuple[str | None, str]:
    """``(text, "")``, ``(None, "")`` when there is no such file, or ``(None, why it cannot be previewed)``."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None, ""
    except OSError as exc:
        return None, f"{path} cannot be read for a preview ({exc.strerror or exc})"
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None, f"{path} is not a regular file: no preview"
        if info.st_size > MAX_FILE_BYTES:
            return None, f"{path} is {info.st_size} bytes, over the {MAX_FILE_BYTES}-byte preview limit: no diff"
        data = os.read(fd, MAX_FILE_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_FILE_BYTES:
        return None, f"{path} is over the {MAX_FILE_BYTES}-byte preview limit: no diff"
    try:
        return data.decode("utf-8"), ""
    except UnicodeDecodeError:
        return None, f"{path} is not UTF-8 text: no diff"


def _apply(tool_name: str, tool_input: dict[str, Any], before: str | None) -> tuple[str | None, str, tuple[str, ...]]:
    """The file's text after the call, why it cannot be known, and the input keys used."""
    if tool_name == "Write":
        content = tool_input.get("content")
        if not isinstance(content, str):
            return None, "Write's content is not text", ()
        return content, "", ("content",)
    if tool_name == "Edit":
        after, problem = _edit(before, tool_input, "")
        return after, problem, ("old_string", "new_string", "replace_all")
    edits = tool_input.get("edits")
    if not isinstance(edits, list) or not edits:
        return None, "MultiEdit has no list of edits", ()
    text = before
    for number, edit in enumerate(edits, 1):
        if not isinstance(edit, dict):
            return None, f"edit {number} is not an object", ()
        text, problem = _edit(text, edit, f"edit {number}: ")
        if problem:
            return None, problem, ()
    return text, "", ("edits",)


def _edit(before: str | None, edit: dict[str, Any], label: str) -> tuple[str | None, str]:
    old, new, every = edit.get("old_string"), edit.get("new_string"), edit.get("replace_all", False)
    if not isinstance(old, str) or not isinstance(new, str):
        return None, f"{label}old_string and new_string must be text"
    if before is None:
        if old == "":
            return new, ""  # an empty old_string on a missing file creates it
        return None, f"{label}the file does not exist, so this edit would fail"
    if old == "":
        return None, f"{label}an empty old_string on an existing file: this edit would fail"
    count = before.count(old)
    if count == 0:
        return None, f"{label}old_string is not in the file, so this edit would fail"
    if count > 1 and every is not True:
        return None, f"{label}old_string occurs {count} times and replace_all is not set, so this edit would fail"
    return before.replace(old, new) if every is True else before.replace(old, new, 1), ""


def _split(text: str) -> list[str]:
    """Lines ending in ``\\n`` (the last one may not); only ``\\n`` ends a line, every other
    control character stays inside its line, to be escaped."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    return lines + [parts[-1]] if parts[-1] else lines


def _new_file(after: str, shown_path: str, keys: tuple[str, ...]) -> ChangePreview:
    lines = _split(after)
    raw = [("header", f"+++ {shown_path} (new file)")]
    raw += [("+", "+" + line.removesuffix("\n")) for line in lines[:NEW_FILE_LINES]]
    notes = []
    if len(lines) > NEW_FILE_LINES:
        rest = lines[NEW_FILE_LINES:]
        notes.append(f"… {len(rest)} more line{'s' if len(rest) != 1 else ''} ({sum(map(len, rest))} characters) "
                     "not shown")
    elif lines and not lines[-1].endswith("\n"):
        notes.append("\\ no newline at end of file")
    summary = f"new file: {len(lines)} line{'s' if len(lines) != 1 else ''}, {len(after)} characters"
    return _escaped(raw, notes, summary, keys)


def _diff(before: str, after: str, shown_path: str, keys: tuple[str, ...]) -> ChangePreview:
    if before == after:
        return ChangePreview(summary="no change: the file already holds this text", shown_keys=keys)
    old, new = _split(before), _split(after)
    if max(len(old), len(new)) > MAX_DIFF_INPUT_LINES:
        return ChangePreview(problem=f"{max(len(old), len(new))} lines, over the {MAX_DIFF_INPUT_LINES}-line "
                                     "diff limit: no diff")
    raw: list[tuple[str, str]] = []
    removed = added = 0
    out = difflib.unified_diff(old, new, f"{shown_path} (now)", f"{shown_path} (after)",
                               n=CONTEXT_LINES, lineterm="")
    for index, line in enumerate(out):
        kind = "header" if index < 2 else "hunk" if line.startswith("@@") else line[:1]
        if kind == "-":
            removed += 1
        elif kind == "+":
            added += 1
        raw.append((kind, line.removesuffix("\n")))
        if kind in "-+ " and not line.endswith("\n"):
            raw.append(("note", "\\ no newline at end of file"))
    notes = []
    if len(raw) > MAX_DIFF_LINES:
        notes.append(f"… {len(raw) - MAX_DIFF_LINES} more diff lines not shown")
        raw = raw[:MAX_DIFF_LINES]
    summary = f"{removed} line{'s' if removed != 1 else ''} removed, {added} added"
    return _escaped(raw, notes, summary, keys)


def _escaped(raw: list[tuple[str, str]], notes: list[str], summary: str, keys: tuple[str, ...]) -> ChangePreview:
    """Escape the lines that came from the file or the call (not the notes Mnemara adds)."""
    content = [(kind, text) for kind, text in raw if kind != "note"]
    shown = show_lines([text for _, text in content])
    texts = iter(shown.lines)
    lines = [DiffLine(kind, text if kind == "note" else next(texts)) for kind, text in raw]
    lines += [DiffLine("note", note) for note in notes]
    if shown.escaped:
        summary += "; " + shown.legend
    return ChangePreview(tuple(lines), summary, shown_keys=keys)
