"""``@path`` in the real panel and the REPL (issue 39): the file's text reaches the model in a block labelled
as the user's attachment, the log says what was attached, and a refused mention sends nothing and gives the
message back."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from mnemara.store.instance import Instance
from mnemara.testing.scripted_api import reply
from tests.conftest import run_cli
from tests.tui_support import instance, make_app, type_text, wait_for  # noqa: F401  (fixtures)

pytestmark = pytest.mark.e2e


async def test_at_file_in_the_panel_attaches_it_and_a_refused_one_comes_back(scripted_api, make_app, instance):
    home = Path(os.environ["HOME"])
    (home / "lease.py").write_text("LEASE_SECONDS = 30\n", encoding="utf-8")
    scripted_api.push(reply("It is 30 seconds."))
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        app.chat_input.focus()
        await type_text(pilot, "what is in @~/lea")
        await pilot.press("tab")  # completes the path after @
        assert app.chat_input.text == "what is in @~/lease.py "
        await type_text(pilot, "?")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: "It is 30 seconds." in app.chat_log.plain_text(), 60, "the answer")
        log = app.chat_log.plain_text()
        assert f"you: what is in @~/lease.py ?\nattached by you: {home}/lease.py (1 lines, 19 bytes)" in log
        assert "LEASE_SECONDS" not in log  # the log names the attachment; the window and the request hold it
        sent = scripted_api.last.user_text()
        assert (f'what is in @~/lease.py ?\n\n<user_attachment path="{home}/lease.py" lines="1" bytes="19">\n'
                "LEASE_SECONDS = 30\n</user_attachment>") in sent
        assert "<user_attachment" in app.session.store.history()[0].text
        await wait_for(pilot, lambda: not app.turn_running, 30, "the turn to end")

        requests = len(scripted_api.message_requests())
        await type_text(pilot, "and @~/nope.py")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.chat_input.text == "and @~/nope.py", "the refused message is back in the input"
        assert "error: @~/nope.py: no such file; message not sent" in app.chat_log.plain_text()
        assert len(scripted_api.message_requests()) == requests and len(app.session.store.history()) == 2


def test_at_file_in_the_piped_repl_attaches_it_and_a_refusal_fails_the_run(scripted_api, mnemara_home):
    home = Path(os.environ["HOME"])
    (home / "todo.md").write_text("- ship it\n", encoding="utf-8")
    scripted_api.push(reply("Ship it, then."))
    Instance.create("rp")
    proc = run_cli("run", "--instance", "rp", "--no-tui", input="read @~/todo.md\nand @/etc/hostname\n", timeout=120)
    assert "Ship it, then." in proc.stdout
    assert f"attached by you: {home}/todo.md (1 lines, 10 bytes)" in proc.stderr
    assert "error: @/etc/hostname: Read refused: /etc/hostname resolves to /etc/hostname, outside $HOME" in proc.stderr
    assert proc.returncode == 1  # a line that was not sent fails the script, as one that got no answer
    (request,) = scripted_api.message_requests()
    assert '<user_attachment path="' + f'{home}/todo.md" lines="1" bytes="10">\n- ship it\n' in request.user_text()
    shown = run_cli("context", "--instance", "rp", "--call", "last", "--full")  # the request view shows it, labelled
    assert shown.returncode == 0, shown.stderr
    assert f'<user_attachment path="{home}/todo.md"' in shown.stdout and "- ship it" in shown.stdout
