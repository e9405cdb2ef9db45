"""/models aliases, /swap and /tokens with --temp (this session only) and --force, and their warnings."""
from __future__ import annotations

import pytest

from mnemara.commands import dispatch
from mnemara.commands.core import resolve_model
from mnemara.core.config import Config
from mnemara.testing.scripted_api import reply
from tests.conftest import run_cli


@pytest.fixture
def ctx(session_factory):
    return session_factory("over")


@pytest.mark.parametrize("alias, model", [("latest", "claude-opus-4-7"), ("frontier", "claude-opus-4-7"),
                                          ("default", "claude-opus-4-7"), ("mini", "claude-haiku-4-5")])
def test_018_aliases(alias, model):
    assert resolve_model(alias) == model


def test_swap_temp_lasts_for_the_session_and_survives_reloads(ctx):
    assert dispatch(ctx, "/swap mini --temp").ok
    assert ctx.config.model == "claude-haiku-4-5"
    assert Config.load(ctx.instance.config_path).model == "claude-sonnet-4-6"
    assert ctx.reload_config().model == "claude-haiku-4-5"  # every turn re-reads config.json
    assert dispatch(ctx, "/tokens 300k --temp").ok and ctx.reload_config().max_window_tokens == 300_000
    assert Config.load(ctx.instance.config_path).max_window_tokens == 200_000
    assert dispatch(ctx, "/swap opus").ok  # a saved swap replaces the session-only one
    assert ctx.reload_config().model == "claude-opus-4-7" and Config.load(ctx.instance.config_path).model == "claude-opus-4-7"


def test_swap_to_an_unknown_model_warns_and_needs_force(ctx):
    result = dispatch(ctx, "/swap claude-sonnet-4-5")
    assert not result.ok and "--force" in result.text and "not a model /models knows" in result.text
    assert ctx.config.model == "claude-sonnet-4-6" and Config.load(ctx.instance.config_path).model == "claude-sonnet-4-6"
    forced = dispatch(ctx, "/swap claude-sonnet-4-5 --force")
    assert forced.ok and "warning" in forced.text and Config.load(ctx.instance.config_path).model == "claude-sonnet-4-5"


@pytest.mark.parametrize("line", ["/swap opus --tmp", "/swap --temp", "/tokens --temp", "/tokens 5k --force",
                                  "/swap opus sonnet --temp"])
def test_flag_refusals_change_nothing(ctx, line):
    before = Config.load(ctx.instance.config_path)
    assert not dispatch(ctx, line).ok
    assert Config.load(ctx.instance.config_path) == before and ctx.session_overrides == {}


def test_tokens_warns_when_implausibly_small(ctx):
    result = dispatch(ctx, "/tokens 10")
    assert result.ok and "warning: 10 tokens is implausibly small" in result.text and "/tokens 10k" in result.text
    assert "warning" not in dispatch(ctx, "/tokens 20k").text


@pytest.mark.e2e
def test_swap_temp_reaches_the_api_and_is_forgotten_by_the_next_session(scripted_api, mnemara_home):
    from mnemara.store.instance import Instance

    Instance.create("tmpswap")
    scripted_api.push(reply("one"), reply("two"))
    proc = run_cli("run", "--instance", "tmpswap", "--no-tui", input="/swap mini --temp\nhello\n/tokens 10\n")
    assert proc.returncode == 0, proc.stderr
    assert "this session only" in proc.stdout and "implausibly small" in proc.stdout + proc.stderr
    assert scripted_api.message_requests()[0].body["model"] == "claude-haiku-4-5"
    # the next `mnemara run` is back on the saved model (asked with /models: no turn, so no CLI to start;
    # the first run proved that the live model is the one the API gets)
    proc = run_cli("run", "--instance", "tmpswap", "--no-tui", input="/models\n")
    assert proc.returncode == 0, proc.stderr
    [current] = [line for line in proc.stdout.splitlines() if line.startswith("*")]
    assert current.endswith("claude-sonnet-4-6"), proc.stdout
