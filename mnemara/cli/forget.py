"""``mnemara forget``: remove a note from its day file, the RAG index and the graph together."""
from __future__ import annotations

import click

from mnemara.cli import main
from mnemara.cli.common import instance_option, open_instance


@main.command()
@instance_option
@click.argument("target")
@click.option("--dry-run", is_flag=True, help="Show the plan and change nothing.")
@click.option("--include-archive", is_flag=True, help="Also forget matching notes in memory/archive.")
@click.option("--keep-turns", is_flag=True, help="Do not redact the text in the conversation rows (turns.sqlite).")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
def forget(instance_name: str, target: str, dry_run: bool, include_archive: bool, keep_turns: bool, yes: bool) -> None:
    """Forget TARGET: a note id (see `mnemara memory list`) or text every forgotten note contains.

    Shows the plan first. Writes a receipt to debug.log naming what was removed
    and what could not be reached (without repeating the text). Then reads the
    instance's files back: exits 1 when a step failed or a file still holds the text.
    """
    from mnemara.core.config import Config
    from mnemara.memory.forget import execute, plan_forget

    inst = open_instance(instance_name)
    cfg = Config.load(inst.config_path)
    plan = plan_forget(inst.root, target, include_archive=include_archive, keep_turns=keep_turns)
    for line in plan.describe():
        click.echo(line)
    if dry_run:
        click.echo("dry run: nothing changed")
        return
    if not yes and not click.confirm("forget these notes everywhere listed above?", default=False):
        click.echo("nothing changed")
        return
    receipt = execute(inst, cfg, plan)
    rag, graph = receipt["rag"], receipt["graph"]
    click.echo(f"forgot {len(receipt['removed'])} note(s); RAG: {_said(rag, 'chunks_deleted', 'chunks')}; "
               f"graph: {_said(graph, 'nodes_deleted', 'nodes')}; "
               f"{receipt['turn_rows_redacted']} conversation rows redacted; receipt in debug.log")
    if receipt["still_on_disk"]:
        click.echo(f"NOT gone: the text is still in {', '.join(receipt['still_on_disk'])}", err=True)
    if not (rag.get("ok") and graph.get("ok")) or receipt["still_on_disk"]:
        raise SystemExit(1)


def _said(part: dict, count: str, noun: str) -> str:
    """One backend's part of the receipt in a few words: how many went, or why none, or the error."""
    if not part.get("ok"):
        return str(part.get("error"))
    if part.get("skipped"):
        return f"nothing to do ({part['skipped']})"
    return f"{part.get(count, 0)} {noun} removed"
