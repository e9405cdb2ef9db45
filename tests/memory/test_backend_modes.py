"""LanceDB and Kuzu files are private after writes (issue 25, WEAK item): they used to stay 0755/0644."""
from __future__ import annotations

import os
import stat
from pathlib import Path

from mnemara.core.fsutil import tighten_modes
from tests.memory_support import call, context, make_instance


def _open_to_others(folder: Path) -> list[str]:
    out = []
    for base, dirs, files in os.walk(folder):
        for name in (*dirs, *files):
            mode = os.lstat(os.path.join(base, name)).st_mode
            if not stat.S_ISLNK(mode) and mode & 0o077:
                out.append(f"{os.path.join(base, name)}: {oct(stat.S_IMODE(mode))}")
    return out


def test_index_and_graph_files_are_private_after_writes() -> None:
    old = os.umask(0o022)  # the usual umask: the libraries would leave 0644 / 0755
    try:
        inst, cfg = make_instance(rag_embedder="none")
        ctx = context(inst, cfg)
        assert call(ctx, "write_memory", text="the billing database listens on 5433", applies_to=["billing"])["ok"]
        assert call(ctx, "rag_query", question="billing port")["hits"]
    finally:
        os.umask(old)
    assert any(inst.index_dir.rglob("*")) and any(inst.graph_dir.rglob("*"))
    assert _open_to_others(inst.index_dir) == []
    assert _open_to_others(inst.graph_dir) == []


def test_tighten_modes_skips_links_and_keeps_owner_bits(tmp_path: Path) -> None:
    folder = tmp_path / "f"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "run.sh").write_text("x")
    os.chmod(folder / "sub" / "run.sh", 0o755)
    outside = tmp_path / "outside.txt"
    outside.write_text("x")
    os.chmod(outside, 0o644)
    (folder / "link").symlink_to(outside)
    assert tighten_modes(folder) == 2
    assert stat.S_IMODE(os.stat(folder / "sub" / "run.sh").st_mode) == 0o700
    assert stat.S_IMODE(os.stat(folder / "sub").st_mode) == 0o700
    assert stat.S_IMODE(outside.stat().st_mode) == 0o644  # a link's target is not touched
