"""The CLI additions a documented setting or variable removes are gone from what the API receives, each by its switch."""
from __future__ import annotations

import json

import pytest

from mnemara.claude import additions
from mnemara.testing.scripted_api import reply

ATTRIBUTION = "Attribution for git commits"
GIT_INSTRUCTIONS = "# Committing changes with git"
BILLING = "x-anthropic-billing-header"


def _one_message(session_factory, api, name: str) -> dict:
    session = session_factory(name)
    api.push(reply("hi"))
    session.turn("hello there")
    return api.last.body


def _bash_description(body: dict) -> str:
    return next(t["description"] for t in body["tools"] if t["name"] == "Bash")


def test_a_one_message_request_carries_none_of_them(scripted_api, session_factory):
    body = _one_message(session_factory, scripted_api, "quiet")
    text = json.dumps(body)
    assert ATTRIBUTION not in text and "Co-Authored-By" not in text
    assert GIT_INSTRUCTIONS not in _bash_description(body)
    assert not any(BILLING in b.get("text", "") for b in body["system"])
    assert body["messages"][0]["content"][-1]["text"] == "hello there"


def _only(monkeypatch, settings: dict, env: dict) -> None:
    import mnemara.claude.options as options

    monkeypatch.setattr(options, "quiet_settings", lambda: json.dumps(settings, sort_keys=True) if settings else None)
    monkeypatch.setattr(options, "QUIET_ENV", env)


def test_without_the_switches_the_cli_adds_all_of_them(scripted_api, session_factory, monkeypatch):
    _only(monkeypatch, {}, {})
    body = _one_message(session_factory, scripted_api, "loud")
    assert ATTRIBUTION in json.dumps(body) and GIT_INSTRUCTIONS in _bash_description(body)
    assert any(BILLING in b.get("text", "") for b in body["system"])


@pytest.mark.parametrize("setting, env, gone", [
    ("attribution", None, ATTRIBUTION),
    ("includeCoAuthoredBy", None, ATTRIBUTION),
    ("includeGitInstructions", None, GIT_INSTRUCTIONS),
    (None, "CLAUDE_CODE_ATTRIBUTION_HEADER", BILLING),
])
def test_each_switch_alone_removes_its_part(scripted_api, session_factory, monkeypatch, setting, env, gone):
    _only(monkeypatch, {setting: additions.QUIET_SETTINGS[setting]} if setting else {},
          {env: additions.QUIET_ENV[env]} if env else {})
    body = _one_message(session_factory, scripted_api, "one")
    assert gone not in json.dumps(body)
