"""JSON a user can edit is parsed with a size and a depth limit and refused in one line (issue 37, hole 4).

The attack: ``'[' * 100000 + ']' * 100000`` in config.json or permissions.json gave a RecursionError
traceback in ``run`` and ``show``, and ``mnemara list`` tracebacked for every instance while any one
held such a file. Each reader now goes through :mod:`mnemara.core.json_limits`.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from mnemara.core import json_limits
from mnemara.core.json_limits import JSONRefused
from mnemara.store.instance import Instance

DEEP = "[" * 100000 + "]" * 100000
DEEP_OBJECT = '{"a": ' * 70 + "1" + "}" * 70


def _one_line(text: str) -> None:
    assert "Traceback" not in text and "RecursionError" not in text, text[-2000:]
    assert len(text.strip().splitlines()) == 1, text[-2000:]


@pytest.mark.parametrize("text", [DEEP, DEEP_OBJECT, "[" * 65 + "]" * 65], ids=["array", "object", "65"])
def test_deep_json_is_refused_in_one_line(text: str) -> None:
    with pytest.raises(JSONRefused, match="nested deeper than 64 levels") as refused:
        json_limits.loads(text)
    assert isinstance(refused.value, ValueError) and "\n" not in str(refused.value)


def test_json_at_the_limits_is_read() -> None:
    assert json_limits.loads("[" * 64 + "]" * 64) == json.loads("[" * 64 + "]" * 64)
    assert json_limits.loads('{"a": [1, {"b": "c"}]}') == {"a": [1, {"b": "c"}]}


def test_a_file_over_the_size_limit_is_refused_before_it_is_read(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    with open(big, "wb") as fh:
        fh.truncate(json_limits.MAX_BYTES + 1)  # sparse: nothing to parse, only its size counts
    with pytest.raises(JSONRefused, match="over the 16777216-byte limit"):
        json_limits.load_file(big)


@pytest.mark.parametrize("command", [["show", "--instance", "deep"], ["run", "--instance", "deep"]], ids=["show", "run"])
@pytest.mark.parametrize("text", [DEEP, DEEP_OBJECT], ids=["array", "object"])
def test_run_and_show_refuse_a_deep_config_json_in_one_line(cli, mnemara_home: Path, command, text) -> None:
    inst = Instance.create("deep")
    inst.config_path.write_text(text, encoding="utf-8")
    done = cli(*command, input="", subprocess_only=True)
    assert done.returncode != 0
    _one_line(done.stderr)
    assert "config.json" in done.stderr and "nested deeper than 64 levels" in done.stderr
    assert inst.config_path.read_text(encoding="utf-8") == text  # left as it is


def test_list_shows_a_broken_instance_as_broken_and_lists_the_rest(cli, mnemara_home: Path) -> None:
    Instance.create("alpha")
    Instance.create("broken").config_path.write_text(DEEP, encoding="utf-8")
    Instance.create("zeta")
    (mnemara_home / "broken" / "permissions.json").write_text(DEEP, encoding="utf-8")
    done = cli("list", subprocess_only=True)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    lines = done.stdout.strip().splitlines()
    assert [line.split()[0] for line in lines] == ["alpha", "broken", "zeta"]
    assert lines[1] == "broken  [broken: config.json: nested deeper than 64 levels (the limit for a JSON file)]"
    assert "model=" in lines[0] and "model=" in lines[2]


def test_a_deep_permissions_json_is_one_problem_line_and_grants_nothing(mnemara_home: Path) -> None:
    from mnemara.guard.gate import load_permissions

    inst = Instance.create("perms")
    inst.permissions_path.write_text(DEEP, encoding="utf-8")
    patterns, problems = load_permissions(inst.permissions_path)
    assert patterns == {} and problems == [
        "permissions.json: refused: nested deeper than 64 levels (the limit for a JSON file); no persisted allows "
        "are used"]


def test_a_deep_unsent_json_is_left_as_it_is(mnemara_home: Path) -> None:
    from mnemara.store.unsent import UnsentMessages

    inst = Instance.create("unsent")
    (inst.root / "unsent.json").write_text(DEEP, encoding="utf-8")
    messages, problem = UnsentMessages(inst.root).read()
    assert messages == [] and problem is not None and "nested deeper than 64 levels" in problem
    _one_line(problem)
    assert (inst.root / "unsent.json").read_text(encoding="utf-8") == DEEP


def test_a_deep_cache_record_is_no_record(isolated_home: Path) -> None:
    from mnemara.claude.child_guard import read_cached_json
    from mnemara.core.user_cache import cache_dir

    cache_dir().mkdir(parents=True)
    (cache_dir() / "early-launch.json").write_text('{"k": ' + DEEP + "}", encoding="utf-8")
    assert read_cached_json(cache_dir() / "early-launch.json") == {}


def test_a_deep_import_file_is_refused_in_one_line(mnemara_home: Path) -> None:
    import re

    from mnemara.context.exchange import export_markdown, parse_export
    from mnemara.core.config import Config

    text = export_markdown([], Config(), "imp")
    planted = re.sub(r"(## config\n+```json\n).*?(\n```)", lambda m: m.group(1) + DEEP + m.group(2), text, count=1,
                     flags=re.S)
    assert DEEP in planted
    with pytest.raises(Exception, match="config refused: nested deeper than 64 levels") as refused:
        parse_export(planted, "planted.md")
    assert "\n" not in str(refused.value)
