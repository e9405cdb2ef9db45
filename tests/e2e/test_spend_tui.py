"""A spend cap reached mid-turn in the panel (Textual pilot, real session, SDK and CLI)."""
from __future__ import annotations

import pytest

from mnemara.core.config import update_config
from mnemara.testing.scripted_api import reply, tool_use
from mnemara.ui.tui.screens.confirm import ConfirmScreen

from tests.tui_support import instance, make_app, type_text, wait_for  # noqa: F401  (fixtures)

pytestmark = pytest.mark.e2e
BIG = {"input_tokens": 100_000, "output_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
       "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0}}


async def test_the_panel_asks_at_the_cap_and_n_ends_the_turn_with_the_cap_line(scripted_api, instance, make_app):
    update_config(instance.config_path, allowed_tools=[{"tool": "Bash", "mode": "allow"}], budget_usd_per_turn=0.5)
    scripted_api.push(*[reply(tool_use("Bash", {"command": f"echo {i}"}), usage=BIG) for i in range(6)])
    app = make_app()
    async with app.run_test(size=(120, 34)) as pilot:
        status = app._chat_screen.query_one("#status")
        app.chat_input.focus()
        await type_text(pilot, "keep going")
        await pilot.press("ctrl+s")
        screen = await wait_for(pilot, lambda: app.screen if isinstance(app.screen, ConfirmScreen) else None,
                                what="the question past the cap")
        assert "Continue this turn past the cap? (y once / n)" in screen.question
        assert "$0.6003 spent this turn reached budget_usd_per_turn $0.5000" in screen.question
        assert len(scripted_api.message_requests()) == 2  # the 3rd request waits at the recorder
        await pilot.press("n")
        await wait_for(pilot, lambda: "SPEND CAP" in app.chat_log.plain_text(), what="the cap line")
        await wait_for(pilot, lambda: app._turn is not None and not app.turn_running, what="the turn to end")
        await pilot.pause()
        assert len(scripted_api.message_requests()) == 2
        await wait_for(pilot, lambda: "cost: turn $0.6003" in status.status.line(), 5, "the cost in the status line")
