"""``/recall``: what auto-recall injected into the last turn and why; ``/recall on|off`` switches it."""
from __future__ import annotations

from mnemara.commands import CommandContext, CommandResult, command
from mnemara.commands.payloads import ConsideredNote, RecallShown

USAGE = "/recall [on|off]"


@command("recall", usage=USAGE, help="show what auto-recall added to the last turn (and why); on/off switches it")
def recall_command(ctx: CommandContext, args: str) -> CommandResult:
    word = args.strip().lower()
    if word not in ("", "on", "off"):
        raise ValueError(f"unknown argument {args.strip()!r}: expected on or off")
    if word:
        from mnemara.core.debuglog import log_event

        cfg = ctx.update_config(auto_recall=(word == "on"))
        log_event(ctx.instance.debug_log_path, "auto_recall_switched", on=cfg.auto_recall)
        return CommandResult(f"auto-recall is {'ON' if cfg.auto_recall else 'OFF'} from the next turn "
                             f"(bar {cfg.auto_recall_min_score}, at most {cfg.auto_recall_k} notes)")
    record = ctx.auto_recall.last
    if record is None:
        state = "ON" if ctx.config.auto_recall else "OFF (turn it on with /recall on)"
        return CommandResult(f"auto-recall is {state}; nothing was recalled for the last turn")
    shown = RecallShown(
        injected=tuple(h["id"] for h in record.injected),
        considered=tuple(ConsideredNote(id=h["id"], score=h["score"], channels=h["channels"], evidence=h["evidence"],
                                        injected=h["injected"]) for h in record.considered))
    return CommandResult("\n".join(record.describe()), payload=shown)
