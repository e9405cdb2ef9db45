"""Wiki pages: slugs, refusals of paths leaving wiki/, modes, listing and frontmatter."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from mnemara.core.errors import UsageError
from mnemara.memory.wiki import list_pages, normalize_slug, page_tags, parse_frontmatter, read_page, write_page


def test_write_read_append_and_list(tmp_path: Path) -> None:
    wiki = tmp_path / "wiki"
    page = write_page(wiki, "patterns/loader_traps", "# Loader traps\nfirst")
    assert page.path == wiki.resolve() / "patterns" / "loader_traps.md"
    assert read_page(wiki, "patterns/loader_traps.md").text == "# Loader traps\nfirst\n"
    write_page(wiki, "wiki/patterns/loader_traps", "second", mode="append")
    assert read_page(wiki, "patterns/loader_traps").text == "# Loader traps\nfirst\n\nsecond\n"
    write_page(wiki, "replay_policy", "policy", mode="append")  # append creates
    write_page(wiki, "patterns/loader_traps", "replaced")
    assert read_page(wiki, "patterns/loader_traps").text == "replaced\n"
    assert list_pages(wiki) == ["patterns/loader_traps", "replay_policy"]
    assert list_pages(wiki, "patterns/") == ["patterns/loader_traps"]
    assert list_pages(tmp_path / "nowhere") == []


@pytest.mark.parametrize("bad", [
    "../escape", "a/../../escape", "/etc/passwd", "", "  ", "a//b", "./a", ".hidden", "a\\b", "C:evil",
    "a\x00b", "sp ace", "-dash", "x" * 300,
])
def test_bad_paths_are_refused_and_nothing_written(tmp_path: Path, bad: str) -> None:
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    with pytest.raises(UsageError):
        write_page(wiki, bad, "content")
    with pytest.raises(UsageError):
        read_page(wiki, bad)
    assert list(tmp_path.rglob("*.md")) == []


def test_symlinks_out_of_wiki_are_refused(tmp_path: Path) -> None:
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "secret.md"
    secret.write_text("secret\n")
    os.symlink(secret, wiki / "leak.md")
    os.symlink(outside, wiki / "out")
    for path in ("leak", "out/secret", "out/new"):
        with pytest.raises(UsageError, match="outside wiki"):
            read_page(wiki, path) if path != "out/new" else write_page(wiki, path, "x")
    with pytest.raises(UsageError, match="outside wiki"):
        write_page(wiki, "leak", "overwrite")
    assert secret.read_text() == "secret\n" and not (outside / "new.md").exists()
    assert list_pages(wiki) == []
    # a symlink that stays inside wiki/ is fine
    write_page(wiki, "real", "inside")
    os.symlink(wiki / "real.md", wiki / "alias.md")
    assert read_page(wiki, "alias").text == "inside\n"


def test_refusals_leave_page_unchanged(tmp_path: Path) -> None:
    wiki = tmp_path / "wiki"
    write_page(wiki, "p", "keep")
    with pytest.raises(UsageError, match="mode"):
        write_page(wiki, "p", "x", mode="overwrite")
    with pytest.raises(UsageError, match="empty"):
        write_page(wiki, "p", "   ")
    with pytest.raises(UsageError, match="no wiki page"):
        read_page(wiki, "missing")
    (wiki / "bin.md").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(UsageError, match="UTF-8"):
        read_page(wiki, "bin")
    assert read_page(wiki, "p").text == "keep\n"


def test_frontmatter_and_tags() -> None:
    inline = "---\ntitle: Loader\ntags: [python, 'imports', python]\n---\n# Body\n"
    meta, body = parse_frontmatter(inline)
    assert meta["title"] == "Loader" and body == "# Body\n"
    assert page_tags(inline) == ["python", "imports"]
    block = "---\ntags:\n  - ops\n  - \"k8s\"\nstatus: draft\n---\ntext"
    assert page_tags(block) == ["ops", "k8s"] and parse_frontmatter(block)[0]["status"] == "draft"
    assert page_tags("---\ntags: a, b ,c\n---\n") == ["a", "b", "c"]
    assert page_tags("no frontmatter\ntags: x") == []
    unclosed = "---\ntags: [x]\nno end"
    assert parse_frontmatter(unclosed) == ({}, unclosed)
    assert normalize_slug("wiki/a/b.md") == "a/b"
