"""The lookup index a write finds its copies and neighbours in (memory/.note_index.sqlite): it
follows the day files (appends and hand edits), rebuilds itself from junk, and `mnemara forget`
leaves no copy of a forgotten note in it."""
from __future__ import annotations

from datetime import datetime, timezone

from mnemara.core.config import Config
from mnemara.memory.dedupe import assess
from mnemara.memory.note_index import INDEX_FILE, NoteIndex
from mnemara.memory.notes import append_note
from tests.memory_support import call, context, make_instance

DAY = datetime(2026, 5, 4, 9, tzinfo=timezone.utc)


def test_a_write_finds_copies_and_neighbours_through_the_index_and_follows_hand_edits(tmp_path) -> None:
    memory = tmp_path / "memory"
    path, _ = append_note(memory, "The queue lives on mq-1.", "fact", when=DAY)
    append_note(memory, "Invoices are kept for ten years.", "fact", when=DAY)
    assert assess(memory, "the queue lives on MQ-1").duplicate is None  # "MQ-1" is an identifier: its case counts
    assert assess(memory, "the QUEUE lives on mq-1").duplicate is not None
    assert (memory / INDEX_FILE).is_file()
    with NoteIndex.open(memory) as index:
        assert index.sync() == 0  # nothing changed since the last write
        assert [a.text for a in index.closest(["queue", "mq"], 5)] == ["The queue lives on mq-1."]
    path.write_text(path.read_text(encoding="utf-8").replace("mq-1", "mq-2"), encoding="utf-8")  # a hand edit
    assert assess(memory, "The queue lives on mq-1.").duplicate is None
    check = assess(memory, "The queue lives on mq-1.")
    assert [c.atom.text for c in check.conflicts] == ["The queue lives on mq-2."]


def test_a_junk_index_is_rebuilt_and_the_answer_is_the_same(tmp_path) -> None:
    memory = tmp_path / "memory"
    append_note(memory, "The queue lives on mq-1.", "fact", when=DAY)
    (memory / INDEX_FILE).write_bytes(b"junk-not-a-database-" * 50)
    assert assess(memory, "The queue lives on mq-1.").duplicate is not None
    with NoteIndex.open(memory) as index:
        assert len(index.same_key("the queue lives on mq-1")) == 1


def test_forget_drops_the_index_so_no_copy_of_the_note_stays_on_disk(mnemara_home) -> None:
    from mnemara.memory.forget import execute, plan_forget

    inst, cfg = make_instance("ni", rag_embedder="none", graph_enabled=False)
    secret = "The vault unseal phrase is velvet-otter-42."
    call(context(inst, cfg), "write_memory", text="Deploys run on Tuesdays.")
    call(context(inst, cfg), "write_memory", text=secret)
    call(context(inst, cfg), "write_memory", text="Backups run nightly.")  # its lookup indexes the secret
    assert any(secret.encode() in p.read_bytes() for p in inst.memory_dir.glob(INDEX_FILE + "*"))
    plan = plan_forget(inst.root, secret)
    assert not [p for p in plan.found_elsewhere if INDEX_FILE in p]
    receipt = execute(inst, Config.load(inst.config_path), plan)
    assert receipt["note_index_dropped"] is True and receipt["still_on_disk"] == []
    assert not list(inst.memory_dir.glob(INDEX_FILE + "*"))
    assert call(context(inst, cfg), "write_memory", text="Deploys run on Tuesdays.")["written"] is False


def test_a_link_planted_as_the_index_is_never_written_through_and_the_write_still_checks(tmp_path) -> None:
    memory = tmp_path / "memory"
    append_note(memory, "The queue lives on mq-1.", "fact", when=DAY)
    target = tmp_path / "elsewhere.sqlite"
    target.write_bytes(b"someone else's file")
    (memory / INDEX_FILE).symlink_to(target)
    assert assess(memory, "The queue lives on mq-1.").duplicate is not None  # every note read instead
    assert [c.atom.text for c in assess(memory, "The queue lives on mq-7.").conflicts] == ["The queue lives on mq-1."]
    assert target.read_bytes() == b"someone else's file"
