"""``/add-dir PATH``: let file tools use a folder besides ``$HOME`` (``file_tool_roots``).

The command checks the folder (:func:`mnemara.guard.file_roots.check_root`), asks
(``action="confirm"``; the UI re-runs ``data["command"]``, which ends in ``--yes``), then saves
the folder, resolved, to config.json. Folders given with ``mnemara run --dir`` for this session
only stay in force and stay unsaved.
"""
from __future__ import annotations

import shlex

from mnemara.commands import CommandContext, CommandResult, command
from mnemara.commands.payloads import Confirm
from mnemara.commands.core import split_flags
from mnemara.core.config import Config
from mnemara.guard.file_roots import check_root, real_homes, under

USAGE = "/add-dir [PATH]"


@command("add-dir", usage=USAGE, help="let file tools use a folder besides $HOME (asks, then saves it in "
                                      "config.json's file_tool_roots); no PATH: list the folders")
def add_dir_cmd(ctx: CommandContext, args: str) -> CommandResult:
    words, flags = split_flags(args, "--yes")
    home, instances = real_homes()
    saved = list(Config.load(ctx.instance.config_path).file_tool_roots)
    if not words and not flags:
        return CommandResult(_listing(ctx, home, saved))
    if len(words) != 1:
        raise ValueError("give one folder, e.g. /add-dir /srv/project (quote a path with spaces)")
    folder = check_root(words[0], home, instances)
    if under(folder, home):
        return CommandResult(f"{folder} is inside $HOME, which file tools may already use: nothing to add", ok=False)
    if folder in saved:
        return CommandResult(f"{folder} is already in file_tool_roots: nothing to add", ok=False)
    if "--yes" not in flags:
        via = f" ({words[0]} resolves there)" if words[0] != folder else ""
        question = (f"let file tools (Read, Write, Edit, ...) use {folder}{via} and everything under it, in this "
                    f"and later sessions? (saved in config.json's file_tool_roots; the tools' own policies still ask)")
        return CommandResult(question, action="confirm",
                             payload=Confirm(f"/add-dir {shlex.quote(folder)} --yes", question,
                                             title="Let file tools use this folder?", yes_label="Add the folder (y)"))
    session_only = [root for root in ctx.config.file_tool_roots if root not in saved and root != folder]
    ctx.update_config(file_tool_roots=[*saved, folder])
    if session_only:  # mnemara run --dir folders: still this session's, still not saved
        ctx.override_config(file_tool_roots=[*saved, folder, *session_only])
    off = "" if ctx.config.file_tool_home_only else " (file_tool_home_only is off: file tools may use any folder now)"
    return CommandResult(f"file tools may use {folder} (saved in file_tool_roots){off}")


def _listing(ctx: CommandContext, home: str, saved: list[str]) -> str:
    """The folders file tools may use now, each saying where it comes from."""
    if not ctx.config.file_tool_home_only:
        return "file_tool_home_only is off: file tools may use any folder"
    rows = [f"  {home} ($HOME)"]
    rows += [f"  {root} ({'saved' if root in saved else 'this session only'})" for root in ctx.config.file_tool_roots]
    hint = "" if ctx.config.file_tool_roots else "\n/add-dir PATH adds a folder"
    return "file tools may use:\n" + "\n".join(rows) + hint
