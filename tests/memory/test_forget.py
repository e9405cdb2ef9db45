"""mnemara forget: the note leaves the day file, the RAG index (bytes too), the graph and turns together."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from mnemara.core.config import update_config
from mnemara.core.debuglog import read_events
from mnemara.store.instance import Instance
from mnemara.memory.notes import append_note
from mnemara.memory.status import all_atoms
from mnemara.testing.ollama import FakeOllama
from mnemara.context.tool_state import ToolState
from tests.conftest import run_cli

SECRET = "ZEBRAQUARTZ"


def _holders(root: Path, needle: str = SECRET) -> list[str]:
    out = []
    for folder, _, files in os.walk(root):
        for name in files:
            if not Path(folder, name).is_file():
                continue
            data = Path(folder, name).read_bytes()
            if needle.encode() in data or needle.lower().encode() in data:
                out.append(str(Path(folder, name).relative_to(root)))
    return sorted(out)


@pytest.fixture
def populated(isolated_home: Path):
    from mnemara.core.config import Config
    from mnemara.memory.search.rag import RagIndex
    from mnemara.memory.surfaces import write_memory
    from mnemara.store.turns import TurnStore

    with FakeOllama() as fake:
        inst = Instance.create("f")
        update_config(inst.config_path, rag_embedder="ollama", rag_embed_url=fake.url("/api/embed"))
        cfg = Config.load(inst.config_path)
        append_note(inst.memory_dir, "Deploys run on Tuesdays after the standup.", "fact")
        secret = f"The {SECRET} lease timeout is 37 seconds."
        state = ToolState()
        result = write_memory(inst, cfg, secret, "insight", applies_to=["lease manager"], state=state)
        assert result["graph"]["ok"] and result["rag"]["ok"], result
        from mnemara.memory.surfaces import backends_for

        backends_for(inst, cfg, state).release()  # close Kuzu now, not after its idle delay
        append_note(inst.memory_dir, "The lease manager retries three times.", "fact")
        with TurnStore(inst.turns_path) as store:
            store.append("user", "remember the lease timeout")
            store.append("assistant", [{"type": "tool_use", "id": "t1", "name": "mcp__mnemara__write_memory",
                                        "input": {"text": secret}},
                                       {"type": "tool_result", "tool_use_id": "t1", "content": json.dumps({"ok": True})}])
        rag = RagIndex.for_instance(inst, cfg)
        hits = rag.query(f"{SECRET} lease timeout")["hits"]
        assert SECRET in hits[0]["text"] and "vector" in hits[0]["channels"]
        yield inst, fake


def test_forget_leaves_no_trace(populated) -> None:
    inst, fake = populated
    assert {"memory", "index", "graph", "turns"} <= {h.split("/")[0].split(".")[0] for h in _holders(inst.root)}
    before = {a.id: a.text for a in all_atoms(inst.memory_dir)}
    dry = run_cli("forget", "--instance", "f", SECRET, "--dry-run")
    assert dry.returncode == 0 and "dry run: nothing changed" in dry.stdout and "graph nodes: note:" in dry.stdout
    assert "memory/archive (use --include-archive)" in dry.stdout
    out = run_cli("forget", "--instance", "f", SECRET, "--yes")
    assert out.returncode == 0, out.stdout + out.stderr
    assert _holders(inst.root) == []
    after = {a.id: a.text for a in all_atoms(inst.memory_dir)}
    assert after == {k: v for k, v in before.items() if SECRET not in v}  # other ids unchanged
    receipt = [e for e in read_events(inst.debug_log_path) if e["event"] == "forget_receipt"][-1]
    assert receipt["removed"][0]["file"].startswith("memory/") and receipt["rag"]["ok"] and receipt["graph"]["ok"]
    assert receipt["turn_rows_redacted"] == 1 and receipt["graph"]["nodes_deleted"] == 2  # the atom + orphan entity
    assert any("model provider" in c for c in receipt["cannot_reach"])
    # everything else still works: recall of the other notes, the graph, the window
    from mnemara.core.config import Config
    from mnemara.memory.search.rag import RagIndex

    hits = RagIndex.for_instance(inst, Config.load(inst.config_path)).query("lease manager retries")["hits"]
    assert hits and "retries three times" in hits[0]["text"] and all(SECRET not in h["text"] for h in hits)
    shown = run_cli("show", "--instance", "f")
    assert shown.returncode == 0 and "[forgotten]" in shown.stdout


def test_confirmation_declined_and_dry_run_change_nothing(populated) -> None:
    inst, _ = populated
    def snap() -> dict[str, bytes]:
        return {str(p): p.read_bytes() for p in inst.root.rglob("*") if p.is_file() and p.name != "debug.log"}
    before = snap()
    assert "nothing changed" in run_cli("forget", "--instance", "f", SECRET, input="n\n").stdout
    assert run_cli("forget", "--instance", "f", SECRET, "--dry-run").returncode == 0
    assert snap() == before


def test_archive_only_when_asked(isolated_home: Path) -> None:
    inst = Instance.create("a")
    append_note(inst.memory_dir, f"{SECRET} in the live notes", "fact")
    append_note(inst.archive_dir, f"{SECRET} in the archive", "fact")
    out = run_cli("forget", "--instance", "a", SECRET, "--yes")
    assert out.returncode == 0, out.stderr
    assert _holders(inst.root) == ["memory/archive/" + next(inst.archive_dir.glob("*.md")).name]
    out = run_cli("forget", "--instance", "a", SECRET, "--yes", "--include-archive")
    assert out.returncode == 0 and _holders(inst.root) == []


@pytest.mark.parametrize("target,message", [
    ("ab", "too short"),
    ("nothing like this anywhere", "no note contains"),
    ("memory:2030-01-01.md#0", "does not exist"),
])
def test_refusals_change_nothing(isolated_home: Path, target: str, message: str) -> None:
    inst = Instance.create("r")
    append_note(inst.memory_dir, "A note that stays.", "fact")
    before = {p.name: p.read_bytes() for p in inst.memory_dir.glob("*.md")}
    out = run_cli("forget", "--instance", "r", target, "--yes")
    assert out.returncode == 2 and message in out.stderr, out.stderr
    assert {p.name: p.read_bytes() for p in inst.memory_dir.glob("*.md")} == before


def test_manual_index_entries_go_and_other_graph_nodes_are_reported(isolated_home: Path) -> None:
    from mnemara.core.config import Config
    from mnemara.memory.graph.store import Graph
    from mnemara.memory.search.rag import RagIndex

    inst = Instance.create("m")
    secret = f"The {SECRET} relay uses port 7411."
    append_note(inst.memory_dir, secret, "fact")
    append_note(inst.memory_dir, "An unrelated note about relays.", "fact")
    rag = RagIndex.for_instance(inst, Config.load(inst.config_path))
    rag.index_text(f"Copied from memory: {secret}", kind="manual", source_path="clip-1")
    rag.index_text("A manual entry about something else.", kind="manual", source_path="clip-2")
    graph = Graph(inst.graph_dir)
    graph.add_node("quote", {"said": secret}, node_id="quote-1")
    graph.close()
    out = run_cli("forget", "--instance", "m", SECRET, "--yes")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "graph node properties quoting it (text redacted): graph node quote-1" in out.stdout
    assert _holders(inst.root) == []  # the quote's property is redacted in the rewritten graph (issue 13 item 6)
    receipt = [e for e in read_events(inst.debug_log_path) if e["event"] == "forget_receipt"][-1]
    assert "manual:clip-1#0" in receipt["rag"]["chunks"] and receipt["found_elsewhere_not_changed"] == []
    assert receipt["graph"]["properties_redacted"] == ["graph node quote-1"]
    graph = Graph(inst.graph_dir)
    node = graph.get_node("quote-1")
    graph.close()
    assert node is not None and "[forgotten]" in str(node) and SECRET not in str(node)
    assert graph.probes == 0, "Kuzu closed the rewritten file cleanly: it is stamped, no crash probe needed"
    left = RagIndex.for_instance(inst, Config.load(inst.config_path)).query("manual entry something else")["hits"]
    assert left and left[0]["source"] == "manual:clip-2"


def test_forget_waits_for_a_session_to_release_the_graph(isolated_home: Path) -> None:
    import threading

    from mnemara.core.config import Config
    from mnemara.memory.graph.store import Graph
    from mnemara.memory.surfaces import write_memory

    inst = Instance.create("busy")
    cfg = Config.load(inst.config_path)
    state = ToolState()
    write_memory(inst, cfg, f"{SECRET} belongs to the relay team.", "fact", applies_to=["relay"], state=state)
    from mnemara.memory.surfaces import backends_for

    backends_for(inst, cfg, state).release()
    holder = Graph(inst.graph_dir)
    holder.counts()  # opens the file and holds its lock, as a running session does
    timer = threading.Timer(1.5, holder.close)
    timer.start()
    try:
        out = run_cli("forget", "--instance", "busy", SECRET, "--yes")
    finally:
        timer.join()
    assert out.returncode == 0, out.stdout + out.stderr
    assert _holders(inst.root) == []


def test_a_graph_file_that_crashes_kuzu_fails_the_graph_step_not_forget(isolated_home: Path) -> None:
    """forget reads and rewrites the graph without a Graph object: a damaged file is opened by a
    child process first, so the damage that makes Kuzu segfault in-process cannot take forget down."""
    from mnemara.memory.graph.store import Graph

    inst = Instance.create("c")
    append_note(inst.memory_dir, f"The {SECRET} relay uses port 7411.", "fact")
    append_note(inst.memory_dir, "An unrelated note about relays.", "fact")
    graph = Graph(inst.graph_dir)
    for a, b in ("ab", "bc"):
        graph.ensure_node(a, "thing")
        graph.ensure_node(b, "thing")
        graph.add_edge(a, b, "next")
    graph.close()
    db = inst.graph_dir / "graph.kuzu"
    with open(db, "r+b") as fh:  # the damage test_graph shows crashing Kuzu when opened in-process
        fh.seek(4096)
        fh.write(bytes((i * 97 + 13) % 256 for i in range(100_000)))
    damaged = db.read_bytes()
    out = run_cli("forget", "--instance", "c", SECRET, "--yes", subprocess_only=True)
    assert out.returncode == 1, f"forget must end saying a step failed (a crash is a signal): {out.returncode}\n" \
        f"{out.stdout}\n{out.stderr}"
    assert "graph: Graph backend unavailable" in out.stdout and "crashed Kuzu on open" in out.stdout, out.stdout
    assert SECRET not in "".join(p.read_text(encoding="utf-8") for p in inst.memory_dir.glob("*.md")), \
        "the note still left its day file although only the graph step failed"
    assert db.read_bytes() == damaged, "the damaged graph file is left as it was, for the user to move aside"


def test_forget_in_the_process_of_a_session_still_holding_the_graph(isolated_home: Path) -> None:
    """An embedder's session keeps the graph open for an idle spell after a graph call; forget in the
    same process (Kuzu's lock cannot see it there) waits for the release instead of writing under it."""
    from mnemara.core.config import Config
    from mnemara.memory.surfaces import backends_for, write_memory

    inst = Instance.create("same")
    cfg = Config.load(inst.config_path)
    state = ToolState()
    write_memory(inst, cfg, f"{SECRET} belongs to the relay team.", "fact", applies_to=["relay"], state=state)
    backends = backends_for(inst, cfg, state)
    backends.release_after = 1.0
    with backends.using_graph() as graph:
        graph.add_node("vault", {"code": SECRET, "room": "basement"}, "vault-1")  # held until the idle release
    out = run_cli("forget", "--instance", "same", SECRET, "--yes")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "graph node properties quoting it (text redacted): graph node vault-1" in out.stdout
    assert _holders(inst.root) == []
    receipt = [e for e in read_events(inst.debug_log_path) if e["event"] == "forget_receipt"][-1]
    assert receipt["graph"]["properties_redacted"] == ["graph node vault-1"] and receipt["still_on_disk"] == []


def test_a_graph_that_cannot_be_read_is_said_and_what_it_keeps_is_named(isolated_home: Path, monkeypatch) -> None:
    """A graph held by another process past the wait: the plan says the graph was not searched (it
    used to say nothing, and the receipt then read clean), and forget ends naming the file that still
    holds the text, read back from disk."""
    import subprocess
    import sys

    from mnemara.memory import forget
    from mnemara.memory.graph.store import Graph

    inst = Instance.create("held")
    append_note(inst.memory_dir, f"The {SECRET} relay uses port 7411.", "fact")
    graph = Graph(inst.graph_dir)
    graph.add_node("quote", {"said": f"port 7411 of {SECRET}"}, node_id="quote-1")
    graph.close()
    monkeypatch.setattr(forget, "GRAPH_LOCK_WAIT", 0.5)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import kuzu, sys; db = kuzu.Database(sys.argv[1]); kuzu.Connection(db); "
         "print('held', flush=True); sys.stdin.read()", str(inst.graph_dir / "graph.kuzu")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        out = run_cli("forget", "--instance", "held", SECRET, "--yes")
    finally:
        holder.communicate("", timeout=30)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "graph NOT searched for other nodes quoting it (cannot read it:" in out.stdout and "lock" in out.stdout
    assert "NOT gone: the text is still in graph/graph.kuzu" in out.stderr
    receipt = [e for e in read_events(inst.debug_log_path) if e["event"] == "forget_receipt"][-1]
    assert receipt["still_on_disk"] == ["graph/graph.kuzu"] and not receipt["graph"]["ok"]
    assert SECRET not in "".join(p.read_text(encoding="utf-8") for p in inst.memory_dir.glob("*.md"))


def test_the_receipt_names_a_copy_no_step_knew_of(isolated_home: Path) -> None:
    """The receipt is checked against the disk: a copy that appeared after the plan (here, a file a
    tool wrote meanwhile, binary and past the first read chunk) is named, not reported gone."""
    from mnemara.core.config import Config
    from mnemara.memory import forget_reach
    from mnemara.memory.forget import execute, plan_forget

    inst = Instance.create("late")
    append_note(inst.memory_dir, f"The {SECRET} relay uses port 7411.", "fact")
    (inst.root / "notes").mkdir()
    (inst.root / "notes" / "old.txt").write_text(f"told before: {SECRET.lower()}", encoding="utf-8")
    plan = plan_forget(inst.root, SECRET)
    assert plan.found_elsewhere == ["notes/old.txt"]
    split = forget_reach.CHUNK - 3  # the text straddles the edge of the first chunk
    (inst.root / "notes" / "late.bin").write_bytes(b"\x00" * split + SECRET.encode() + b"\xff\x00")
    receipt = execute(inst, Config.load(inst.config_path), plan)
    assert receipt["still_on_disk"] == ["notes/late.bin"], "a copy the user was told of is not named again"
    assert receipt["found_elsewhere_not_changed"] == ["notes/old.txt"]


def test_the_read_back_passes_over_what_is_not_a_regular_file(isolated_home: Path) -> None:
    """A named pipe in the instance folder would block a reader forever; the read-back checks files only."""
    import threading

    from mnemara.memory import forget_reach

    inst = Instance.create("fifo")
    (inst.root / "notes.txt").write_text(f"a copy: {SECRET}", encoding="utf-8")
    os.mkfifo(inst.root / "pipe")
    found: list[list[str]] = []
    reader = threading.Thread(target=lambda: found.append(
        forget_reach.files_holding(inst.root, [SECRET])), daemon=True)
    reader.start()
    reader.join(timeout=30)
    if reader.is_alive():  # let the blocked reader go before failing
        os.close(os.open(inst.root / "pipe", os.O_WRONLY | os.O_NONBLOCK))
    assert found == [["notes.txt"]], "the read-back blocked on a named pipe"


def test_the_read_back_finds_every_stored_form_in_any_letter_case(tmp_path: Path) -> None:
    from mnemara.memory import forget_reach

    text = "Der Schlüssel liegt unter der Matte"
    files = {
        "upper.txt": text.upper().encode(),  # SCHLÜSSEL: a non-ASCII letter in the other case
        "lower.bin": b"\x00\x01" + text.lower().encode() + b"\xff",
        "escaped.json": json.dumps({"said": text}).encode(),  # \u00fc, as JSON keeps it
        "other.txt": "Der Schlussel liegt unter der Matte".encode(),  # not the same text
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    found = forget_reach.files_holding(tmp_path, forget_reach.needles_for([text]))
    assert found == ["escaped.json", "lower.bin", "upper.txt"]


def test_keep_turns_leaves_the_conversation_as_it_was_and_says_so(populated) -> None:
    inst, _ = populated
    turns_before = _holders(inst.root)
    assert "turns.sqlite" in turns_before
    out = run_cli("forget", "--instance", "f", SECRET, "--yes", "--keep-turns")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "conversation rows to redact: 0" in out.stdout and "also found (NOT changed): " in out.stdout
    assert "turns.sqlite" in out.stdout.split("also found (NOT changed): ")[1].splitlines()[0]
    assert _holders(inst.root) == ["turns.sqlite"], "only the conversation keeps the text"
    receipt = [e for e in read_events(inst.debug_log_path) if e["event"] == "forget_receipt"][-1]
    assert receipt["still_on_disk"] == [] and "turns.sqlite" in receipt["found_elsewhere_not_changed"]
