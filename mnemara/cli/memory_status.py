"""``mnemara memory supersede|deprecate|restore|status``: atom status without deleting anything."""
from __future__ import annotations

import click

from mnemara.cli import main
from mnemara.cli.common import instance_option, open_instance


@main.group()
def memory() -> None:
    """Mark memory notes superseded or deprecated (nothing is deleted)."""


@memory.command()
@instance_option
@click.argument("old")
@click.argument("new")
@click.option("--reason", default="", help="Why, in one line.")
def supersede(instance_name: str, old: str, new: str, reason: str) -> None:
    """Mark atom OLD as superseded by atom NEW (ids as shown by rag_query or lint)."""
    from mnemara.debuglog import log_event
    from mnemara.memory.status import find_atom, set_status

    inst = open_instance(instance_name)
    a, b = find_atom(inst.memory_dir, old), find_atom(inst.memory_dir, new)
    set_status(inst.memory_dir, a, "superseded", new=b, reason=reason)
    log_event(inst.debug_log_path, "atom_superseded", old=a.id, new=b.id, reason=reason, via="cli")
    click.echo(f"{a.id} is superseded by {b.id}; recall skips it from now on (nothing deleted)")


@memory.command()
@instance_option
@click.argument("atom")
@click.option("--reason", default="", help="Why, in one line.")
def deprecate(instance_name: str, atom: str, reason: str) -> None:
    """Mark ATOM as no longer true."""
    from mnemara.debuglog import log_event
    from mnemara.memory.status import find_atom, set_status

    inst = open_instance(instance_name)
    a = find_atom(inst.memory_dir, atom)
    set_status(inst.memory_dir, a, "deprecated", reason=reason)
    log_event(inst.debug_log_path, "atom_deprecated", atom=a.id, reason=reason, via="cli")
    click.echo(f"{a.id} is deprecated; recall skips it from now on (nothing deleted)")


@memory.command()
@instance_option
@click.argument("atom")
def restore(instance_name: str, atom: str) -> None:
    """Make ATOM active again (its history of changes is kept)."""
    from mnemara.debuglog import log_event
    from mnemara.memory.status import find_atom, set_status

    inst = open_instance(instance_name)
    a = find_atom(inst.memory_dir, atom)
    set_status(inst.memory_dir, a, "active", reason="restored")
    log_event(inst.debug_log_path, "atom_restored", atom=a.id, via="cli")
    click.echo(f"{a.id} is active again")


@memory.command("status")
@instance_option
def status_cmd(instance_name: str) -> None:
    """List the atoms that are superseded or deprecated."""
    from mnemara.memory.status import StatusBook, all_atoms, fingerprint

    inst = open_instance(instance_name)
    book = StatusBook.load(inst.memory_dir)
    shown = 0
    for atom in all_atoms(inst.memory_dir):
        entry = book.entries.get(fingerprint(atom))
        if not entry or entry.get("status") == "active":
            continue
        shown += 1
        by = f" by {entry['superseded_by']}" if entry.get("superseded_by") else ""
        why = f" ({entry['reason']})" if entry.get("reason") else ""
        click.echo(f"{entry['status']}{by}: {atom.id}{why}\n    {atom.text[:120]!r}")
    if not shown:
        click.echo("every atom is active")
