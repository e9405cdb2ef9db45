"""``mnemara serve``: run an instance as a headless panel that delivers its peer inbox."""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from mnemara.cli import main
from mnemara.cli.common import instance_option, open_instance

if TYPE_CHECKING:
    from mnemara.ui.serve.panel import HeadlessPanel


@main.command()
@instance_option
@click.option("--once", is_flag=True,
              help="Deliver what is waiting now (after waiting up to 10 s for the transport), then exit: "
                   "for cron. Exits 1 when a turn failed or waiting messages could not be delivered.")
@click.option("--log-format", type=click.Choice(["json", "text"]), default="json", show_default=True,
              help="One JSON object per line (for log collectors), or key=value text for people.")
def serve(instance_name: str, once: bool, log_format: str) -> None:
    """Run an instance as a headless panel: no terminal, its peer inbox delivered as messages arrive.

    Needs "peer_poll_enabled": true in the instance's config.json (SQLite or NATS,
    see docs/peer-inbox.md); it delivers even when a panel left /inbox off. Each
    message becomes a turn of the same session a panel runs (role doc, window,
    memory, tools, spend caps). One line per event goes to stdout: serving,
    turn_started, turn_ended (ok, cost, tokens), tool_use, halt, error, notice,
    permission_refused, inbox_problem, stopping, stopped.

    Nobody can answer a permission question: a tool on "ask" is refused, with a
    permission_refused line. Allow what inbox turns need beforehand in config.json
    or permissions.json (docs/permissions.md).

    SIGTERM or Ctrl+C: the running turn finishes and its messages are acknowledged,
    then it exits 0; a second signal stops that turn (its messages are not
    acknowledged and come again). Refuses to start while another panel (`mnemara
    run` or `mnemara serve`) holds the instance. `mnemara peer status` shows its
    health: running or not, last delivery, the turn it is running.
    """
    import asyncio

    from mnemara.core.config import Config
    from mnemara.core.errors import UsageError
    from mnemara.store.instance import run_lock

    inst = open_instance(instance_name)
    config = Config.load(inst.config_path)
    if not config.peer_poll_enabled:
        raise UsageError(f"instance {inst.name!r} has no inbox to serve: set \"peer_poll_enabled\": true (and "
                         "peer_db_path, or peer_transport \"nats\") in its config.json")
    with run_lock(inst):
        from mnemara.memory.recall_worker import attach
        from mnemara.session.agent import AgentSession
        from mnemara.ui.serve.event_log import EventLog
        from mnemara.ui.serve.panel import HeadlessPanel

        session = AgentSession(inst)
        recall_worker = attach(session)  # auto-recall's LanceDB and embedder in a child process, as in `run`
        try:
            panel = HeadlessPanel(session, EventLog(sys.stdout, "text" if log_format == "text" else "json",
                                                    inst.name), once=once)
            code = asyncio.run(_serve(panel))
        finally:
            session.close()
            recall_worker.close()
    sys.exit(code)


async def _serve(panel: "HeadlessPanel") -> int:
    try:
        return await panel.run()
    finally:
        await panel.session.aclose()
