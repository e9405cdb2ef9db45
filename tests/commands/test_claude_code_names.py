"""Issue 39: Claude Code's command names answer (an alias, or what to use instead), unknown names get a
"did you mean", and /help lists the Claude Code names; through the shared dispatcher and the piped REPL."""
from __future__ import annotations

import io

import pytest

from mnemara.commands import dispatch, specs
from mnemara.commands.claude_code import CLAUDE_CODE_NAMES
from mnemara.commands.payloads import HelpColumns, ModelChosen, RefusedInput, UsageCounts
from mnemara.core.config import Config


@pytest.fixture
def ctx(session_factory):
    return session_factory("cc")


def test_model_alone_lists_the_models_and_with_a_name_swaps(ctx):
    listed = dispatch(ctx, "/model")
    assert listed.ok and "* 2. sonnet  claude-sonnet-4-6" in listed.text
    swapped = dispatch(ctx, "/model haiku")
    assert isinstance(swapped.payload, ModelChosen) and swapped.payload.model == "claude-haiku-4-5"
    assert Config.load(ctx.instance.config_path).model == "claude-haiku-4-5"
    refused = dispatch(ctx, "/model gpt-4")
    assert not refused.ok and "unknown model 'gpt-4'" in refused.text
    assert Config.load(ctx.instance.config_path).model == "claude-haiku-4-5"


def test_compact_status_usage_run_mnemaras_commands(ctx):
    assert dispatch(ctx, "/compact").text == dispatch(ctx, "/compress").text
    status = dispatch(ctx, "/status")
    assert isinstance(status.payload, UsageCounts) and status.text == dispatch(ctx, "/stats").text
    assert dispatch(ctx, "/usage").text == status.text
    bad = dispatch(ctx, "/compact banana")  # the alias refuses as its command does, naming the command
    assert not bad.ok and bad.text.startswith("/compress: ") and isinstance(bad.payload, RefusedInput)


@pytest.mark.parametrize("name, says", [("resume", "mnemara run -i NAME"), ("permissions", "permissions.json"),
                                        ("init", "/role_doc"), ("config", "config.json"), ("rewind", "/undo")])
def test_names_mnemara_has_no_equivalent_for_say_what_to_use(ctx, name, says):
    before = ctx.instance.config_path.read_bytes()
    result = dispatch(ctx, f"/{name}")
    assert result.text.startswith(f"/{name} is Claude Code's; Mnemara has none: ") and says in result.text
    assert ctx.instance.config_path.read_bytes() == before


@pytest.mark.parametrize("typed, meant", [("/modle", "/model"), ("/stat", "/stats"), ("/compres", "/compress"),
                                          ("/HELPP", "/help"), ("/expor", "/export")])
def test_unknown_commands_get_a_did_you_mean_and_come_back(ctx, typed, meant):
    result = dispatch(ctx, typed + " x")
    assert not result.ok and isinstance(result.payload, RefusedInput)
    first = result.text.splitlines()[0]
    assert first.startswith(f"unknown command {typed.lower()}: did you mean ") and meant in first


def test_a_name_nothing_is_close_to_has_no_guess(ctx):
    assert dispatch(ctx, "/zzqx").text.startswith("unknown command /zzqx (/help lists them")


def test_help_lists_the_claude_code_names_after_the_commands(ctx):
    result = dispatch(ctx, "/help")
    assert isinstance(result.payload, HelpColumns)
    rows = dict(result.payload.rows)
    assert rows["/compact"] == "runs /compress" and rows["/status"] == "runs /stats"
    assert rows["/model"] == "/swap MODEL, or alone /models"
    assert rows["/resume"].startswith("none here: the conversation is kept")
    assert list(rows).index("Claude Code's names:") > list(rows).index("/swap <opus|sonnet|haiku|latest|mini|n|claude-...> "
                                                                      "[--temp] [--force]")
    assert {f"/{entry.name}" for entry in CLAUDE_CODE_NAMES} <= set(rows)
    # the answers are not commands in the list above (nor Tab candidates); the aliases show in /help NAME
    assert "resume" not in {s.name for s in specs()}
    assert "also: /compact" in dispatch(ctx, "/help compress").text
    assert "mnemara run -i NAME" in dispatch(ctx, "/help resume").text
    refused = dispatch(ctx, "/help modle")
    assert not refused.ok and "no command /modle: did you mean /model" in refused.text


def test_the_piped_repl_answers_claude_code_names(ctx):
    from mnemara.ui.repl.app import run_piped

    out, err = io.StringIO(), io.StringIO()
    run_piped(ctx, io.StringIO("/model\n/resume\n/modle\n"), out, err)
    said = out.getvalue() + err.getvalue()
    assert "switch: /swap" in said and "/resume is Claude Code's" in said
    assert "unknown command /modle: did you mean /model" in said
