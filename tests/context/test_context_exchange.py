"""/export and /import: exact round trip into a fresh instance; refusals leave everything as it was."""
from __future__ import annotations

import hashlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mnemara.core.config import Config
from mnemara.context import exchange
from tests.sample_session import fill_store
from mnemara.core.errors import UsageError
from mnemara.store.instance import Instance
from mnemara.store.turns import TurnStore


def _rows(store):
    return [(t.id, t.role, t.blocks, t.tokens, t.created_at, t.pin_label, t.slot_pos, t.evicted, t.protected, t.meta)
            for t in store.history()]


def _digest(*paths):
    return [hashlib.sha256(p.read_bytes()).hexdigest() if p.exists() else None for p in paths]


@pytest.fixture
def source(tmp_path):
    inst = Instance.create("src")
    role = tmp_path / "role.md"
    role.write_text("# Role\nBe terse.\n```\nfenced ``` inside\n````\n", encoding="utf-8")
    cfg = Config.load(inst.config_path)
    cfg.role_doc_path = str(role)
    cfg.max_window_turns = 7
    cfg.compress_repeated_reads = True
    cfg.save(inst.config_path)
    store = TurnStore(inst.turns_path)
    store.upsert_slot("hp", "system", "HP: 73 / 100")
    fill_store(store, turns=8)
    store.append("user", "tricky text\n```\n````python\nno newline at end")
    store.append("assistant", [{"type": "text", "text": "with extra key", "citations": []}], meta={"cost": 0.01})
    store.upsert_slot("mood", "assistant", [{"type": "text", "text": ""}])
    store.move_slot("mood", 0)
    store.evict([2, 3])
    store.set_blocks(5, store.get(5).blocks, protected=True)
    yield inst, store
    store.close()


def test_round_trip_into_a_fresh_instance_gives_same_rows_pins_and_config(source, tmp_path):
    inst, store = source
    out = tmp_path / "session.md"
    cfg = Config.load(inst.config_path)
    exchange.write_export(out, exchange.export_markdown(exchange.select_for_export(store), cfg, "src"))
    text = out.read_text(encoding="utf-8")
    assert text.startswith(exchange.MARKER) and "HP: 73 / 100" in text and "Be terse." in text

    fresh = Instance.create("dst")
    with TurnStore(fresh.turns_path) as dst:
        result = exchange.import_export(out, dst, fresh.config_path, fresh.root)
        assert result.kept_ids and result.rows == len(store.history())
        assert _rows(dst) == _rows(store)
        assert [t.pin_label for t in dst.pinned()] == ["mood", "hp"]
    assert Config.load(fresh.config_path) == cfg


def test_export_last_n_keeps_pins(source, tmp_path):
    _inst, store = source
    rows = exchange.select_for_export(store, last=3)
    live = store.live_rows()
    assert [t.id for t in rows if not t.pinned] == [t.id for t in live[-3:]]
    assert {t.pin_label for t in rows if t.pinned} == {"hp", "mood"}
    with pytest.raises(UsageError):
        exchange.select_for_export(store, last=0)


def test_import_into_a_used_store_appends_and_evicts_live_rows(source, tmp_path):
    inst, store = source
    out = tmp_path / "s.md"
    exchange.write_export(out, exchange.export_markdown(store.history(), Config.load(inst.config_path)))
    other = Instance.create("other")
    with TurnStore(other.turns_path) as dst:
        old = dst.append("user", "already here")
        dst.upsert_slot("hp", "system", "HP: 1 / 100")
        res = exchange.import_export(out, dst, other.config_path, other.root)
        assert not res.kept_ids
        assert dst.get(old).evicted and dst.get(old).text == "already here"
        assert [t.text for t in dst.pinned()] == ["HP: 73 / 100", ""]  # slot updated in place, new one added
        assert len(dst.history()) == 2 + len(store.history()) - 1
    with TurnStore(Instance.create("other2").turns_path) as dst2:
        dst2.append("user", "occupied")
        exchange.import_export(out, dst2, tmp_path / "c.json", tmp_path)
        assert [t.pin_label for t in dst2.pinned()] == ["mood", "hp"]  # exported slot order, not id order


def test_role_doc_restored_beside_instance_when_original_is_gone(source, tmp_path):
    inst, store = source
    out = tmp_path / "s.md"
    exchange.write_export(out, exchange.export_markdown(store.history(), Config.load(inst.config_path)))
    (tmp_path / "role.md").unlink()
    fresh = Instance.create("fresh2")
    with TurnStore(fresh.turns_path) as dst:
        res = exchange.import_export(out, dst, fresh.config_path, fresh.root)
    assert res.role_doc_path == str(fresh.root / "role.md")
    assert (fresh.root / "role.md").read_text(encoding="utf-8").startswith("# Role\nBe terse.")
    assert Config.load(fresh.config_path).role_doc_path == str(fresh.root / "role.md")


def _good_export(source, tmp_path):
    inst, store = source
    out = tmp_path / "good.md"
    exchange.write_export(out, exchange.export_markdown(store.history(), Config.load(inst.config_path)))
    return out.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "mutate,line_hint",
    [
        (lambda t: "# My notes\nhello\n", "line 1: not a Mnemara export"),
        (lambda t: t.replace("mnemara-export v1", "mnemara-export v2", 1), "line 1: export format v2 is not supported"),
        (lambda t: "", "line 1: not a Mnemara export"),
        (lambda t: t.replace("\n", "\r\n"), "line 1: the file has CRLF (Windows) line endings"),
        (lambda t: t.replace('"max_window_turns": 7', '"max_window_turns": -3'), "max_window_turns"),
        (lambda t: t.replace('"max_window_turns": 7', '"max_window_turns": 7,,'), "invalid JSON in config"),
        (lambda t: t.replace("## turn 3 · assistant", "## turn 3 · robot"), "does not match its '## turn' heading"),
        (lambda t: t.replace("## turn 3 · assistant", "## turn 5 · assistant"), "does not match"),
        (lambda t: t.replace('"role":"user"', '"role":"user","x":1', 1), "exactly the keys"),
        (lambda t: t.replace("```json block", "```yaml", 1), "expected a ```text or ```json block fence"),
        (lambda t: t.rsplit("```", 1)[0], "never closed"),
        (lambda t: t + "\nstray prose\n", "expected a ``` fenced block"),
        (lambda t: t.replace("## turn 3 · assistant", "### turn three"), "expected a ``` fenced block"),
        (lambda t: t.replace("## role doc", "## role"), "expected '## role doc'"),
        (lambda t: t.replace('"type":"tool_use"', '"type":7', 1), "string 'type'"),
        (lambda t: t.replace('"pin_label":"hp"', '"pin_label":"../bad"'), "invalid slot label"),
    ],
)
def test_malformed_or_foreign_import_is_refused_with_its_line_and_nothing_changes(source, tmp_path, mutate, line_hint):
    text = mutate(_good_export(source, tmp_path))
    bad = tmp_path / "bad.md"
    bad.write_text(text, encoding="utf-8")
    target = Instance.create("victim")
    with TurnStore(target.turns_path) as dst:
        dst.append("user", "keep me")
    before = _digest(target.turns_path, target.config_path, target.root / "role.md")
    with TurnStore(target.turns_path) as dst:
        with pytest.raises(UsageError) as err:
            exchange.import_export(bad, dst, target.config_path, target.root)
    msg = err.value.message
    assert line_hint in msg and "line " in msg and "\n" not in msg
    lineno = int(msg.split("line ", 1)[1].split(":", 1)[0])
    assert 1 <= lineno <= text.count("\n") + 1
    assert _digest(target.turns_path, target.config_path, target.root / "role.md") == before


def test_binary_missing_and_folder_refused(tmp_path):
    inst = Instance.create("x")
    binfile = tmp_path / "b.md"
    binfile.write_bytes(b"\xff\xfe\x00garbage")
    with TurnStore(inst.turns_path) as store:
        for path, hint in ((binfile, "not UTF-8"), (tmp_path / "nope.md", "no such file"), (tmp_path, "not a file")):
            with pytest.raises(UsageError, match=hint):
                exchange.import_export(path, store, inst.config_path, inst.root)


def test_export_refuses_to_overwrite_a_foreign_file_or_write_into_a_missing_folder(tmp_path):
    precious = tmp_path / "notes.md"
    precious.write_text("my notes", encoding="utf-8")
    with pytest.raises(UsageError, match="refusing to overwrite"):
        exchange.write_export(precious, exchange.MARKER + "\n")
    assert precious.read_text(encoding="utf-8") == "my notes"
    with pytest.raises(UsageError, match="does not exist"):
        exchange.write_export(tmp_path / "no" / "x.md", "x")
    with pytest.raises(UsageError, match="folder"):
        exchange.write_export(tmp_path, "x")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
nasty_text = st.text(alphabet=st.sampled_from(list("ab `\n\r\t#<>-!{}é🙂\u2028")), max_size=60)
blocks = st.one_of(
    nasty_text.map(lambda t: {"type": "text", "text": t}),
    nasty_text.map(lambda t: {"type": "thinking", "thinking": t, "signature": "s"}),
    st.builds(lambda i, n, inp: {"type": "tool_use", "id": i, "name": n, "input": inp},
              st.text(max_size=8), st.sampled_from(["Read", "Edit", "Bash"]), st.dictionaries(st.text(max_size=6), json_values, max_size=3)),
    st.builds(lambda c, e: {"type": "tool_result", "tool_use_id": "t", "content": c, "is_error": e}, nasty_text, st.booleans()),
)
rows = st.lists(st.tuples(st.sampled_from(["user", "assistant", "system"]), st.lists(blocks, max_size=4),
                          st.dictionaries(st.text(max_size=5), json_values, max_size=2)), min_size=1, max_size=6)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=rows, pins=st.lists(st.booleans(), min_size=6, max_size=6), evicted=st.lists(st.booleans(), min_size=6, max_size=6))
def test_round_trip_is_exact_for_any_content(tmp_path_factory, rows, pins, evicted):
    folder = tmp_path_factory.mktemp("rt")
    with TurnStore(folder / "a.sqlite") as src:
        for i, (role, blocks_, meta) in enumerate(rows):
            rid = src.append(role, blocks_, meta)
            if pins[i]:
                src.pin(rid, f"slot-{i}")
            elif evicted[i]:
                src.evict([rid])
        text = exchange.export_markdown(src.history(), Config())
        doc = exchange.parse_export(text)
        with TurnStore(folder / "b.sqlite") as dst:
            dst.import_rows(doc.rows, keep_ids=True)
            assert _rows(dst) == _rows(src)


def test_import_refuses_links_special_and_oversize_files_naming_each(tmp_path, monkeypatch):
    """Issue 25: an export reached through a link, a pipe (reading it would hang) or a file over the cap."""
    import os

    real = tmp_path / "real.md"
    real.write_text("<!-- mnemara-export v1 -->\n", encoding="utf-8")
    link = tmp_path / "link.md"
    link.symlink_to(real)
    pipe = tmp_path / "pipe.md"
    os.mkfifo(pipe)
    inst = Instance.create("y")
    with TurnStore(inst.turns_path) as store:
        for path, hint in ((link, "link.md: refused: a symbolic link"), (pipe, "pipe.md: refused: a special file")):
            with pytest.raises(UsageError, match=hint):
                exchange.import_export(path, store, inst.config_path, inst.root)
        monkeypatch.setattr(exchange, "MAX_IMPORT_BYTES", 10)
        with pytest.raises(UsageError, match="real.md: refused: .* bytes, over the"):
            exchange.import_export(real, store, inst.config_path, inst.root)
