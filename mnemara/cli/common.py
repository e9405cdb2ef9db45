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
