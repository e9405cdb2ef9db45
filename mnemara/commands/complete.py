"""Tab completion of slash commands, their arguments and paths (UI-neutral; the panel calls it).

What a command's arguments can be is read from its ``usage`` (``/swap <opus|sonnet|...|claude-...>``,
``/pin <row_id> [label]``, ``/role [path]``), so a new command completes without a list to edit:

- literal words (``on|off``, ``stats|tools``) and ``--flags`` complete as themselves;
- ``path`` completes file and folder names; ``row_id`` the ids of stored rows (newest first);
- ``claude-...`` model ids (with the shortcuts); ``instance`` the instance names.

In a message (not a command) a word that looks like a path (``/``, ``~/``, ``./`` or with a ``/``)
completes as a path, and so does the path after ``@`` (an ``@path`` mention, taken from the session's folder).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from mnemara.commands import specs

if TYPE_CHECKING:
    from mnemara.commands import CommandContext

ROW_IDS = 200  # newest stored rows offered for a row id
PATHS = 400  # entries of one folder looked at
_TOKEN = re.compile(r"\[[^\]]*\]|<[^>]*>(?:\.\.\.)?|\S+")
_WORD = re.compile(r"[a-z_][a-z0-9_+\-]*")
_PATH_WORD = re.compile(r"^(~|\.{1,2})?/|/")


@dataclass(frozen=True)
class Candidate:
    value: str
    hint: str = ""  # shown beside the value in the list (a row's role and first words)


@dataclass
class Completion:
    """Replace ``line[start:end]`` (``word``) with one of ``candidates``."""

    start: int
    end: int
    word: str
    candidates: list[Candidate] = field(default_factory=list)

    @property
    def values(self) -> list[str]:
        return [c.value for c in self.candidates]

    def common_prefix(self) -> str:
        return os.path.commonprefix(self.values) if self.candidates else self.word


@dataclass(frozen=True)
class Slot:
    """One argument position of a usage string."""

    words: tuple[str, ...]  # literal choices
    kinds: tuple[str, ...]  # "path", "row_id", "model", "instance"
    optional: bool
    repeats: bool


def parse_usage(usage: str) -> tuple[list[Slot], list[str]]:
    """The positional slots and the ``--flags`` of a usage string like ``/pin <row_id> [label]``."""
    slots: list[Slot] = []
    flags: list[str] = []
    for token in _TOKEN.findall(usage)[1:]:
        optional = token.startswith("[")
        repeats = token.endswith("...")
        inner = token.strip("[]").removesuffix("...")
        words: list[str] = []
        kinds: list[str] = []
        for alternative in inner.split("|"):
            alt = alternative.strip().strip("<>").removesuffix("...").split(" ")[0]
            if alt.startswith("--"):
                flags.append(alt)
            elif alt in ("path", "PATH"):
                kinds.append("path")
            elif alt in ("row_id", "row_ids"):
                kinds.append("row_id")
            elif alt == "instance":
                kinds.append("instance")
            elif alt == "claude-":
                kinds.append("model")
            elif _WORD.fullmatch(alt) and alt not in ("n", "label", "text", "command"):
                words.append(alt)
        if words or kinds or not all(a.strip().startswith("--") for a in inner.split("|")):
            slots.append(Slot(tuple(words), tuple(kinds), optional, repeats))
    return slots, flags


def _slots_at(slots: list[Slot], position: int) -> list[Slot]:
    """The slots an argument at ``position`` may fill (an optional slot may have been left out)."""
    found: list[Slot] = []
    for index in range(position, len(slots)):
        found.append(slots[index])
        if not slots[index].optional:
            break
    if not found and slots and slots[-1].repeats:
        found.append(slots[-1])
    return found


def complete(ctx: CommandContext, line: str, cursor: int | None = None) -> Completion | None:
    """What can replace the word before ``cursor`` in ``line``; None when nothing applies."""
    text = line[: len(line) if cursor is None else cursor]
    start = max(text.rfind(" "), text.rfind("\n"), text.rfind("\t")) + 1
    word = text[start:]
    end = start + len(word)
    if text.startswith("/") and not text.startswith("//") and "\n" not in text:
        head, _, _ = text.partition(" ")
        if start == 0:
            return Completion(0, end, word, _commands(word))
        return _argument(ctx, head[1:].lower(), text[len(head):start].split(), start, end, word)
    if word.startswith("@") and not word.startswith("@@"):  # an @mention attaches a file: complete its path
        cwd = getattr(ctx, "cwd", None)
        found = paths(word[1:], cwd if isinstance(cwd, str) else None)
        return Completion(start, end, word, [Candidate(_mention(c.value), c.hint) for c in found])
    if _PATH_WORD.search(word):
        return Completion(start, end, word, paths(word))
    return None


def _mention(path: str) -> str:
    """``@path``; quoted when the path holds a space (``@"my notes.md"``), as a mention is then written."""
    return f'@"{path}"' if any(ch.isspace() for ch in path) else f"@{path}"


def _commands(word: str) -> list[Candidate]:
    prefix = word[1:].lower()
    out = []
    for spec in specs():
        for name in (spec.name, *spec.aliases):
            if name.startswith(prefix) and name.isidentifier():
                out.append(Candidate(f"/{name}", spec.help.split(";")[0]))
    return sorted(out, key=lambda c: c.value)


def _argument(ctx: CommandContext, name: str, before: list[str], start: int, end: int, word: str) -> Completion:
    spec = next((s for s in specs() if name == s.name or name in s.aliases), None)
    if spec is None:  # nothing to offer (the panel rings the bell; Enter will say the command is unknown)
        return Completion(start, end, word)
    slots, flags = parse_usage(spec.usage)
    if word.startswith("-"):
        return Completion(start, end, word, [Candidate(f) for f in flags if f.startswith(word) and f not in before])
    position = len([w for w in before if not w.startswith("--")])
    out: list[Candidate] = []
    for slot in _slots_at(slots, position):
        out += [Candidate(w) for w in slot.words if w.startswith(word)]
        for kind in slot.kinds:
            out += _of_kind(ctx, kind, word)
    unique: dict[str, Candidate] = {}
    for candidate in out:
        unique.setdefault(candidate.value, candidate)
    return Completion(start, end, word, list(unique.values()))


def _of_kind(ctx: CommandContext, kind: str, word: str) -> list[Candidate]:
    if kind == "path":
        return paths(word)
    if kind == "model":
        from mnemara.commands.core import MODEL_ALIASES, MODEL_SHORTCUTS

        names = [*MODEL_SHORTCUTS, *MODEL_ALIASES, *dict.fromkeys(MODEL_SHORTCUTS.values())]
        return [Candidate(n) for n in names if n.startswith(word.lower())]
    if kind == "instance":
        from mnemara.store.instance import list_instances

        return [Candidate(n) for n in list_instances() if n.startswith(word)]
    if kind == "row_id":
        return row_ids(ctx, word)
    return []


def row_ids(ctx: CommandContext, word: str) -> list[Candidate]:
    """Ids of the newest stored rows starting with ``word``, newest first, each with its role and words."""
    store = getattr(ctx, "store", None)
    if store is None:
        return []
    try:
        rows = store.history(limit=ROW_IDS)
    except Exception:  # a damaged store completes nothing; the command itself will say why
        return []
    out = []
    for turn in reversed(rows):
        value = str(turn.id)
        if value.startswith(word):
            words = " ".join(str(getattr(turn, "text", "")).split())[:40]
            out.append(Candidate(value, f"{turn.role}: {words}"))
    return out


def paths(word: str, cwd: str | None = None) -> list[Candidate]:
    """Entries of the folder ``word`` names that start with its last part; folders end with ``/``. A relative
    ``word`` is taken from ``cwd`` (default: this process's folder)."""
    folder, _, prefix = word.rpartition("/")
    base = Path(os.path.expanduser(folder + "/" if folder or word.startswith("/") else "."))
    if cwd is not None and not base.is_absolute():
        base = Path(cwd) / base
    try:
        entries = []
        with os.scandir(base) as found:
            for n, entry in enumerate(found):
                if n >= PATHS:
                    break
                if (entry.name.startswith(prefix) and (prefix.startswith(".") or not entry.name.startswith("."))
                        and entry.name.isprintable()):  # a name with control characters is never offered
                    entries.append(entry)
    except OSError:
        return []
    lead = word[: len(word) - len(prefix)]
    out = []
    for entry in entries:
        try:
            is_dir = entry.is_dir()
        except OSError:
            is_dir = False
        out.append(Candidate(lead + entry.name + ("/" if is_dir else "")))
    return sorted(out, key=lambda c: c.value)
