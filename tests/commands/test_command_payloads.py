"""A command's result carries one typed payload, and an action that needs one cannot go without it."""
from __future__ import annotations

import pytest

from mnemara.commands import ACTION_PAYLOADS, CommandResult, dispatch
from mnemara.commands.payloads import Confirm, CopyText, HelpColumns, InboxState, RefusedInput, SendTurn


@pytest.mark.parametrize("action", sorted(ACTION_PAYLOADS))
def test_an_action_without_its_payload_is_refused(action):
    with pytest.raises(TypeError, match=ACTION_PAYLOADS[action].__name__):
        CommandResult("x", action=action)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        CommandResult("x", action=action, payload=RefusedInput())  # type: ignore[arg-type]


def test_the_payload_of_each_action_is_accepted():
    examples = {"send": SendTurn("hi"), "confirm": Confirm("/compress 1 --yes", "compress?"),
                "copy": CopyText("code"), "inbox_state": InboxState(True, "on")}
    for action, payload in examples.items():
        assert CommandResult("x", action=action, payload=payload).payload is payload  # type: ignore[arg-type]
    assert CommandResult("stopping", action="stop").payload is None


def test_help_and_refusals_carry_their_payloads(session_factory):
    session = session_factory("payloads")
    listing = dispatch(session, "/help")
    assert isinstance(listing.payload, HelpColumns)
    assert [usage for usage, _ in listing.payload.rows if usage.startswith("/help")] == ["/help [command]"]
    for line in ("/no-such-command", "/recall maybe"):
        refused = dispatch(session, line)
        assert not refused.ok and isinstance(refused.payload, RefusedInput), line
