"""Claude Code's command names: the ones Mnemara has under another name run that command; the others
answer what to use instead. ``/help`` lists them after the commands (:func:`help_rows`).

:data:`CLAUDE_CODE_NAMES` is the one place they live. An alias becomes an alias of its target's
spec (``/help compact`` shows ``/compress``); a name with no Mnemara equivalent is an unlisted
command that only answers. A name Mnemara itself has (``/clear``, ``/export``, ``/context``,
``/add-dir``, ``/help``, ``/memory``) is not in the table: it is that command already. A name another
module registers as a command of its own (``/cost``, once it exists) stays that command: a name is
only filled here while it is free.
"""
from __future__ import annotations

from dataclasses import dataclass

from mnemara.commands import _REGISTRY, CommandContext, CommandResult, CommandSpec, add_alias, command, load_all
from mnemara.commands import context as _context, stats as _stats  # noqa: F401  (the targets, registered first)


@dataclass(frozen=True)
class ClaudeCodeName:
    """``/name`` as Claude Code has it: Mnemara's ``target`` command, or what to use ``instead``."""

    name: str
    target: str = ""
    instead: str = ""


CLAUDE_CODE_NAMES: tuple[ClaudeCodeName, ...] = (
    ClaudeCodeName("model", target="model"),  # its own command below: /swap with a model, /models without
    ClaudeCodeName("compact", target="compress"),
    ClaudeCodeName("status", target="stats"),
    ClaudeCodeName("usage", target="stats"),
    ClaudeCodeName("cost", target="stats"),
    ClaudeCodeName("permissions", instead=(
        "permissions are the instance's config.json (allowed_tools, bash_allow) and permissions.json "
        "(what `a` allowed): edit them, or answer `a` to a question; docs/permissions.md")),
    ClaudeCodeName("resume", instead=(
        "the conversation is kept: `mnemara run -i NAME` opens the instance where it was; /show prints the "
        "window; /import FILE restores an /export file")),
    ClaudeCodeName("init", instead="the role doc is the instructions: /role_doc edits it, /role PATH switches files"),
    ClaudeCodeName("config", instead=(
        "settings are the instance's config.json: /swap (model), /tokens (window), /keys (send key), /name, "
        "/role; docs/configuration.md lists every field")),
    ClaudeCodeName("rewind", instead="/undo puts back the last eviction or compression; /evict last N drops rows"),
)


@command("model", usage="/model [opus|sonnet|haiku|latest|mini|n|claude-...] [--temp] [--force]",
         help="Claude Code's name: with a model, as /swap; alone, as /models")
def model_cmd(ctx: CommandContext, args: str) -> CommandResult:
    from mnemara.commands.core import models_cmd, swap_cmd

    return swap_cmd(ctx, args) if args.strip() else models_cmd(ctx, "")


def _answering(entry: ClaudeCodeName) -> CommandSpec:
    def answer(ctx: CommandContext, args: str) -> CommandResult:
        return CommandResult(f"/{entry.name} is Claude Code's; Mnemara has none: {entry.instead}")

    return CommandSpec(entry.name, answer, f"/{entry.name}", entry.instead, listed=False)


def _register() -> None:
    for entry in CLAUDE_CODE_NAMES:
        if entry.target and entry.target != entry.name:
            add_alias(entry.name, entry.target)
        elif entry.instead and entry.name not in _REGISTRY:
            _REGISTRY[entry.name] = _answering(entry)


_register()


def help_rows() -> list[tuple[str, str]]:
    """One row per Claude Code name that still means what the table says: what runs, or what to use."""
    load_all()
    rows = []
    for entry in CLAUDE_CODE_NAMES:
        spec = _REGISTRY.get(entry.name)
        if spec is None:
            continue
        if entry.instead and not spec.listed:
            rows.append((f"/{entry.name}", f"none here: {entry.instead}"))
        elif entry.name == "model":
            rows.append(("/model", "/swap MODEL, or alone /models"))
        elif spec.name == entry.target:
            rows.append((f"/{entry.name}", f"runs /{entry.target}"))
        elif spec.name == entry.name:  # Mnemara has a command of this name itself now
            rows.append((f"/{entry.name}", "the same name here"))
    return rows
