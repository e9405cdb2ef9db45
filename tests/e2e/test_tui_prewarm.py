"""The panel prewarms the first turn's CLI as the REPL does, and closing it kills an unused one."""
from __future__ import annotations

import pytest

from mnemara.claude._private import cli_process
from mnemara.store.instance import Instance
from mnemara.session.agent import AgentSession
from mnemara.testing.scripted_api import reply
from mnemara.ui.tui.app import MnemaraApp
from tests.tui_support import type_text, wait_for

pytestmark = pytest.mark.e2e


async def test_the_panel_starts_the_first_cli_before_the_first_message(scripted_api, mnemara_home):
    session = AgentSession(Instance.create("warm"), warm_spare=True)
    app = MnemaraApp(session.instance, session=session)
    scripted_api.push(reply("warm answer"))
    async with app.run_test(size=(110, 34)) as pilot:
        spare = await wait_for(pilot, lambda: session.pool.spare, what="the prewarmed CLI")
        await wait_for(pilot, lambda: spare.ready.done(), what="the prewarmed CLI to connect")
        process = cli_process(spare.client)
        app.chat_input.focus()
        await type_text(pilot, "hello")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: app._turn is not None and not app.turn_running, what="the answer")
        assert session.stats == {"spare_used": 1, "fresh_started": 0, "reused": 0}
        assert "warm answer" in app.chat_log.plain_text()
        kept = session.pool.spare  # the same process, kept for the next turn
        assert kept is spare and cli_process(kept.client) is process
        await app.action_quit_panel()
    await session.aclose()
    assert process.returncode is not None  # the unused process was ended with the panel


async def test_no_prewarm_without_warm_spare(scripted_api, mnemara_home):
    session = AgentSession(Instance.create("cold"), warm_spare=False)
    app = MnemaraApp(session.instance, session=session)
    async with app.run_test(size=(110, 34)) as pilot:
        worker = await wait_for(pilot, lambda: getattr(app, "prewarm_worker", None), what="the prewarm step")
        await wait_for(pilot, lambda: worker.is_finished, what="the prewarm step to finish")
        assert session.pool.spare is None and session.stats["fresh_started"] == 0
    await session.aclose()


async def test_the_panel_prewarms_with_the_cli_started_before_its_imports(scripted_api, mnemara_home, monkeypatch):
    """``mnemara run``'s early CLI (issue 30) is the panel's prewarmed process, and it answers the first message."""
    from mnemara.claude.early import start_early

    monkeypatch.setenv("MNEMARA_WARM_SPARE", "1")
    instance = Instance.create("early-panel")
    early = start_early(instance)
    assert early is not None
    session = AgentSession(instance, warm_spare=True)
    session.launcher.early = early
    app = MnemaraApp(instance, session=session)
    scripted_api.push(reply("early answer"))
    async with app.run_test(size=(110, 34)) as pilot:
        spare = await wait_for(pilot, lambda: session.pool.spare, what="the prewarmed CLI")
        await wait_for(pilot, lambda: spare.ready.done(), what="the prewarmed CLI to connect")
        assert cli_process(spare.client).pid == early.process.pid, "the panel adopted the early CLI"
        app.chat_input.focus()
        await type_text(pilot, "hello")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: app._turn is not None and not app.turn_running, what="the answer")
        assert "early answer" in app.chat_log.plain_text()
        await app.action_quit_panel()
    await session.aclose()
    assert early.process.poll() is not None, "closing the panel ends the adopted process"
