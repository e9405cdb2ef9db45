"""A mistyped instance name (issue 27): one line suggesting the instance meant ("did you mean `mine`?")
before offering to create a new one; a name near nothing keeps the create hint alone."""
from __future__ import annotations

from pathlib import Path

import pytest

from mnemara.core.errors import InstanceNotFound
from mnemara.store.instance import Instance, nearest_instance


@pytest.mark.parametrize("args", [["run", "--no-tui", "-i", "mien"], ["show", "-i", "mien"], ["note", "-i", "mien", "x"]])
def test_a_typo_suggests_the_instance_meant(cli, mnemara_home: Path, args: list[str]) -> None:
    Instance.create("mine")
    Instance.create("work")
    result = cli(*args, input="")
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "no instance 'mien'" in lines[0] and "did you mean `mine`?" in lines[0], result.stderr
    assert not (mnemara_home / "mien").exists()


def test_a_name_near_nothing_offers_to_create_it(cli, mnemara_home: Path) -> None:
    Instance.create("mine")
    result = cli("show", "-i", "zzzzzz")
    assert result.returncode == 2 and "did you mean" not in result.stderr
    assert "mnemara init --instance zzzzzz" in result.stderr


def test_nearest_instance(mnemara_home: Path) -> None:
    for name in ("mine", "work", "research"):
        Instance.create(name)
    assert nearest_instance("Mine") == "mine" and nearest_instance("reserch") == "research"
    assert nearest_instance("qqq") is None
    with pytest.raises(InstanceNotFound, match="did you mean `work`"):
        Instance.open("wrok")
