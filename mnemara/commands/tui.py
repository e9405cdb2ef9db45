"""Commands that only the chat panel can carry out: they open one of its modal screens.

The REPL prints their text (saying they are TUI-only); the panel reacts to the
``action`` and opens the role doc editor or the context viewer.
"""
from __future__ import annotations

from pathlib import Path

from mnemara.commands import CommandContext, CommandResult, command
from mnemara.commands.payloads import FileShown
from mnemara.core.fsutil import atomic_write_text

_ONLY = "is TUI-only: run `mnemara run` without --no-tui (or unset MNEMARA_NO_TUI) to use it"


def is_example_role(path: str) -> bool:
    """A role doc shipped in a checkout's ``examples/roles/``: editing it in place edits the repository."""
    parent = Path(path).expanduser().resolve().parent
    return bool(path) and parent.name == "roles" and parent.parent.name == "examples"


def _copy_target(root: Path, source: Path) -> Path:
    """``role.md`` in the instance, or ``role-2.md``... when a different role.md is already there."""
    text = source.read_bytes()
    for n in range(1, 100):
        target = root / ("role.md" if n == 1 else f"role-{n}.md")
        if not target.exists() or target.read_bytes() == text:
            return target
    raise ValueError(f"too many role copies in {root}")


@command("role_doc", usage="/role_doc [copy]", tui_only=True,
         help="open the role doc editor (edit live; Ctrl+S saves; the next turn uses it); "
              "copy: first save a copy into the instance and switch to it")
def role_doc(ctx: CommandContext, args: str) -> CommandResult:
    word = args.strip().lower()
    if word not in ("", "copy"):
        raise ValueError("/role_doc takes no arguments but 'copy' (to switch files use /role <path>)")
    path = str(getattr(getattr(ctx, "config", None), "role_doc_path", "") or "")
    if word == "copy":
        return _copy_role(ctx, path)
    if path and is_example_role(path):
        return CommandResult(
            f"the role doc {path} is one of the repository's examples: editing it changes the checkout. "
            "/role_doc copy saves a copy into this instance and edits that",
            action="offer_role_copy", payload=FileShown(path))
    return CommandResult(f"/role_doc {_ONLY}", action="open_role_editor")


def _copy_role(ctx: CommandContext, path: str) -> CommandResult:
    from mnemara.core.debuglog import log_event

    if ctx is None or not path:
        raise ValueError("no role doc is set to copy (set one with /role <path>)")
    source = Path(path).expanduser()
    if not source.is_file():
        raise ValueError(f"the role doc {path} is not a readable file")
    target = _copy_target(ctx.instance.root, source)
    if not target.exists() and not target.is_symlink():  # a planted dangling link is refused by the write
        atomic_write_text(target, source.read_text(encoding="utf-8"))
    ctx.update_config(role_doc_path=str(target))
    log_event(ctx.instance.debug_log_path, "role_doc_copied", source=str(source), copy=str(target))
    return CommandResult(f"copied {source} to {target}; the role doc is now the copy", action="open_role_editor",
                         payload=FileShown(str(target)))


@command("context", usage="/context", tui_only=True,
         help="open the context viewer (token breakdown, rows, pinned slots, edit in place)")
def context(ctx: CommandContext, args: str) -> CommandResult:
    if args:
        raise ValueError("/context takes no arguments")
    return CommandResult(f"/context {_ONLY}", action="open_context")
