"""`mnemara reindex`, `/proposals`, and the promise that `mnemara note` stays light."""
from __future__ import annotations

import subprocess
import sys
from datetime import datetime, timezone

from mnemara.commands import dispatch
from mnemara.store.instance import Instance
from mnemara.memory.proposals import list_proposals, propose_role_amendment
from mnemara.memory.search.rag import RagIndex
from tests.conftest import ROOT, cli_env
from tests.memory_support import corrupt_folder, make_instance


def test_note_from_the_shell_is_found_by_rag_and_imports_no_backend(cli) -> None:
    inst, cfg = make_instance()
    rag = RagIndex.for_instance(inst, cfg)
    assert rag.query("quokka")["hits"] == []
    code = ("import sys; from mnemara.cli import main\n"
            "try:\n    main(['note', '--instance', 'mem', 'the', 'quokka', 'smiles'])\n"
            "except SystemExit:\n    pass\n"
            "print(sorted(m for m in ('lancedb', 'kuzu', 'pyarrow') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=cli_env(), cwd=str(ROOT))
    assert out.returncode == 0 and out.stdout.strip().endswith("[]"), out.stdout + out.stderr
    assert "quokka" in rag.query("quokka")["hits"][0]["text"]


def test_reindex_rebuilds_a_corrupt_index(cli) -> None:
    inst, cfg = make_instance(rag_embedder="ollama", rag_embed_url="http://127.0.0.1:9/api/embed")
    assert cli("note", "--instance", "mem", "the", "kraken", "wakes").returncode == 0
    rag = RagIndex.for_instance(inst, cfg)
    assert rag.query("kraken")["hits"]
    corrupt_folder(inst.index_dir)
    done = cli("reindex", "--instance", "mem")
    assert done.returncode == 0, done.stderr
    assert "reindexed mem: 1 chunks from 1 files" in done.stdout and "keyword-only" in done.stdout
    assert RagIndex.for_instance(inst, cfg).query("kraken")["hits"][0]["kind"] == "memory"


def test_reindex_refuses_unknown_or_bad_instances(cli) -> None:
    missing = cli("reindex", "--instance", "ghost")
    assert missing.returncode == 2 and "no instance 'ghost'" in missing.stderr
    bad = cli("reindex", "--instance", "../x")
    assert bad.returncode == 2 and "invalid instance name" in bad.stderr


def test_proposals_command_lists_and_shows(session_factory) -> None:
    inst, _ = make_instance()
    ctx = session_factory(inst.name)
    assert dispatch(ctx, "/proposals").text.startswith("no pending proposals")
    when = datetime(2026, 5, 8, 12, 0, tzinfo=timezone.utc)
    first = propose_role_amendment(inst.role_proposals_dir, "Halt on polling", "loops seen", "Halt.", when=when)
    propose_role_amendment(inst.role_proposals_dir, "Halt on polling", "again", "Halt!", when=when)
    done = inst.role_proposals_dir / "20260101T000000Z_old.md"
    done.write_text("---\nstatus: accepted\ntitle: Old one\n---\nbody\n")
    assert first.name == "20260508T120000Z_halt-on-polling.md"
    res = dispatch(ctx, "/proposals")
    assert res.ok and "2 pending proposal(s)" in res.text and "Old one" not in res.text
    assert "Halt on polling  (20260508T120000Z_halt-on-polling_2.md)" in res.text
    assert "Old one [accepted]" in dispatch(ctx, "/proposals all").text
    shown = dispatch(ctx, "/proposals 1")  # oldest first
    assert shown.ok and "## Rationale\n\nloops seen" in shown.text
    for bad, message in (("/proposals 7", "no pending proposal number 7"), ("/proposals nope", "unknown argument")):
        res = dispatch(ctx, bad)
        assert not res.ok and message in res.text
    assert [p.title for p in list_proposals(inst.role_proposals_dir, None)] == ["Old one", "Halt on polling", "Halt on polling"]


def test_proposal_refusals_write_nothing(tmp_path) -> None:
    import pytest

    from mnemara.core.errors import UsageError

    for args in (("", "r", "t"), ("t", "", "t"), ("t", "r", " "), ("t" * 300, "r", "t")):
        with pytest.raises(UsageError):
            propose_role_amendment(tmp_path / "p", *args)
    assert not (tmp_path / "p").exists() or list((tmp_path / "p").iterdir()) == []


def test_instance_helper_is_isolated(mnemara_home) -> None:
    inst, _ = make_instance("iso")
    assert inst.root.parent == mnemara_home and Instance.open("iso").root == inst.root
