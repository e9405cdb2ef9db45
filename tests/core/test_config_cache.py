"""The prompt-cache fields of config.json: sensible defaults, and every bad value refused with its field named."""
from __future__ import annotations

from pathlib import Path

import pytest

from mnemara.core.config import Config, update_config
from mnemara.core.errors import ConfigError


def test_defaults_keep_the_window_cacheable():
    cfg = Config()
    assert (cfg.request_layout, cfg.cache_ttl, cfg.window_trim_to) == ("cache", "5m", 0.25)
    assert cfg.cli_conversation == "continue"


@pytest.mark.parametrize("content, field", [
    ('{"window_trim_to": 0}', "window_trim_to"),
    ('{"window_trim_to": -0.5}', "window_trim_to"),
    ('{"window_trim_to": 1.5}', "window_trim_to"),
    ('{"window_trim_to": "half"}', "window_trim_to"),
    ('{"request_layout": "fast"}', "request_layout"),
    ('{"request_layout": ""}', "request_layout"),
    ('{"cache_ttl": "10m"}', "cache_ttl"),
    ('{"cache_ttl": "1H"}', "cache_ttl"),
    ('{"cache_ttl": 3600}', "cache_ttl"),
    ('{"cli_conversation": "keep"}', "cli_conversation"),
    ('{"cli_conversation": true}', "cli_conversation"),
    ('{"cli_conversation": "Continue"}', "cli_conversation"),
])
def test_bad_cache_fields_are_refused_naming_the_field_and_the_file_is_untouched(tmp_path: Path, content, field):
    path = tmp_path / "config.json"
    path.write_text(content)
    with pytest.raises(ConfigError) as err:
        Config.load(path)
    message = str(err.value)
    assert str(path) in message and f"field '{field}'" in message and "\n" not in message.strip()
    assert path.read_text() == content


def test_update_config_refuses_a_bad_value_and_keeps_the_good_one(tmp_path: Path):
    path = tmp_path / "config.json"
    Config().save(path)
    update_config(path, window_trim_to=0.25, request_layout="spec", cache_ttl="1h")
    before = path.read_bytes()
    for bad in ({"window_trim_to": 2}, {"request_layout": "cached"}, {"cache_ttl": "2h"}, {"cli_conversation": "off"}):
        with pytest.raises(ConfigError):
            update_config(path, **bad)
        assert path.read_bytes() == before
    cfg = Config.load(path)
    assert (cfg.window_trim_to, cfg.request_layout, cfg.cache_ttl) == (0.25, "spec", "1h")
