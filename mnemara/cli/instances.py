"""Instance commands: init, list, show, clear, delete, role, note, migrate."""
from __future__ import annotations

import sys

import click

from mnemara.cli import main
from mnemara.cli.common import instance_option, open_instance
from mnemara.core.debuglog import log_event
from mnemara.core.errors import MnemaraError, UsageError
from mnemara.core.fsutil import atomic_write_text
from mnemara.store.instance import Instance, list_instances, mnemara_home
from mnemara.core.display import terminal_safe


@main.command()
@instance_option
@click.option("--role", "role_path", metavar="PATH", help="Role doc to use (a markdown file). Skips the prompt.")
def init(instance_name: str, role_path: str | None) -> None:
    """Create a new instance folder. Refuses to overwrite an existing one.

    With no --role and a terminal on stdin, asks for a role doc path (leave it
    blank to set it later with `mnemara role`).
    """
    from mnemara.core.roledoc import check_role_file

    if role_path is None and sys.stdin.isatty():
        role_path = click.prompt("Role doc path (blank to set later)", default="", show_default=False).strip()
    resolved = str(check_role_file(role_path)) if role_path else ""
    inst = Instance.create(instance_name, role_doc_path=resolved)
    log_event(inst.debug_log_path, "instance_created", role_doc_path=resolved)
    click.echo(f"created instance {instance_name} at {inst.root}")
    if not resolved:
        click.echo(f"next: mnemara role --instance {instance_name} --set PATH")


@main.command("list")
def list_cmd() -> None:
    """List instances under $MNEMARA_HOME with their model and role doc.

    An instance still in Mnemara 0.18's format is marked "needs migrate".
    """
    from mnemara.store.legacy_detect import legacy_parts

    names = list_instances()
    if not names:
        click.echo(f"no instances under {mnemara_home()} (create one with: mnemara init --instance NAME)")
        return
    for name in names:
        click.echo(_list_line(name, legacy_parts(mnemara_home() / name)))


def _list_line(name: str, legacy: list[str]) -> str:
    from mnemara.core import json_limits

    root = mnemara_home() / name
    try:
        raw = json_limits.load_file(root / "config.json")
        if not isinstance(raw, dict):
            raise ValueError("the top level is not a JSON object")
    except (OSError, ValueError) as exc:  # one broken instance is shown as broken; the others are listed
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc).splitlines()[0][:200]
        return f"{name}  [broken: config.json: {terminal_safe(why)}]"
    model = raw.get("model", "?")
    role = raw.get("role_doc_path") or "(none)"
    line = f"{name}  model={terminal_safe(str(model))}  role={terminal_safe(str(role))}"  # imported text: escaped
    if legacy:
        line += f"  [needs migrate: {', '.join(legacy)} in Mnemara 0.18 format; run: mnemara migrate --instance {name}]"
    return line


@main.command()
@instance_option
@click.option("-n", "count", type=click.IntRange(min=1), default=None, help="Show only the newest N rows.")
@click.option("--all", "show_all", is_flag=True, help="Show the whole stored history, evicted rows included.")
def show(instance_name: str, count: int | None, show_all: bool) -> None:
    """Print the rolling window read-only (pinned slots first)."""
    from mnemara.core.config import Config
    from mnemara.store.turns import TurnStore
    from mnemara.context.transcript_text import format_turn

    inst = open_instance(instance_name)
    cfg = Config.load(inst.config_path)
    with TurnStore(inst.turns_path) as store:
        if show_all:
            rows = store.history(count)
            pinned: list = []
        else:
            win = store.window_for(cfg)
            pinned, rows = win.pinned, (win.rows[-count:] if count else win.rows)
            rows = sorted([*rows, *(t for t in win.damaged if not t.pinned)], key=lambda t: t.id)
            pinned = sorted([*pinned, *(t for t in win.damaged if t.pinned)], key=lambda t: (t.slot_pos or 0, t.id))
    if not pinned and not rows:
        click.echo("(the window is empty)")
    for turn in [*pinned, *rows]:  # the model's text: its control characters shown, not obeyed by the terminal
        click.echo(terminal_safe(format_turn(turn, cfg.display_name)))


@main.command()
@instance_option
def clear(instance_name: str) -> None:
    """Empty the rolling window (pinned slots stay; rows are kept on disk as evicted)."""
    from mnemara.store.turns import TurnStore

    inst = open_instance(instance_name)
    with TurnStore(inst.turns_path) as store:
        rows, tokens = store.clear()
    log_event(inst.debug_log_path, "window_cleared", rows=rows, tokens=tokens)
    click.echo(f"cleared {rows} rows (~{tokens} tokens); pinned slots kept")


@main.command()
@instance_option
@click.option("--force", is_flag=True, help="Required: really delete the whole instance folder.")
def delete(instance_name: str, force: bool) -> None:
    """Delete an instance folder and everything in it (needs --force)."""
    inst = open_instance(instance_name)
    if not force:
        raise UsageError(f"refusing to delete {inst.root} without --force")
    inst.delete()
    click.echo(f"deleted {inst.root}")


@main.command()
@instance_option
@click.option("--set", "set_path", metavar="PATH", help="Use this local markdown file as the role doc.")
@click.option("--set-from-url", "set_url", metavar="URL", help="Download a role doc once (https, <=1 MB, UTF-8) into the instance as role.md.")
def role(instance_name: str, set_path: str | None, set_url: str | None) -> None:
    """Show or set the instance's role doc (the system prompt, re-read every turn)."""
    from mnemara.core.config import Config, update_config
    from mnemara.core.roledoc import check_role_file, fetch_role_doc

    inst = open_instance(instance_name)
    if set_path and set_url:
        raise UsageError("give either --set or --set-from-url, not both")
    if set_path:
        path = str(check_role_file(set_path))
    elif set_url:
        text = fetch_role_doc(set_url)
        atomic_write_text(inst.role_copy_path, text)
        path = str(inst.role_copy_path)
    else:
        cfg = Config.load(inst.config_path)
        click.echo(cfg.role_doc_path or "(no role doc set)")
        return
    update_config(inst.config_path, role_doc_path=path)
    log_event(inst.debug_log_path, "role_doc_set", path=path, source=set_url or set_path)
    click.echo(f"role doc for {instance_name}: {path}")


@main.command()
@instance_option
@click.option("--category", "-c", default="note", show_default=True, help="Category written in the note heading.")
@click.option("--allow-duplicate", is_flag=True, help="Append even when a note already holds the same text.")
@click.argument("text", nargs=-1, required=True)
def note(instance_name: str, category: str, allow_duplicate: bool, text: tuple[str, ...]) -> None:
    """Append a memory note to today's memory/YYYY-MM-DD.md and print its id.

    An exact copy of an active note (the same text once spacing, Unicode form, the case
    of plain words and trailing punctuation are set aside) is not appended; the note
    holding it is named. A note that only looks close (a possible copy or correction)
    is appended and proposed for `mnemara lint --fix`. A note that a newer note
    contradicted since does not hold its text: the text is written again as the newest word.
    A wiki/PAGE category also appends the text to wiki/PAGE.md.
    """
    from mnemara.memory import provenance
    from mnemara.memory.dedupe import WriteCheck, check_write, propose_conflicts
    from mnemara.memory.notes import validate_category
    from mnemara.memory.surfaces import note_files

    inst = open_instance(instance_name)
    body = " ".join(text)
    validate_category(category)
    check = WriteCheck()
    if not allow_duplicate and body.strip():
        check = check_write(inst.memory_dir, body)
        if check.duplicate is not None:
            same = check.duplicate.atom
            click.echo(f"not appended: already noted in memory/{same.file.name} at {same.timestamp} (id {same.id})")
            return
    atom, wiki = note_files(inst, body, category)
    provenance.record(inst.memory_dir, atom.id, "user", via="mnemara note")
    propose_conflicts(inst.memory_dir, check, atom)
    for line in check.lines():
        click.echo(line)
    click.echo(f"noted in {atom.file.name} at {atom.timestamp} (id {atom.id})" + (f"; also appended to {wiki}" if wiki else ""))

@main.command()
@click.option("--all", "all_instances", is_flag=True, help="Migrate every instance (a failing one is reported; the rest go on).")
@click.option("--instance", "-i", "instance_name", metavar="NAME", help="Migrate one instance.")
def migrate(all_instances: bool, instance_name: str | None) -> None:
    """Bring instances up to the current format, Mnemara 0.18 instances included.

    A 0.18 instance (config.json, turns.sqlite, permissions.json, peer watermark)
    is converted in place after its originals are copied to
    pre-migrate-<timestamp>/ inside it; the RAG index is rebuilt from the files.
    Running it again changes nothing.
    """
    from mnemara.store.instance import validate_name

    if all_instances == bool(instance_name):
        raise UsageError("give exactly one of --all or --instance NAME")
    names = list_instances() if all_instances else [validate_name(instance_name or "")]
    failed: list[str] = []
    for name in names:
        try:
            for line in _migrate_one(name):
                click.echo(line)
        except MnemaraError as exc:
            if not all_instances:
                raise
            failed.append(name)
            click.echo(f"{name}: FAILED: {exc.message}", err=True)
    if failed:
        click.echo(f"{len(failed)} of {len(names)} instances failed: {', '.join(failed)}", err=True)
        sys.exit(1)


def _migrate_one(name: str) -> list[str]:
    from mnemara.core.config import Config
    from mnemara.legacy.migrate import migrate_instance
    from mnemara.store.turns import TurnStore

    from mnemara.memory.note_ids_migrate import migrate_note_ids

    inst = open_instance(name)
    result = migrate_instance(inst)
    ids = [f"{name}: {line}" for line in migrate_note_ids(inst.root)]
    if result.changed:
        from mnemara.memory import provenance
        from mnemara.memory.notes import all_notes

        provenance.record_missing(inst.memory_dir, [a.id for a in all_notes(inst.memory_dir)], "migrate")
        log_event(inst.debug_log_path, "migrated_from_018", parts=result.converted, backup=str(result.backup))
        return result.lines() + ids
    inst.ensure_layout()
    cfg = Config.load(inst.config_path)
    cfg.save(inst.config_path)
    with TurnStore(inst.turns_path) as store:
        applied = store.migrate()
    return ids + [f"{name}: up to date" + (f" (applied store schema {applied})" if applied else "")]
