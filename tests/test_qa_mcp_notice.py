"""A configured MCP server that does not start is named to the user, not silently missing."""
from __future__ import annotations

import pytest

from mnemara import events as ev
from mnemara.config import McpServer, update_config
from mnemara.testing import reply

pytestmark = pytest.mark.e2e


def test_a_failed_mcp_server_gives_a_notice_and_the_turn_still_runs(scripted_api, session_factory, tmp_path):
    session = session_factory("mcp-ghost")
    update_config(session.instance.config_path, mcp_servers=[McpServer(name="ghost", command=str(tmp_path / "nope"))])
    scripted_api.push(reply("still answering"))
    result = session.turn("hello")
    notices = [e.message for e in result.events if isinstance(e, ev.Notice)]
    assert any("'ghost' failed" in n and "config.json" in n for n in notices), notices
    assert not any("'mnemara'" in n for n in notices)
    assert result.text == "still answering"
