"""Context slash commands: /evict, /clear, /compress, /undo, /unevict, /tokens, /export, /import, /skeleton, /name, /pin, /unpin.

Each is a thin adapter over :mod:`mnemara.context`; ``ctx`` is a
:class:`~mnemara.commands.CommandContext` (an ``AgentSession``). Bad
arguments raise ``ValueError`` before anything is touched, so the dispatcher
answers with the usage line and the store stays as it was.

``/evict``, ``/clear`` and ``/compress`` record their batch so ``/undo`` (or
``/unevict last``) puts it back. ``/compress`` without ``--yes`` only shows what
would go and asks (``action="confirm"``; the UI re-runs ``data["command"]``).
"""
from __future__ import annotations

import shlex
from pathlib import Path

from mnemara.commands import CommandContext, CommandResult, command, split_args
from mnemara.commands.payloads import Confirm, PermissionChanges, SendTurn, SkeletonShown
from mnemara.context import compress, eviction, exchange, undo
from mnemara.context.skeleton import read_skeleton
from mnemara.core.debuglog import log_event
from mnemara.core.errors import UsageError
from mnemara.core.tokens import parse_token_count

EVICT_USAGE = "/evict [stats|tools|thinking|writes|user|assistant|N|last N]"
COMPRESS_USAGE = "/compress [N%|N|500k|1m|smart|reads] [--yes]"
#: /compress never brings the window under this many tokens: below it there is nothing worth compressing.
COMPRESS_FLOOR = 2000


def _positive_int(text: str, what: str) -> int:
    if not text.isdigit() or int(text) <= 0:
        raise ValueError(f"{what} must be a positive whole number, not {text!r}")
    return int(text)


def _log(ctx: CommandContext, result: eviction.EvictionResult) -> None:
    log_event(ctx.instance.debug_log_path, "eviction", strategy=result.strategy, rows=result.rows,
              tokens_freed=result.tokens_freed, row_ids=result.row_ids[:1000], by="user")


@command("evict", usage=EVICT_USAGE, help="show eviction stats, or strip blocks / drop rows from the window")
def evict_cmd(ctx: CommandContext, args: str) -> CommandResult:
    parts = split_args(args)
    if len(parts) > 2:
        raise ValueError("too many arguments")
    head = parts[0].lower() if parts else "stats"
    if head == "last":
        if len(parts) != 2:
            raise ValueError("/evict last needs a number of rows")
        n = _positive_int(parts[1], "N")
        run = lambda: eviction.evict_newest(ctx.store, n)  # noqa: E731
    elif len(parts) == 2:
        raise ValueError(f"unexpected argument {parts[1]!r}")
    elif head == "stats":
        return CommandResult(eviction.format_stats(eviction.eviction_stats(ctx.store)))
    elif head in ("tools", "thinking", "writes"):
        fn = {"tools": eviction.evict_tool_use_blocks, "thinking": eviction.evict_thinking_blocks,
              "writes": eviction.evict_write_pairs}[head]
        run = lambda: fn(ctx.store)  # noqa: E731
    elif head in ("user", "assistant"):
        run = lambda: eviction.evict_role(ctx.store, head)  # noqa: E731
    elif head.isdigit():
        n = _positive_int(head, "N")
        run = lambda: eviction.evict_oldest(ctx.store, n)  # noqa: E731
    else:
        raise ValueError(f"unknown argument {parts[0]!r}")
    with _batch(ctx, f"/evict {args.strip() or 'stats'}"):
        result = run()
    _log(ctx, result)
    return CommandResult(result.summary() + _UNDO_HINT * bool(result.rows), payload=result)


_UNDO_HINT = " (/undo puts it back)"


def _batch(ctx: CommandContext, label: str) -> undo.Batch:
    return undo.Batch(ctx.store, ctx.instance.root, label)


@command("clear", usage="/clear", help="take every unpinned row out of the window (kept on disk); pinned rows stay")
def clear_cmd(ctx: CommandContext, args: str) -> CommandResult:
    if args.strip():
        raise ValueError("/clear takes no arguments")
    with _batch(ctx, "/clear"):
        result = eviction.clear_window(ctx.store)
    _log(ctx, result)
    pinned = len(ctx.store.pinned())
    return CommandResult(f"cleared {result.rows} rows, ~{result.tokens_freed} tokens freed; {pinned} pinned row(s) kept"
                         + _UNDO_HINT * bool(result.rows), payload=result)


@command("compress", usage=COMPRESS_USAGE,
         help="shrink the window to 25% of its token budget (or N% of it, or N tokens): shows what goes and asks; "
              "--yes applies; smart: let the agent audit it; reads: stub repeated Reads")
def compress_cmd(ctx: CommandContext, args: str) -> CommandResult:
    parts = split_args(args)
    yes = "--yes" in parts or "-y" in parts
    parts = [p for p in parts if p not in ("--yes", "-y")]
    if len(parts) > 1:
        raise ValueError("too many arguments")
    arg = parts[0].lower() if parts else ""
    if arg == "smart":
        prompt = compress.build_audit_prompt(ctx.store, ctx.config.max_window_tokens)
        return CommandResult("sending a context audit turn to the agent", action="send", payload=SendTurn(prompt))
    if arg == "reads":
        with _batch(ctx, "/compress reads"):
            result = compress.compress_repeated_reads(ctx.store, protect=ctx.config.preserve_compressed_reads)
        _log(ctx, result)
        return CommandResult(result.summary() + _UNDO_HINT * bool(result.rows), payload=result)
    budget = ctx.config.max_window_tokens
    target, how = _compress_target(arg, budget)
    have = compress.window_tokens(ctx.store)
    if target < COMPRESS_FLOOR:
        return CommandResult(f"not compressed: the target ~{target} tokens ({how}) is under the floor of "
                             f"{COMPRESS_FLOOR} tokens; /compress never empties the conversation", ok=False)
    if have <= COMPRESS_FLOOR:
        return CommandResult(f"nothing to compress: the window holds ~{have} tokens, under the floor of {COMPRESS_FLOOR}")
    if have <= target:
        return CommandResult(f"nothing to compress: the window holds ~{have} tokens, already under the target "
                             f"~{target} ({how})")
    plan = compress.plan_compress(ctx.store, target, preserve_protected=ctx.config.preserve_compressed_reads)
    if plan.empty:
        return CommandResult(f"nothing to compress: what is left (~{have} tokens) is the last exchange (which "
                             "/compress always keeps), pinned or protected rows")
    if not yes:
        steps = "\n".join(f"  - {line}" for line in plan.describe())
        question = (f"compress the window from ~{plan.before} to ~{plan.after} tokens (target ~{target}, {how})?\n"
                    f"{steps}\nrows stay on disk; /undo puts them back")
        return CommandResult(question, action="confirm",
                             payload=Confirm(f"/compress {target} --yes", question, plan=tuple(plan.describe())))
    with _batch(ctx, "/compress"):
        report = compress.apply_plan(ctx.store, plan)
    for stage in report.stages:
        _log(ctx, stage)
    return CommandResult(report.summary() + "\n  /undo puts it back", payload=report)


def _compress_target(arg: str, budget: int) -> tuple[int, str]:
    """The token target of ``/compress [arg]`` and how it was measured (always against the budget for %)."""
    if not arg:
        return compress.budget_target(budget), f"25% of the {budget}-token budget"
    if arg.endswith("%"):
        number = arg[:-1]
        try:
            percent = float(number)
        except ValueError:
            raise ValueError(f"{arg!r} is not a percentage") from None
        if not 0 < percent < 100:
            raise ValueError(f"the percentage must be between 0 and 100, not {arg!r}")
        return compress.budget_target(budget, percent / 100), f"{arg} of the {budget}-token budget"
    return parse_token_count(arg), "as given"


@command("undo", usage="/undo", help="put back the last /compress, /evict or /clear batch (rows and stripped blocks)")
def undo_cmd(ctx: CommandContext, args: str) -> CommandResult:
    if args.strip():
        raise ValueError("/undo takes no arguments")
    text = undo.undo_last(ctx.store, ctx.instance.root)
    log_event(ctx.instance.debug_log_path, "eviction_undone", by="user")
    return CommandResult(text)


@command("unevict", usage="/unevict last|<row_id>...", help="bring evicted rows back: last = the last batch (like /undo)")
def unevict_cmd(ctx: CommandContext, args: str) -> CommandResult:
    parts = split_args(args)
    if parts == ["last"]:
        return undo_cmd(ctx, "")
    if not parts:
        raise ValueError("give 'last' or one or more row ids")
    ids = [_positive_int(p, "row_id") for p in parts]
    back = ctx.store.unevict(ids)
    log_event(ctx.instance.debug_log_path, "unevicted", row_ids=ids, rows=back, by="user")
    missing = len(ids) - back
    return CommandResult(f"{back} row(s) back in the window" + (f"; {missing} were not evicted rows" if missing else ""))


SMALL_WINDOW_TOKENS = 1000  # below this a window cannot hold a normal turn


@command("tokens", usage="/tokens [N|500k|1m] [--temp] [--yes]",
         help="show the window's tokens, or set max_window_tokens live (--temp: this session only; "
              "under 1000 asks first, --yes: without asking)")
def tokens_cmd(ctx: CommandContext, args: str) -> CommandResult:
    from mnemara.commands.core import split_flags

    parts, flags = split_flags(args, "--temp", "--yes")
    if len(parts) > 1:
        raise ValueError("too many arguments")
    if not parts:
        if flags:
            raise ValueError("give the token count to set")
        return CommandResult(f"window ~{compress.window_tokens(ctx.store)} tokens; max_window_tokens = {ctx.config.max_window_tokens}")
    n = parse_token_count(parts[0])
    temp = "--temp" in flags
    if n < SMALL_WINDOW_TOKENS and "--yes" not in flags:  # a typo for 10k: nothing changes unless confirmed
        again = f"/tokens {n}{' --temp' if temp else ''} --yes"
        question = (f"{n} tokens is implausibly small (one ordinary turn is more): the window would hold almost "
                    f"nothing but pinned rows. Did you mean {n}k (/tokens {n}k)?")
        return CommandResult(f"{question}\nNothing changed; max_window_tokens stays {ctx.config.max_window_tokens}. "
                             f"To set {n} anyway: {again}", action="confirm",
                             payload=Confirm(again, f"{question}\nSet max_window_tokens to {n} anyway?",
                                             title="Set a tiny window?", yes_label=f"Set {n} (y)"))
    if temp:
        ctx.override_config(max_window_tokens=n)
        from mnemara.commands.core import saved_value

        text = (f"max_window_tokens set to {n} for this session only "
                f"(config.json not written: it keeps {saved_value(ctx, 'max_window_tokens')})")
    else:
        ctx.update_config(max_window_tokens=n)
        text = f"max_window_tokens set to {n} (saved to config.json)"
    if n < SMALL_WINDOW_TOKENS:
        text += f"\nwarning: {n} tokens is implausibly small (confirmed): /tokens {n}k if you meant {n}k"
    return CommandResult(text)


@command("export", usage="/export [N] <path>", help="write the session (turns, config, role doc) to a markdown file")
def export_cmd(ctx: CommandContext, args: str) -> CommandResult:
    parts = split_args(args)
    if len(parts) == 1:
        last, path = None, parts[0]
    elif len(parts) == 2:
        last, path = _positive_int(parts[0], "N"), parts[1]
    else:
        raise ValueError("give an optional number of turns and a file path")
    rows = exchange.select_for_export(ctx.store, last)
    target = Path(path).expanduser()
    exchange.write_export(target, exchange.export_markdown(rows, ctx.config, ctx.instance.name))
    log_event(ctx.instance.debug_log_path, "export", file=str(target), rows=len(rows))
    return CommandResult(f"exported {len(rows)} rows to {target}")


IMPORT_FLAGS = {"--accept-permissions": "accept", "--keep-permissions": "keep"}


@command("import", usage="/import [--accept-permissions|--keep-permissions] <path>",
         help="restore a session from a /export file (asks before changing permissions or data destinations; "
              "keeps this instance's role doc and says how to take the export's)")
def import_cmd(ctx: CommandContext, args: str) -> CommandResult:
    parts = split_args(args)
    flags = [p for p in parts if p.startswith("--")]
    paths = [p for p in parts if not p.startswith("--")]
    unknown = [f for f in flags if f not in IMPORT_FLAGS]
    if unknown or len(flags) > 1:
        raise ValueError(f"unknown or conflicting option {' '.join(unknown or flags)}: use --accept-permissions "
                         "or --keep-permissions")
    if len(paths) != 1:
        raise ValueError("give exactly one file path")
    mode = IMPORT_FLAGS[flags[0]] if flags else "ask"
    try:
        result = exchange.import_export(Path(paths[0]), ctx.store, ctx.instance.config_path, ctx.instance.root,
                                        permissions=mode)
    except exchange.PermissionChangeNeedsConsent as asked:
        quoted = shlex.quote(paths[0])
        return CommandResult(
            f"{asked.message}\nNothing was imported. To import with these changes: /import --accept-permissions "
            f"{quoted}\nTo import the rows and keep this instance's settings: "
            f"/import --keep-permissions {quoted}", ok=False, payload=PermissionChanges(tuple(asked.changes)))
    ctx.apply_config(result.config)
    log_event(ctx.instance.debug_log_path, "import", file=paths[0], rows=result.rows, permissions=mode)
    return CommandResult(result.summary())


@command("skeleton", usage="/skeleton <path>", help="show a Python file's signatures and docstrings")
def skeleton_cmd(ctx: CommandContext, args: str) -> CommandResult:
    parts = split_args(args)
    if len(parts) != 1:
        raise ValueError("give exactly one file path")
    sk = read_skeleton(parts[0])
    note = f"# {sk.path}: ~{sk.skeleton_tokens} tokens instead of ~{sk.source_tokens} ({sk.reduction:.0%} smaller)"
    return CommandResult(f"{note}\n{sk.text}", payload=SkeletonShown(sk.text))


@command("name", usage="/name [label]", help="set the assistant's display name; clear it with no label")
def name_cmd(ctx: CommandContext, args: str) -> CommandResult:
    label = args.strip()
    if len(label) > 64 or any(not ch.isprintable() for ch in label):
        raise ValueError("the name must be one printable line of at most 64 characters")
    ctx.update_config(display_name=label)
    return CommandResult(f"display name set to {label!r}" if label else "display name cleared")


@command("pin", usage="/pin <row_id> [label]", help="pin a row at the next slot position")
def pin_cmd(ctx: CommandContext, args: str) -> CommandResult:
    parts = split_args(args)
    if not 1 <= len(parts) <= 2:
        raise ValueError("give a row id and an optional one-word label (a slug like my-slot)")
    row = _positive_int(parts[0], "row_id")
    label = ctx.store.pin(row, parts[1] if len(parts) == 2 else None)
    return CommandResult(f"row {row} pinned as slot {label!r}")


@command("unpin", usage="/unpin <row_id|label>", help="unpin a row (it rejoins the window as a normal row)")
def unpin_cmd(ctx: CommandContext, args: str) -> CommandResult:
    parts = split_args(args)
    if len(parts) != 1:
        raise ValueError("give a row id or a slot label")
    target = parts[0]
    match = [t for t in ctx.store.pinned() if t.pin_label == target or str(t.id) == target]
    if not match:
        raise UsageError(f"no pinned row {target!r}")
    ctx.store.unpin(match[0].id)
    return CommandResult(f"row {match[0].id} unpinned")
