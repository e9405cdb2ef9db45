"""Issue 27: a message refused for want of an API key stays stored, is marked as never answered, and
is not sent again with later turns; the piped REPL exits non-zero when its only turn failed."""
from __future__ import annotations

from pathlib import Path

import pytest

from mnemara.context.transcript_text import format_turn
from mnemara.store.instance import Instance

pytestmark = pytest.mark.e2e


def test_an_unanswered_message_is_kept_marked_and_not_sent_again(scripted_api, session_factory, monkeypatch) -> None:
    key = scripted_api.env()["ANTHROPIC_API_KEY"]
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    session = session_factory("nokey")
    failed = session.turn("the first question")
    assert [e.kind for e in failed.errors] == ["no_api_key"]
    (row,) = session.store.history()
    assert row.text == "the first question" and row.meta["no_reply"] is True
    assert "no reply" in format_turn(row)
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    scripted_api.push("answered")
    done = session.turn("the second question")
    assert done.done.error is None and done.text == "answered"
    sent = scripted_api.message_requests()[-1].user_text()
    assert "the second question" in sent and "the first question" not in sent
    assert [r.text for r in session.store.history()] == ["the first question", "the second question", "answered"]
    again = session.turn("the first question")  # sent again by the user: asked again
    assert again.done.error is None or again.errors  # whatever the scripted model says, it was sent
    assert "the first question" in scripted_api.message_requests()[-1].user_text()


def test_the_piped_repl_exits_non_zero_when_its_only_turn_failed(cli, mnemara_home: Path, monkeypatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(mnemara_home / "no-claude"))
    Instance.create("exitcode")
    failed = cli("run", "-i", "exitcode", "--no-tui", input="hello\n")
    assert failed.returncode == 1, failed.stderr
    assert "no API key" in failed.stderr and len(failed.stderr.strip().splitlines()) == 1
    fine = cli("run", "-i", "exitcode", "--no-tui", input="/help\n")  # no turn: nothing failed
    assert fine.returncode == 0, fine.stderr
