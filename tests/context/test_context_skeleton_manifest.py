"""read_skeleton and the file-stat manifest on real files."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from mnemara.context.manifest import FileTracker
from mnemara.context.skeleton import read_skeleton, skeleton_of
from mnemara.core.errors import UsageError
from mnemara.store.turns import TurnStore
from mnemara.context.tool_state import ToolState

ROOT = Path(__file__).resolve().parents[2]


def test_skeleton_of_a_real_module_is_at_least_80_percent_smaller():
    sk = read_skeleton(ROOT / "mnemara" / "context" / "exchange.py")
    assert sk.reduction >= 0.80, sk.reduction
    assert "def parse_export(text: str, source: str='export') -> ExportDoc:" in sk.text
    assert "Parse an export completely" in sk.text
    assert "lines.skip_blank()" not in sk.text  # bodies are gone
    compile(sk.text, "skeleton", "exec")  # the skeleton itself is valid Python


def test_skeleton_keeps_classes_decorators_async_and_fields():
    src = '''"""Mod doc.

More detail."""
import os

@dataclass(frozen=True)
class A(Base, metaclass=M):
    """A doc."""
    x: int = 3
    async def go(self, *a, k: str = "v", **kw) -> None:
        """Go."""
        await x()
    def _inner(self):
        def nested():
            pass
        return 1
'''
    text = skeleton_of(src)
    assert text.splitlines()[0] == '"""Mod doc."""'
    assert "@dataclass(frozen=True)\nclass A(Base, metaclass=M):" in text
    assert "    x: int" in text and "async def go(self, *a, k: str='v', **kw) -> None:" in text
    assert "    def _inner(self): ..." in text and "nested" not in text and "import os" not in text


def test_skeleton_refusals(tmp_path):
    txt = tmp_path / "notes.txt"
    txt.write_text("hello", encoding="utf-8")
    broken = tmp_path / "broken.py"
    broken.write_text("def f(:\n    pass\n", encoding="utf-8")
    binary = tmp_path / "b.py"
    binary.write_bytes(b"\xff\xfe\x00")
    cases = [(txt, "not a Python file"), (broken, "cannot parse as Python: line 1"), (binary, "not UTF-8"),
             (tmp_path / "none.py", "no such file"), (tmp_path, "not a file")]
    for path, hint in cases:
        with pytest.raises(UsageError, match=hint):
            read_skeleton(path)
    script = tmp_path / "tool"
    script.write_text("#!/usr/bin/env python3\ndef main(): pass\n", encoding="utf-8")
    assert "def main(): ..." in read_skeleton(script).text


def test_skeleton_home_only(tmp_path, isolated_home):
    inside = isolated_home / "a.py"
    inside.write_text("def f(): pass\n", encoding="utf-8")
    assert read_skeleton(inside, home_only=True).text
    outside = tmp_path / "b.py"
    outside.write_text("def g(): pass\n", encoding="utf-8")
    link = isolated_home / "link.py"
    link.symlink_to(outside)
    for p in (outside, link, isolated_home / ".." / outside.parent.name / "b.py"):
        with pytest.raises(UsageError, match="outside"):
            read_skeleton(p, home_only=True)


def _read_turn(store, path, uid="r"):
    return store.get(store.append("assistant", [
        {"type": "tool_use", "id": uid, "name": "Read", "input": {"file_path": str(path)}},
        {"type": "tool_result", "tool_use_id": uid, "content": "..."},
    ]))


def test_manifest_fresh_stale_gone(tmp_path):
    a, b, c = (tmp_path / n for n in ("a.py", "b|c.py", "c.py"))
    for f in (a, b, c):
        f.write_text("x = 1\n" * 100, encoding="utf-8")
    store = TurnStore(tmp_path / "t.sqlite")
    state = ToolState()
    tr = state.file_tracker  # created on first use, then the same tracker for the session
    assert state.file_tracker is tr and tr.manifest() == ""
    tr.observe([_read_turn(store, a, "1"), _read_turn(store, b, "2"), _read_turn(store, c, "3")])
    assert "| fresh |" in tr.manifest() and tr.manifest().count("| fresh |") == 3
    b.write_text("y = 2\n", encoding="utf-8")
    c.unlink()
    os.utime(a, ns=(1, 1))  # touched, same bytes: still fresh
    rows = {Path(r["path"]).name: r for r in tr.rows()}
    assert rows["a.py"]["status"] == "fresh"
    assert rows["b|c.py"]["status"] == "STALE" and rows["b|c.py"]["size"] == 6
    assert rows["c.py"]["status"] == "gone"
    assert rows["a.py"]["tokens"] == 150
    text = tr.manifest()
    assert "b\\|c.py" in text and "| path | size | mtime | status | ~tokens |" in text


def test_agent_writes_refresh_a_tracked_file(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("old\n", encoding="utf-8")
    store = TurnStore(tmp_path / "t.sqlite")
    tr = FileTracker()
    tr.observe([_read_turn(store, f)])
    f.write_text("new content\n", encoding="utf-8")
    edit = store.get(store.append("assistant", [
        {"type": "tool_use", "id": "e", "name": "Edit", "input": {"file_path": str(f), "old_string": "old", "new_string": "new content"}},
        {"type": "tool_result", "tool_use_id": "e", "content": "ok"},
    ]))
    assert tr.rows()[0]["status"] == "STALE"
    tr.observe([edit])
    assert tr.rows()[0]["status"] == "fresh"
    other = tmp_path / "never_read.py"
    tr.observe([store.get(store.append("assistant", [
        {"type": "tool_use", "id": "w", "name": "Write", "input": {"file_path": str(other), "content": "z"}},
        {"type": "tool_result", "tool_use_id": "w", "content": "ok"}]))])
    assert len(tr.files) == 1  # writes alone do not add a file to the manifest


def test_a_refused_or_unanswered_read_never_reaches_the_manifest(tmp_path, isolated_home):
    """Audit 4: a Read the gate refused (outside $HOME, denied, answered n) still put the file's size, mtime
    and later changes into the system prompt, and Mnemara hashed the file it was not allowed to read."""
    outside = tmp_path / "outside.txt"
    outside.write_text("secret " * 100, encoding="utf-8")
    inside = isolated_home / "ok.py"
    inside.write_text("x = 1\n", encoding="utf-8")
    store = TurnStore(tmp_path / "t.sqlite")
    tr = FileTracker()
    refused = "Read refused: %s resolves to %s, outside $HOME (file_tool_home_only is on)" % (outside, outside)
    tr.observe([store.get(store.append("assistant", [
        {"type": "tool_use", "id": "denied", "name": "Read", "input": {"file_path": str(outside)}},
        {"type": "tool_result", "tool_use_id": "denied", "content": refused, "is_error": True},
        {"type": "tool_use", "id": "cut", "name": "Read", "input": {"file_path": str(outside)}},  # no result: never ran
        {"type": "tool_use", "id": "fine", "name": "Read", "input": {"file_path": str(inside)}},
        {"type": "tool_result", "tool_use_id": "fine", "content": "x = 1", "is_error": False},
    ]))])
    assert list(tr.files) == [str(inside)]
    assert str(outside) not in tr.manifest() and str(inside) in tr.manifest()
