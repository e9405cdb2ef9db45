"""config.json: spec defaults, unknown keys kept, atomic saves, clear refusals."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from mnemara.core.config import Config, update_config
from mnemara.core.errors import ConfigError


def test_spec_defaults() -> None:
    c = Config()
    assert c.max_window_turns == 20
    assert c.bash_timeout_seconds == 60
    assert c.file_tool_home_only is True
    assert {p.tool: p.mode for p in c.allowed_tools} == {
        "Bash": "ask", "Read": "allow", "Write": "ask", "Edit": "ask", "WriteMemory": "allow",
    }
    for flag in ("auto_evict_after_write", "compress_repeated_reads", "preserve_compressed_reads",
                 "read_skeleton_enabled", "file_stat_manifest_enabled", "runtime_sentinel", "peer_poll_enabled"):
        assert getattr(c, flag) is False, flag
    assert c.row_cap_slack_when_token_headroom == 0
    assert c.rag_enabled and c.graph_enabled and c.rag_auto_index_memory and c.rag_auto_index_wiki
    assert c.rag_embed_url == "http://localhost:11434/api/embeddings"
    assert c.rag_embed_model == "nomic-embed-text"
    assert (c.replay_default_days, c.replay_default_threshold, c.replay_policy_path) == (7, 3, "")
    assert c.peer_poll_batch is True and c.display_name == "" and c.mcp_servers == []


def test_round_trip_keeps_unknown_keys(tmp_path: Path) -> None:
    p = tmp_path / "config.json"
    raw = Config().to_dict()
    raw["future_field"] = {"nested": [1, 2]}
    raw["allowed_tools"][0]["note"] = "mine"
    p.write_text(json.dumps(raw))
    Config.load(p).save(p)
    again = json.loads(p.read_text())
    assert again["future_field"] == {"nested": [1, 2]}
    assert again["allowed_tools"][0]["note"] == "mine"


def test_peer_roles_accept_comma_string_and_mcp_servers_accept_one_object() -> None:
    c = Config.from_dict({"peer_poll_roles": "panel-a, panel-b", "mcp_servers": {"name": "fetch", "command": "uvx", "args": ["mcp-server-fetch"]}})
    assert c.peer_poll_roles == ["panel-a", "panel-b"]
    assert c.mcp_servers[0].name == "fetch"


@pytest.mark.parametrize(
    "content, needle",
    [
        ("{not json", "invalid JSON at line 1"),
        ('["a list"]', "top level must be a JSON object"),
        ('{"max_window_turns": "lots"}', "field 'max_window_turns'"),
        ('{"max_window_turns": 0}', "field 'max_window_turns'"),
        ('{"allowed_tools": [{"tool": "Bash", "mode": "sometimes"}]}', "field 'allowed_tools.0.mode'"),
        ('{"mcp_servers": [{"name": "bad name!", "command": "x"}]}', "field 'mcp_servers.0.name'"),
        ('{"stream": "maybe"}', "field 'stream'"),
    ],
)
def test_malformed_config_names_file_and_field(tmp_path: Path, content: str, needle: str) -> None:
    p = tmp_path / "config.json"
    p.write_text(content)
    with pytest.raises(ConfigError) as err:
        Config.load(p)
    assert str(p) in str(err.value) and needle in str(err.value)
    assert p.read_text() == content


def test_malformed_config_through_cli_exit_2_file_untouched(cli, mnemara_home: Path) -> None:
    cli("init", "--instance", "w")
    cfg = mnemara_home / "w" / "config.json"
    cfg.write_text('{"max_window_turns": [1]}')
    before = cfg.read_bytes()
    for args in (["show", "-i", "w"], ["role", "-i", "w", "--set", __file__], ["migrate", "-i", "w"]):
        r = cli(*args)
        assert r.returncode == 2, (args, r.stderr)
        assert "config.json: field 'max_window_turns'" in r.stderr
        assert len(r.stderr.strip().splitlines()) == 1
    assert cfg.read_bytes() == before


def test_update_config_is_validated_and_atomic(tmp_path: Path) -> None:
    p = tmp_path / "config.json"
    Config().save(p)
    update_config(p, model="claude-haiku-4-5")
    assert Config.load(p).model == "claude-haiku-4-5"
    before = p.read_bytes()
    with pytest.raises(ConfigError):
        update_config(p, max_window_tokens=-1)
    assert p.read_bytes() == before
    assert [f.name for f in tmp_path.iterdir()] == ["config.json"]  # no temp files left behind
