"""The status line stops saying "working…" as soon as the answer is complete.

It used to keep the busy notice until something else redrew it: the panel
redrew on the turn worker's end while the session's turn generator, left
unfinished by a ``break``, still had ``busy`` set.
"""
from __future__ import annotations

import pytest

from mnemara.testing import reply

from tests.tui_support import instance, make_app, type_text, wait_for  # noqa: F401  (fixtures)

pytestmark = pytest.mark.e2e


async def test_status_line_is_idle_once_the_answer_is_shown(scripted_api, make_app):
    app = make_app()
    async with app.run_test(size=(110, 34)) as pilot:
        status = app._chat_screen.query_one("#status")
        for n in range(2):
            scripted_api.push(reply(f"ANSWER-{n} is complete."))
            app.chat_input.focus()
            await type_text(pilot, f"question {n}")
            await pilot.press("ctrl+s")
            answer = f"ANSWER-{n} is complete."
            # A turn through a kept CLI can end between two polls, so the busy notice may come and go unseen.
            await wait_for(pilot, lambda: "working…" in status.status.line() or answer in app.chat_log.plain_text(),
                           20, "the turn to start")
            await wait_for(pilot, lambda: answer in app.chat_log.plain_text(), 30, "the answer")
            await wait_for(pilot, lambda: "working…" not in status.status.line(), 5, "the status line to go idle")
            assert not app.session.busy and f"turns: {2 * (n + 1)}/20" in status.status.line()
