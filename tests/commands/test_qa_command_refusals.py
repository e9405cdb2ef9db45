"""Slash-command refusals found in the new-user pass: one clear line, nothing written or changed."""
from __future__ import annotations

import pytest

from mnemara.commands import dispatch
from mnemara.core.config import Config


@pytest.fixture
def ctx(session_factory):
    return session_factory("qa")


@pytest.mark.parametrize("line", ["/note -c", "/note --category", "/note -c   "])
def test_note_with_a_bare_category_flag_writes_nothing(ctx, line):
    result = dispatch(ctx, line)
    assert not result.ok and "\n" not in result.text.split("\nusage:")[0]
    assert not list(ctx.instance.memory_dir.glob("*.md"))


@pytest.mark.parametrize("value", ["99999999999999999999", "101m", "1e30"])
def test_tokens_refuses_absurd_caps_and_keeps_the_old_one(ctx, value):
    before = Config.load(ctx.instance.config_path).max_window_tokens
    result = dispatch(ctx, f"/tokens {value}")
    assert not result.ok and Config.load(ctx.instance.config_path).max_window_tokens == before
    assert dispatch(ctx, "/tokens 100m").ok  # the largest accepted value


def test_pin_with_a_spaced_label_says_labels_are_one_word(ctx):
    row = ctx.store.append("user", "keep me")
    result = dispatch(ctx, f"/pin {row} my slot")
    assert not result.ok and "one-word label" in result.text and not ctx.store.pinned()
    assert dispatch(ctx, f"/pin {row} my-slot").ok and ctx.store.pinned()[0].pin_label.endswith("my-slot")


def test_inbox_without_peer_poll_says_how_to_turn_it_on(ctx):
    result = dispatch(ctx, "/inbox")
    assert not result.ok and "peer_poll_enabled" in result.text and "mnemara run" in result.text
