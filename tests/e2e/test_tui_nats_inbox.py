"""The panel with peer_transport nats: no peer_db_path needed, a message arrives as an inbox turn through the real
CLI, and a server that goes away shows in the status line in one line."""
from __future__ import annotations

import json

import pytest

from mnemara.core.config import update_config
from mnemara.peer.outbox import send_async
from mnemara.testing.nats_server import NatsServer
from mnemara.testing.scripted_api import reply
from mnemara.ui.tui.app import MnemaraApp
from tests.peer.nats_support import nats_config
from tests.tui_support import instance, make_app, wait_for  # noqa: F401  (fixtures)

pytestmark = pytest.mark.e2e
SIZE = (110, 34)


async def test_a_nats_panel_delivers_a_message_and_says_when_the_server_is_down(
        make_app, instance, scripted_api, tmp_path) -> None:
    server = NatsServer(tmp_path / "nats").start()
    try:
        config = nats_config(server, "TUI", peer_role="panel", peer_poll_roles=["lead"])
        update_config(instance.config_path, **{k: v for k, v in config.model_dump(mode="json").items()
                                               if k.startswith("peer_")})
        scripted_api.push(reply("Handled it."))
        app: MnemaraApp = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            inbox = app.session.peer_inbox
            assert inbox is not None and inbox.feed is not None
            assert str(app._chat_screen.query_one("#inbox").label) == "⚡ Inbox: ON"
            await wait_for(pilot, lambda: inbox.feed.connected, 20, "the NATS consumer")
            lead = config.model_copy(update={"peer_role": "lead"})
            await send_async(lead, "lead", None, "panel", json.dumps({"q": "lease timeout?"}))
            await wait_for(pilot, lambda: inbox.stats.delivered_turns == 1, 60, "the inbox turn")
            assert "lease timeout?" in app.chat_log.plain_text() and "Handled it." in app.chat_log.plain_text()
            server.kill()
            await wait_for(pilot, lambda: "⚠ NATS down" in app._chat_screen.query_one("#status").status.line(),
                           20, "the status line")
            await pilot.press("ctrl+c")
    finally:
        server.stop()
