"""Core slash commands: /show /models /swap /note /role /stop /quit /exit (/help is in ``help_listing``).

``ctx`` is a :class:`~mnemara.commands.CommandContext` (an ``AgentSession``).
Commands that change config.json go through ``ctx.update_config`` (validated,
atomic, live for every holder of the config).
"""
from __future__ import annotations

import re

from mnemara.commands import CommandContext, CommandResult, command, split_args
from mnemara.commands.payloads import ModelChosen
from mnemara.core.debuglog import log_event
from mnemara.core.errors import UsageError

#: Shortcut -> current model id, in the order /models numbers them.
MODEL_SHORTCUTS: dict[str, str] = {
    "opus": "claude-opus-4-7",
    "sonnet": "claude-sonnet-4-6",
    "haiku": "claude-haiku-4-5",
}
#: Aliases Mnemara 0.18 users type, meaning what they meant there ("default" is 0.18's default model).
MODEL_ALIASES: dict[str, str] = {
    "latest": "claude-opus-4-7",
    "frontier": "claude-opus-4-7",
    "default": "claude-opus-4-7",
    "mini": "claude-haiku-4-5",
}
MODEL_ID_RE = re.compile(r"claude-[a-z0-9][a-z0-9.\-]{1,80}")
FLAG_HELP = "--temp: this session only (config.json untouched)"


def resolve_model(arg: str) -> str:
    """A shortcut or alias, a /models number or a full ``claude-...`` id -> the model id."""
    key = arg.strip().lower()
    if not key:
        raise ValueError("give a model: a shortcut (opus, sonnet, haiku), its /models number, or a claude-... id")
    if key in MODEL_SHORTCUTS or key in MODEL_ALIASES:
        return MODEL_SHORTCUTS.get(key) or MODEL_ALIASES[key]
    if key.isdigit():
        index = int(key)
        if not 1 <= index <= len(MODEL_SHORTCUTS):
            raise ValueError(f"no model number {index}: /models lists 1-{len(MODEL_SHORTCUTS)}")
        return list(MODEL_SHORTCUTS.values())[index - 1]
    if MODEL_ID_RE.fullmatch(key):
        return key
    raise ValueError(f"unknown model {arg.strip()!r}: use opus, sonnet, haiku, latest, frontier, default, mini, "
                     "a /models number, or a claude-... id")


def split_flags(args: str, *allowed: str) -> tuple[list[str], set[str]]:
    """Positional words and the ``--flags`` (only ``allowed`` ones; anything else is refused)."""
    words, flags = [], set()
    for part in split_args(args):
        if part.startswith("--"):
            if part not in allowed:
                raise ValueError(f"unknown option {part} (options: {', '.join(allowed)})")
            flags.add(part)
        else:
            words.append(part)
    return words, flags


COLUMN_CAP = 26  # a first-column cell longer than this gets a line of its own


def columns_text(rows: list[tuple[str, str]], width: int | None = None) -> str:
    """Two columns as text; with ``width``, the second column wraps under itself (a hanging indent)."""
    import textwrap

    if width is None:
        left = max(len(a) for a, _ in rows) + 2
        return "\n".join(f"{a.ljust(left)}{b}".rstrip() for a, b in rows)
    left = min(max(len(a) for a, _ in rows), COLUMN_CAP) + 2
    room = max(20, width - left - 1)
    out = []
    for a, b in rows:
        wrapped = textwrap.wrap(b, room) or [""]
        if len(a) > COLUMN_CAP:
            out.append(a)
            out += [" " * left + line for line in wrapped]
        else:
            out.append(f"{a.ljust(left)}{wrapped[0]}")
            out += [" " * left + more for more in wrapped[1:]]
    return "\n".join(out)


@command("show", usage="/show [N]", help="print the rolling window (pinned slots first); N = newest N rows only")
def show_cmd(ctx: CommandContext, args: str) -> CommandResult:
    from mnemara.context.transcript_text import format_turn

    arg = args.strip()
    if arg and (not arg.isdigit() or int(arg) <= 0):
        raise ValueError(f"N must be a positive whole number, not {arg!r}")
    cfg = ctx.config
    win = ctx.store.window_for(cfg)
    rows = win.rows[-int(arg):] if arg else win.rows
    turns = [*win.pinned, *rows]
    if not turns:
        return CommandResult("(the window is empty)")
    return CommandResult("\n".join(format_turn(t, cfg.display_name) for t in turns))


@command("models", usage="/models", help="list models, their numbers and aliases (use /swap <name|n> to switch)")
def models_cmd(ctx: CommandContext, args: str) -> CommandResult:
    if args.strip():
        raise ValueError("/models takes no arguments")
    current = ctx.config.model
    lines = [f"{'*' if model == current else ' '} {i}. {name:<7} {model}"
             for i, (name, model) in enumerate(MODEL_SHORTCUTS.items(), start=1)]
    if current not in MODEL_SHORTCUTS.values():
        lines.append(f"* current: {current}")
    lines.append("aliases: " + ", ".join(f"{k}={v}" for k, v in MODEL_ALIASES.items()) + " (as in Mnemara 0.18)")
    lines.append("switch: /swap <name|n|claude-...> [--temp]")
    return CommandResult("\n".join(lines))


@command("swap", usage="/swap <opus|sonnet|haiku|latest|mini|n|claude-...> [--temp] [--force]",
         help="switch model (saved; --temp: this session only; --force: keep a model id /models does not list)")
def swap_cmd(ctx: CommandContext, args: str) -> CommandResult:
    words, flags = split_flags(args, "--temp", "--force")
    if len(words) != 1:
        raise ValueError("give exactly one model")
    model = resolve_model(words[0])
    known = set(MODEL_SHORTCUTS.values())
    if model not in known and "--force" not in flags:
        return CommandResult(f"warning: {model} is not a model /models knows ({', '.join(sorted(known))}); "
                             f"a typo fails every turn. Nothing changed; to use it anyway: /swap {model} --force",
                             ok=False)
    old = ctx.config.model
    if "--temp" in flags:
        ctx.override_config(model=model)
        where = "this session only; config.json keeps " + str(saved_value(ctx, "model"))
    else:
        ctx.update_config(model=model)
        where = "saved to config.json"
    log_event(ctx.instance.debug_log_path, "model_swapped", old=old, new=model, temp="--temp" in flags)
    warn = "" if model in known else f"\nwarning: {model} is not a model /models knows; kept because of --force"
    return CommandResult(f"model: {model} (was {old}; {where}){warn}", payload=ModelChosen(model))


def saved_value(ctx: CommandContext, key: str) -> object:
    from mnemara.core.config import Config

    return getattr(Config.load(ctx.instance.config_path), key)


@command("note", usage="/note [-c CATEGORY] <text>", help="append a note to today's memory file")
def note_cmd(ctx: CommandContext, args: str) -> CommandResult:
    text, category = args.strip(), None
    if text in ("-c", "--category"):
        raise ValueError(f"{text} needs a category and then the text of the note")
    if text.startswith(("-c ", "--category ")):
        _, _, rest = text.partition(" ")
        category, _, text = rest.strip().partition(" ")
    if not text.strip():
        raise ValueError("give the text of the note")
    from mnemara.memory import provenance
    from mnemara.memory.dedupe import check_write, propose_conflicts
    from mnemara.memory.surfaces import note_files

    check = check_write(ctx.instance.memory_dir, text)
    if check.duplicate is not None:
        same = check.duplicate.atom
        return CommandResult(f"not appended: already noted in memory/{same.file.name} at {same.timestamp} (id {same.id})")
    atom, wiki = note_files(ctx.instance, text, category)
    provenance.record(ctx.instance.memory_dir, atom.id, "user", via="/note")
    propose_conflicts(ctx.instance.memory_dir, check, atom)
    lines = check.lines()
    lines.append(f"noted in memory/{atom.file.name} at {atom.timestamp} (id {atom.id})"
                 + (f"; also appended to {wiki}" if wiki else ""))
    return CommandResult("\n".join(lines))


@command("role", usage="/role [path]", help="show the role doc path, or switch to another file (saved; next turn uses it)")
def role_cmd(ctx: CommandContext, args: str) -> CommandResult:
    from mnemara.core.roledoc import check_role_file, read_role_doc

    parts = split_args(args)
    if not parts:
        path = ctx.config.role_doc_path
        if not path:
            return CommandResult("(no role doc set; use /role <path>)")
        doc = read_role_doc(path)
        return CommandResult(f"role doc: {path}" + (f"\nwarning: {doc.warning}" if doc.warning else f" ({len(doc.text)} chars)"))
    if len(parts) > 1:
        raise ValueError("give one path (quote it if it has spaces)")
    resolved = str(check_role_file(parts[0]))
    ctx.update_config(role_doc_path=resolved)
    log_event(ctx.instance.debug_log_path, "role_doc_set", path=resolved, source="/role")
    return CommandResult(f"role doc: {resolved} (the next turn uses it)")


@command("stop", usage="/stop", help="cancel the turn in flight (it is kept, marked interrupted)")
def stop_cmd(ctx: CommandContext, args: str) -> CommandResult:
    if args.strip():
        raise ValueError("/stop takes no arguments")
    if not ctx.busy:
        return CommandResult("nothing to stop", ok=False)
    return CommandResult("stopping the current turn…", action="stop")


@command("quit", usage="/quit", help="leave (the window is saved as it is)", aliases=("exit",))
def quit_cmd(ctx: CommandContext, args: str) -> CommandResult:
    if args.strip():
        raise UsageError("/quit takes no arguments")
    return CommandResult("bye", action="quit")
