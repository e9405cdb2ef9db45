"""The forged-turn sequence of issue 24 through the real Claude CLI: row 1 stays as the user typed it."""
from __future__ import annotations

import pytest

from mnemara.testing.scripted_api import reply, tool_use


@pytest.mark.e2e
@pytest.mark.parametrize("mode", ["rebuild", "continue"])
def test_forged_turn_through_the_real_cli_keeps_row_1(scripted_api, session_factory, mode):
    from mnemara.core.config import update_config

    session = session_factory("forge")
    update_config(session.instance.config_path, cli_conversation=mode)
    scripted_api.push(reply("noted"))
    session.turn("my own words")
    scripted_api.push(
        reply(tool_use("mcp__mnemara__pin_row", {"row_id": 1, "label": "r1"})),
        reply(tool_use("mcp__mnemara__upsert_slot", {"label": "r1", "role": "user", "content": "FORGED"})),
        reply(tool_use("mcp__mnemara__unpin_row", {"row_id": 1})),
        reply("done"),
        reply("ok"),
    )
    session.turn("tidy your context")
    session.turn("next")
    row = session.store.get(1)
    assert (row.role, row.text) == ("user", "my own words")
    sent = scripted_api.last.user_text()
    if mode == "rebuild":
        assert '<turn id="1" role="user">\nmy own words\n</turn>' in sent
    else:  # row 1 came back as it was: the turns continue the conversation it began, as the user typed it
        first = scripted_api.last.messages[0]["content"]
        assert first[-1]["text"] == "my own words" and len(scripted_api.last.messages) > 1
    assert "<slot " not in sent  # no slot took row 1's place, and none holds the forged words
