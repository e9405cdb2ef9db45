"""Core slash commands through the shared dispatcher, on a real instance (no CLI, no turns)."""
from __future__ import annotations

import pytest

from mnemara.commands import dispatch
from mnemara.commands.core import MODEL_SHORTCUTS, resolve_model
from mnemara.core.config import Config


@pytest.fixture
def ctx(session_factory):
    return session_factory("cmds")


@pytest.mark.parametrize("arg, model", [("opus", "claude-opus-4-7"), ("SONNET", "claude-sonnet-4-6"),
                                        ("3", "claude-haiku-4-5"), ("claude-opus-4-7", "claude-opus-4-7")])
def test_resolve_model(arg, model):
    assert resolve_model(arg) == model


@pytest.mark.parametrize("arg", ["", "0", "4", "gpt-4", "claude-", "opus; rm -rf /"])
def test_resolve_model_refuses(arg):
    with pytest.raises(ValueError):
        resolve_model(arg)


def test_swap_persists_and_models_marks_current(ctx):
    result = dispatch(ctx, "/swap 1")
    assert result.ok and ctx.config.model == "claude-opus-4-7"
    assert Config.load(ctx.instance.config_path).model == "claude-opus-4-7"
    listing = dispatch(ctx, "/models").text.splitlines()
    assert listing[0].startswith("* 1. opus") and len(listing) == len(MODEL_SHORTCUTS) + 2
    assert "latest=claude-opus-4-7" in listing[-2] and "mini=claude-haiku-4-5" in listing[-2]


def test_help_show_note_role_stop_quit(ctx, tmp_path):
    assert "/swap" in dispatch(ctx, "/help").text
    assert dispatch(ctx, "/help swap").text.startswith("/swap")
    assert not dispatch(ctx, "/help nope").ok
    assert dispatch(ctx, "/show").text == "(the window is empty)"
    ctx.store.append("user", "hello")
    assert "hello" in dispatch(ctx, "/show 1").text
    assert dispatch(ctx, "/note -c todo buy milk").ok
    assert "buy milk" in next(ctx.instance.memory_dir.glob("*.md")).read_text()
    role = tmp_path / "role with space.md"
    role.write_text("R", encoding="utf-8")
    assert dispatch(ctx, f'/role "{role}"').ok and Config.load(ctx.instance.config_path).role_doc_path == str(role)
    assert "1 chars" in dispatch(ctx, "/role").text
    bad = dispatch(ctx, f"/role {tmp_path}")
    assert not bad.ok and Config.load(ctx.instance.config_path).role_doc_path == str(role)
    assert dispatch(ctx, "/stop").text == "nothing to stop"
    ctx.busy = True
    assert dispatch(ctx, "/stop").action == "stop"
    assert dispatch(ctx, "/exit").action == "quit" and dispatch(ctx, "/quit").action == "quit"
    assert not dispatch(ctx, "/quit now").ok
