"""Config fields of auto-recall and dedupe: conservative defaults, clear refusals."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from mnemara.core.config import Config
from mnemara.core.errors import ConfigError


def test_recall_defaults_are_conservative() -> None:
    c = Config()
    assert c.auto_recall is False
    assert c.auto_recall_k == 3
    assert c.auto_recall_min_score == 0.6
    assert c.dedupe_threshold == 0.97


@pytest.mark.parametrize("field,value", [
    ("auto_recall_k", 0), ("auto_recall_k", 21), ("auto_recall_k", "many"),
    ("auto_recall_min_score", 0), ("auto_recall_min_score", 1.5),
    ("dedupe_threshold", 0), ("dedupe_threshold", 2), ("auto_recall", "sometimes"),
])
def test_bad_values_refused_and_file_untouched(tmp_path: Path, field: str, value: object) -> None:
    p = tmp_path / "config.json"
    raw = Config().to_dict()
    raw[field] = value
    text = json.dumps(raw)
    p.write_text(text)
    with pytest.raises(ConfigError, match=field):
        Config.load(p)
    assert p.read_text() == text
