"""The README (issue 27): a short quickstart first, a user install line apart from the developer one,
the developer commands exactly as .ci/run runs them, and every docs/ page it links to present."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_readme_opens_with_a_short_quickstart_and_a_user_install_line() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    start = lines.index("## Quickstart")
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("## "))
    assert start < 12 and end - start <= 24, (start, end)
    quickstart = "\n".join(lines[start:end])
    assert "pipx install ." in quickstart and "pip install ." in quickstart
    assert ".[dev]" not in quickstart  # the developer line is further down, on its own


def test_the_developer_commands_are_the_ones_ci_runs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    for command in ('pip install -e ".[dev]"', "python -m pytest -q -n auto"):
        assert f"```bash\n{command}\n```" in readme and f"\n{command}\n" in ci, command


def test_every_linked_page_exists_and_links_back() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    pages = re.findall(r"\]\((docs/[\w.-]+\.md)\)", readme)
    for name in ("permissions", "configuration", "memory", "peer-inbox", "embedding"):
        assert f"docs/{name}.md" in pages, name
    for page in pages:
        text = (ROOT / page).read_text(encoding="utf-8")
        assert "](../README.md)" in text, page
        for target in re.findall(r"\]\(\.\./([^)#]+)\)", text):
            assert (ROOT / target).exists(), (page, target)
