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


def test_tokens_asks_before_an_implausibly_small_cap_and_writes_nothing_until_confirmed(ctx):
    """Issue 39: `/tokens 10` was saved with only "Did you mean 10k?"; now nothing changes until confirmed."""
    from mnemara.commands.payloads import Confirm

    result = dispatch(ctx, "/tokens 10")
    assert result.action == "confirm" and isinstance(result.payload, Confirm)
    assert result.payload.command == "/tokens 10 --yes" and "Did you mean 10k (/tokens 10k)?" in result.text
    assert "Nothing changed; max_window_tokens stays 200000" in result.text
    assert ctx.config.max_window_tokens == 200_000 and Config.load(ctx.instance.config_path).max_window_tokens == 200_000
    temp = dispatch(ctx, "/tokens 10 --temp")
    assert temp.payload.command == "/tokens 10 --temp --yes" and ctx.session_overrides == {}
    confirmed = dispatch(ctx, result.payload.command)
    assert confirmed.ok and "saved to config.json" in confirmed.text and "warning: 10 tokens" in confirmed.text
    assert Config.load(ctx.instance.config_path).max_window_tokens == 10
    later = dispatch(ctx, "/tokens 500k --temp")  # --temp never writes, and says what stays on disk
    assert later.text == "max_window_tokens set to 500000 for this session only (config.json not written: it keeps 10)"
    assert ctx.config.max_window_tokens == 500_000 and Config.load(ctx.instance.config_path).max_window_tokens == 10
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


def test_the_piped_repl_asks_before_a_tiny_cap_and_temp_says_what_config_json_keeps(ctx):
    import io

    from mnemara.ui.repl.app import run_piped

    out, err = io.StringIO(), io.StringIO()
    run_piped(ctx, io.StringIO("/tokens 10\nn\n/tokens 10\ny\n/tokens 500k --temp\n"), out, err)
    said = out.getvalue() + err.getvalue()
    assert said.count("Did you mean 10k (/tokens 10k)?") == 2 and "cancelled: nothing was changed" in said
    assert "max_window_tokens set to 10 (saved to config.json)" in said
    assert "for this session only (config.json not written: it keeps 10)" in said
    assert Config.load(ctx.instance.config_path).max_window_tokens == 10 and ctx.config.max_window_tokens == 500_000
