"""``mnemara memory list|supersede|deprecate|restore|status``: notes by id, their status, nothing deleted."""
from __future__ import annotations

import click

from mnemara.cli import main
from mnemara.cli.common import instance_option, open_instance, say, say_json
from mnemara.core.display import terminal_safe


@main.group()
def memory() -> None:
    """List memory notes with their ids; mark them superseded or deprecated (nothing is deleted);
    search them as rag_query does, or see what auto-recall would inject for a message."""


@memory.command("list")
@instance_option
@click.option("--day", metavar="YYYY-MM-DD", help="Only the notes of this day file.")
@click.option("--category", "-c", metavar="C", help="Only this category (ending in '/': everything under it).")
@click.option("--status", "status", type=click.Choice(["active", "superseded", "deprecated", "all"]),
              default="all", show_default=True, help="Only notes with this status.")
@click.option("--grep", metavar="TEXT", help="Only notes whose text contains TEXT (case-insensitive).")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of objects.")
def list_cmd(instance_name: str, day: str | None, category: str | None, status: str, grep: str | None,
             as_json: bool) -> None:
    """One line per note: id, time, category, status, first line of text."""

    from mnemara.memory.listing import list_notes, one_line

    inst = open_instance(instance_name)
    items = list_notes(inst.memory_dir, day=day, category=category, status=status, grep=grep)
    if as_json:
        say_json(items, indent=1)
        return
    for item in items:  # what the agent wrote: control characters shown, not obeyed by the terminal
        say(terminal_safe(one_line(item)))
    if not items:
        say("no notes match", err=True)


@memory.command()
@instance_option
@click.argument("old")
@click.argument("new")
@click.option("--reason", default="", help="Why, in one line.")
def supersede(instance_name: str, old: str, new: str, reason: str) -> None:
    """Mark note OLD as superseded by note NEW (ids as `mnemara memory list` shows them)."""
    from mnemara.core.debuglog import log_event
    from mnemara.memory.status import find_atom, set_status

    inst = open_instance(instance_name)
    a, b = find_atom(inst.memory_dir, old), find_atom(inst.memory_dir, new)
    set_status(inst.memory_dir, a, "superseded", new=b, reason=reason)
    log_event(inst.debug_log_path, "atom_superseded", old=a.id, new=b.id, reason=reason, via="cli")
    say(f"{a.id} is superseded by {b.id}; recall skips it from now on (nothing deleted)")


@memory.command()
@instance_option
@click.argument("atom")
@click.option("--reason", default="", help="Why, in one line.")
def deprecate(instance_name: str, atom: str, reason: str) -> None:
    """Mark note ATOM as no longer true (again without --reason: the earlier reason is kept)."""
    from mnemara.core.debuglog import log_event
    from mnemara.memory.status import find_atom, set_status

    inst = open_instance(instance_name)
    a = find_atom(inst.memory_dir, atom)
    set_status(inst.memory_dir, a, "deprecated", reason=reason)
    log_event(inst.debug_log_path, "atom_deprecated", atom=a.id, reason=reason, via="cli")
    say(f"{a.id} is deprecated; recall skips it from now on (nothing deleted)")


@memory.command()
@instance_option
@click.argument("atom")
def restore(instance_name: str, atom: str) -> None:
    """Make ATOM active again (its history of changes is kept)."""
    from mnemara.core.debuglog import log_event
    from mnemara.memory.status import Unchanged, find_atom, set_status

    inst = open_instance(instance_name)
    a = find_atom(inst.memory_dir, atom)
    try:
        set_status(inst.memory_dir, a, "active", reason="restored")
    except Unchanged as exc:
        say(exc.message)
        return
    log_event(inst.debug_log_path, "atom_restored", atom=a.id, via="cli")
    say(f"{a.id} is active again")


@memory.command("status")
@instance_option
def status_cmd(instance_name: str) -> None:
    """List the notes that are superseded or deprecated."""
    from mnemara.memory.status import StatusBook, all_atoms

    inst = open_instance(instance_name)
    book = StatusBook.load(inst.memory_dir)
    shown = 0
    for atom in all_atoms(inst.memory_dir):
        entry = book.entry(atom)
        if not entry or entry.get("status") == "active":
            continue
        shown += 1
        by = f" by {entry['superseded_by']}" if entry.get("superseded_by") else ""
        why = f" ({entry['reason']})" if entry.get("reason") else ""
        say(f"{entry['status']}{by}: {atom.id}{why}\n    {atom.text[:120]!r}")
    if not shown:
        say("every note is active")
