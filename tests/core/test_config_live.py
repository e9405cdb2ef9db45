"""The one live config: changes are validated before anything is saved or handed out, and
:attr:`LiveConfig.current` is the object every holder reads."""
from __future__ import annotations

import pytest

from mnemara.core.config import Config
from mnemara.core.errors import ConfigError
from mnemara.core.live_config import LiveConfig


def test_a_refused_override_changes_nothing_and_an_update_ends_the_override(tmp_path):
    path = tmp_path / "config.json"
    Config().save(path)
    handed: list[Config] = []

    def hand_out(cfg: Config) -> Config:
        handed.append(cfg)
        return cfg

    live = LiveConfig(path, hand_out)
    with pytest.raises(ConfigError):
        live.override(max_window_turns=-1)
    assert live.overrides == {} and handed == [] and live.current == Config.load(path)
    assert live.override(model="claude-haiku-4-5").model == "claude-haiku-4-5"
    assert live.current is handed[-1]  # holders read the one live object
    assert Config.load(path).model != "claude-haiku-4-5"  # never saved
    assert live.update(model="claude-sonnet-4-5").model == "claude-sonnet-4-5"
    assert live.overrides == {} and Config.load(path).model == "claude-sonnet-4-5"
    assert [cfg.model for cfg in handed] == ["claude-haiku-4-5", "claude-sonnet-4-5"]  # each change handed out once


def test_without_a_session_it_loads_saves_and_follows_hand_edits(tmp_path):
    path = tmp_path / "config.json"
    Config().save(path)
    live = LiveConfig(path, current=Config(max_window_turns=7))  # a holder built outside a session
    assert live.current.max_window_turns == 7
    with pytest.raises(ConfigError):
        live.update(max_window_turns="lots")
    assert live.current.max_window_turns == 7 and Config.load(path) == Config()  # nothing saved, nothing changed
    assert live.update(max_window_turns=9).max_window_turns == 9 == Config.load(path).max_window_turns
    path.write_text(path.read_text(encoding="utf-8").replace('"max_window_turns": 9', '"max_window_turns": 11'),
                    encoding="utf-8")
    assert live.current.max_window_turns == 9  # a hand edit is read at the next reload, not in the middle
    assert live.reload() is live.current and live.current.max_window_turns == 11
