"""``mnemara peer send`` and ``mnemara peer status``: the peer inbox from a shell, through the configured transport."""
from __future__ import annotations

import sys

import click

from mnemara.cli import main
from mnemara.cli.common import instance_option, open_instance


@main.group()
def peer() -> None:
    """Peer messages between panels (peer_transport: sqlite or nats)."""


@peer.command("send")
@instance_option
@click.option("--to", "to", metavar="ROLE", default=None, help="The recipient panel's role; leave out to broadcast.")
@click.option("--task", metavar="T", default=None, help="A topic label (task_id).")
@click.argument("payload_json")
def send_cmd(instance_name: str, to: str | None, task: str | None, payload_json: str) -> None:
    """Send PAYLOAD_JSON (one JSON value) as this instance's role.

    SQLite: a pending row in the returns table of peer_db_path. NATS: a message on
    peer_nats_stream (subject <prefix>.<role>, or the broadcast subject).
    """
    from mnemara.core.config import Config
    from mnemara.peer.outbox import send

    inst = open_instance(instance_name)
    config = Config.load(inst.config_path)
    click.echo(send(config, inst.name, inst.root, to, payload_json, task))


@peer.command("status")
@instance_option
def status_cmd(instance_name: str) -> None:
    """Transport, connection, pending count and last delivered id of this instance's inbox.

    Exits 1 when the peer db or the NATS server cannot be reached.
    """
    from mnemara.core.config import Config
    from mnemara.peer.outbox import status

    inst = open_instance(instance_name)
    lines, ok = status(Config.load(inst.config_path), inst.name, inst.root)
    for line in lines:
        click.echo(line)
    if not ok:
        sys.exit(1)


@peer.command("permissions")
@instance_option
@click.option("--create-stream", is_flag=True, help="Also let this user create the stream (give it to one panel).")
def permissions_cmd(instance_name: str, create_stream: bool) -> None:
    """Print the NATS server permissions this instance's panel needs, as a user entry.

    Paste it into the server's authorization users (and set a password): the panel
    can then publish only as its role, read only its own consumer and its own
    replies, so the sender other panels see is the user the server authenticated.
    """
    import json

    from mnemara.core.config import Config
    from mnemara.peer.addressing import resolve_role
    from mnemara.peer.outbox import nats_settings

    from mnemara.core.errors import UsageError

    inst = open_instance(instance_name)
    config = Config.load(inst.config_path)
    if config.peer_transport != "nats":
        raise UsageError(f"instance {inst.name!r} uses peer_transport {config.peer_transport!r}: "
                         "NATS permissions are for \"peer_transport\": \"nats\"")
    settings = nats_settings(config, inst.root)
    role = resolve_role(config, inst.name)
    entry = {"user": role, "password": "CHANGE-ME", "permissions": settings.permissions(role, create_stream=create_stream)}
    click.echo(json.dumps(entry, indent=2))
