"""Nothing typed is lost: text the store could not hold as it came, and the spool's own failures.

No CLI is involved: without an API key a turn stores the user's message, says why it cannot run
and ends, which is exactly the step these tests attack (what reaches turns.sqlite or the spool).
"""
from __future__ import annotations

import io

from mnemara import events as ev
from mnemara.session import AgentSession
from mnemara.ui.repl import run_repl


def _texts(session: AgentSession) -> list[str]:
    return [t.text for t in session.store.history()]


async def test_undecodable_bytes_and_split_surrogates_are_stored_not_lost(tmp_path):
    """A lone surrogate (an undecodable byte passed through as a surrogate escape) used to make
    SQLite raise UnicodeEncodeError out of the turn: the message was neither stored nor spooled."""
    session = AgentSession.at(tmp_path / "x", warm_spare=False)
    try:
        events = [e async for e in session.aturn("bad \udcff byte and a split pair \ud83d\ude00")]
        notices = [e.message for e in events if isinstance(e, ev.Notice)]
        assert any("1 character(s) of your message were not valid UTF-8" in n for n in notices), notices
        assert isinstance(events[-1], ev.TurnDone)
        assert _texts(session) == ["bad \ufffd byte and a split pair \U0001F600"]
        assert not (tmp_path / "x" / "spool.jsonl").exists()
    finally:
        await session.aclose()


def test_piped_repl_goes_past_a_line_that_is_not_utf8(tmp_path):
    """A strict UTF-8 stdin with one bad byte used to end the REPL with a traceback, losing that
    line and every line after it."""
    session = AgentSession.at(tmp_path / "x", warm_spare=False)
    stdin = io.TextIOWrapper(io.BytesIO(b"first\nbad \xff byte\nthird\n"), encoding="utf-8", errors="strict")
    out, err = io.StringIO(), io.StringIO()
    try:
        assert run_repl(session, stdin=stdin, stdout=out, stderr=err) == 0
        assert _texts(session) == ["first", "bad \ufffd byte", "third"]
        assert "not valid UTF-8" in err.getvalue()
    finally:
        session.close()
