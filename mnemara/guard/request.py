"""What a permission prompt shows: the tool, its policy, the target whole, the rest of the call.

:class:`PermissionRequest` is handed to every prompt (REPL line, panel modal, an embedder's
callback). Its target is escaped by :mod:`mnemara.guard.target_text`; for a file tool the file the
path reaches (when a symlink makes it another one) and the rest of the input (what a Write
writes) are shown with it, so the user approves exactly what runs. For Edit, MultiEdit and
Write the gate adds :attr:`PermissionRequest.change`, a diff of the file as it would change
(:mod:`mnemara.guard.change_preview`), shown instead of those calls' raw JSON.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mnemara.guard.target_text import show_target

if TYPE_CHECKING:  # the diff preview (difflib) is imported only when a question shows one
    from mnemara.guard.change_preview import ChangePreview
    from mnemara.guard.target_text import ShownTarget

#: File tools and the input key holding their path.
FILE_TOOLS = {"Read": "file_path", "Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path",
              "NotebookEdit": "notebook_path", "Grep": "path", "Glob": "path"}
ANSWER_KEYS = "[y]es once / [n]o / [a]lways this exact target / [s]ession"
#: A target this long (as shown) gets a reminder line next to the answer keys in a text prompt.
LONG_TARGET = 400
#: A one-line target of at most this many characters, with nothing escaped, is shown without its size.
PLAIN_TARGET = 80
#: ANSI colours of a diff's lines in a text prompt on a terminal that has colour.
DIFF_COLOURS = {"-": "31", "+": "32", "hunk": "36", "header": "1", "note": "2"}


def stable_json(value: object) -> str:
    """Deterministic JSON of a tool input (keys sorted), used as the target of non-file tools."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


@dataclass(frozen=True)
class PermissionRequest:
    """What a prompt shows the user: the tool, the policy governing it and the target."""

    tool_name: str
    policy_name: str
    target: str
    tool_input: dict[str, Any] = field(default_factory=dict)
    file_args: tuple[str, ...] = ()  # the arguments naming the target file (a file tool), else empty
    resolved: str = ""  # the file a file tool's path reaches, when symlinks/.. make it another one
    change: ChangePreview | None = None  # what an Edit/MultiEdit/Write would do to its file (the gate adds it)

    @property
    def shown(self) -> ShownTarget:
        """The target as every prompt shows it: one line, control characters escaped, sizes known."""
        return show_target(self.target)

    def describe(self) -> str:
        """One line for a prompt, e.g. ``Bash: echo hi`` (escaped, see :mod:`mnemara.guard.target_text`)."""
        return f"{self.policy_name}: {self.shown.text}"

    @property
    def shown_resolved(self) -> str:
        """:attr:`resolved` as prompts show it (escaped like the target); "" when the path is the file."""
        return show_target(self.resolved).text if self.resolved else ""

    @property
    def target_key(self) -> str | None:
        """The input argument the target is (Bash's command, a file tool's path); None when the
        target is the whole input."""
        if self.tool_name == "Bash":
            return "command"
        if self.tool_name in FILE_TOOLS:
            return FILE_TOOLS[self.tool_name]
        return next((key for key in self.file_args if self.tool_input.get(key)), None)

    @property
    def target_label(self) -> str:
        """What the target is, as a person says it: ``command`` (Bash), ``file`` (a file tool's path),
        ``input`` (a tool whose target is its whole input, as JSON)."""
        key = self.target_key
        return "command" if key == "command" else "file" if key is not None else "input"

    @property
    def target_heading(self) -> str:
        """The line over the target: its label, with its size and how it is escaped when the target is
        more than one plain short line (``command (3 lines, 80 characters; shown escaped: ...)``)."""
        shown = self.shown
        plain = not shown.escaped and shown.lines == 1 and shown.chars <= PLAIN_TARGET
        return self.target_label if plain else f"{self.target_label} ({shown.summary})"

    @property
    def details_lines(self) -> list[str]:
        """The rest of the input (what Write writes, Edit's strings, Bash's description), one
        ``name: value`` line per argument, sorted by name: a text value shown as text, anything else
        as JSON, both escaped (:func:`show_target`: a newline is ``\\n``, so no value can pass for
        another line). [] when there is none or the target already is the whole input."""
        key = self.target_key
        if key is None or not isinstance(self.tool_input, dict):
            return []
        change = self.change
        diffed = change.shown_keys if change is not None and not change.problem else ()
        rest = {k: v for k, v in self.tool_input.items() if k != key and k not in diffed}
        return [f"{show_target(str(k)).text}: {show_target(v if isinstance(v, str) else stable_json(v)).text}"
                for k, v in sorted(rest.items(), key=lambda item: str(item[0]))]

    @property
    def details(self) -> str:
        """:attr:`details_lines` as one text (a line each), shown under the target; "" when none."""
        return "\n".join(self.details_lines)

    def change_lines(self, color: bool = False) -> list[str]:
        """:attr:`change` for a text prompt: a heading, then the diff's lines indented (coloured with
        ``color``); one line saying why when there is no diff; [] when there is no change to show."""
        change = self.change
        if change is None:
            return []
        if change.problem:
            return [f"  no diff: {show_target(change.problem).text}"]
        lines = [f"  change ({change.summary}):" if change.lines else f"  change: {change.summary}"]
        for line in change.lines:
            text = f"    {line.text}"
            colour = DIFF_COLOURS.get(line.kind) if color else None
            lines.append(f"\x1b[{colour}m{text}\x1b[0m" if colour else text)
        return lines

    def question(self, color: bool = False) -> str:
        """The whole question for a text prompt: what is asked, the target whole, the change an Edit or
        Write would make (:meth:`change_lines`, coloured with ``color``), the rest of the input
        (:attr:`details`), then the answer keys.

        A target longer than :data:`LONG_TARGET` characters fills more than a few terminal rows and
        its start may have scrolled away: a last line next to the keys says so, with its size.
        """
        shown = self.shown
        details = self.details_lines
        change = self.change_lines(color)
        size = len(shown.text) + sum(len(line) for line in details) + sum(len(line) for line in change[1:])
        reminder = (f"  ^ end of a long target ({shown.summary}): read it from its start above\n"
                    if size > LONG_TARGET else "")
        return (f"permission: allow {self.policy_name}? {self.target_heading}:\n"
                f"  {shown.text}\n"
                + (f"  resolves to: {self.shown_resolved}\n" if self.resolved else "")
                + "".join(f"{line}\n" for line in change)
                + "".join(f"  {line}\n" for line in details)
                + f"{reminder}{ANSWER_KEYS}: ")

    def __str__(self) -> str:  # prompts written for a plain question string keep working
        return f"allow {self.describe()} ({self.shown.summary})? {ANSWER_KEYS}"
