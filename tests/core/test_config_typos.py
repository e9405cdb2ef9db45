"""A misspelt config key (issue 27) is refused in one line naming the key and the setting meant;
the file is never rewritten. Keys close to no setting (a newer Mnemara's, 0.18's, notes) are kept."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from mnemara.core.config import Config, misspelt_key
from mnemara.core.errors import ConfigError
from mnemara.store.instance import Instance
from mnemara.legacy.config018 import KEPT, KEY_MAP


@pytest.mark.parametrize("raw, key, meant", [
    ({"modle": "claude-opus-4-7"}, "'modle'", "'model'"),
    ({"Model": "claude-opus-4-7"}, "'Model'", "'model'"),
    ({"max_window_turn": 5}, "'max_window_turn'", "'max_window_turns'"),
    ({"display-name": "Ada"}, "'display-name'", "'display_name'"),
    ({"file_tool_root": ["/srv"]}, "'file_tool_root'", "'file_tool_roots'"),
    ({"allowed_tools": [{"tool": "Bash", "mdoe": "allow"}]}, "allowed_tools[0].'mdoe'", "'mode'"),
    ({"mcp_servers": [{"name": "x", "comand": "y"}]}, "mcp_servers[0].'comand'", "'command'"),
])
def test_a_near_miss_is_refused_naming_the_key_and_the_setting(raw: dict, key: str, meant: str) -> None:
    with pytest.raises(ConfigError) as caught:
        Config.from_dict(raw, source="config.json")
    message = caught.value.message
    assert message.startswith(f"config.json: unknown key {key}: did you mean {meant}?") and "\n" not in message


def test_keys_near_nothing_and_both_spellings_are_kept() -> None:
    legacy = {key: "x" for key, what in KEY_MAP.items() if what.startswith(KEPT)}
    cfg = Config.from_dict({**legacy, "my_note": "mine", "model": "claude-opus-4-7", "modle": "old"})
    assert cfg.model_extra is not None and cfg.model_extra["my_note"] == "mine" and "mud_password" in cfg.model_extra
    assert misspelt_key({"model": "a", "modle": "b"}) is None  # the setting is set: a second key, not a typo


def test_a_hand_edited_typo_stops_the_command_and_leaves_the_file(cli, mnemara_home: Path) -> None:
    inst = Instance.create("typo")
    data = json.loads(inst.config_path.read_text(encoding="utf-8"))
    data["modle"] = data.pop("model")
    inst.config_path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    before = inst.config_path.read_bytes()
    for args in (["run", "--no-tui", "-i", "typo"], ["show", "-i", "typo"]):
        result = cli(*args, input="hello\n")
        lines = [line for line in result.stderr.splitlines() if "modle" in line]
        assert result.returncode != 0 and len(lines) == 1, (args, result.stderr)
        assert "did you mean 'model'?" in lines[0]
    assert inst.config_path.read_bytes() == before
