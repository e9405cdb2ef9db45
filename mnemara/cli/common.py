"""Options and helpers shared by the CLI topic modules."""
from __future__ import annotations

from contextvars import ContextVar

import click

from mnemara.store.instance import Instance, validate_name

#: The instance the running command opened, so a failure can be logged to its debug.log.
current_instance: ContextVar[Instance | None] = ContextVar("current_instance", default=None)


def _check_name(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    return None if value is None else validate_name(value)


instance_option = click.option(
    "--instance", "-i", "instance_name", required=True, callback=_check_name, metavar="NAME",
    help="Instance name (a folder under $MNEMARA_HOME).",
)


def open_instance(name: str) -> Instance:
    inst = Instance.open(name)
    current_instance.set(inst)
    return inst


def say(message: object = "", err: bool = False) -> None:
    """``click.echo`` for text that may hold what the agent, a file or an import wrote: every line the
    memory commands print goes through :func:`~mnemara.core.display.terminal_safe` here (idempotent:
    text escaped before is unchanged), so a new line of output cannot print an escape raw."""
    from mnemara.core.display import terminal_safe

    click.echo(terminal_safe(str(message)), err=err)


def say_json(value: object, **dumps: object) -> None:
    """Print ``value`` as JSON for the terminal (:func:`~mnemara.core.display.json_safe`: C1 and bidi
    controls inside strings as ``\\u009b``-style escapes); every ``--json`` output goes through here."""
    from mnemara.core.display import json_safe

    click.echo(json_safe(value, **dumps))
