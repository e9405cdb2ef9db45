"""Every in-process tool refuses bad arguments the same way: one clear line, nothing changed.

The tools are called as the model calls them (the declared handler with raw JSON
arguments) on a real instance that already has rows, a pinned slot, a note, a
wiki page, an indexed text and graph nodes. Each refusal must answer
``{"ok": false, "error": <one line>}`` and leave the store, the files, the graph
and the RAG index exactly as they were.
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from mnemara.core.live_config import LiveConfig
from mnemara.memory.notes import append_note
from mnemara.memory.surfaces import backends_for
from mnemara.store.turns import TurnStore
from mnemara.tools import ToolContext, all_specs
from tests.memory_support import make_instance

# (tool, raw arguments, the error it must answer, word for word)
REFUSALS: list[tuple[str, dict[str, Any], str]] = [
    # window tools
    ("inspect_context", {"verbose": True}, "unknown argument 'verbose'"),
    ("list_window", {"limit": 0}, "argument 'limit': input should be greater than or equal to 1"),
    ("list_pinned", {"limit": 3}, "unknown argument 'limit'"),
    ("pin_row", {}, "give row_id (or a segment)"),
    ("pin_row", {"row_id": "1"}, "argument 'row_id' must be of type int"),
    ("unpin_row", {}, "missing argument 'row_id'"),
    ("evict_ids", {}, "give row_ids (or a segment)"),
    ("evict_ids", {"row_ids": "1,2"}, "argument 'row_ids' must be of type array"),
    ("evict_last", {"n": 0}, "argument 'n': input should be greater than or equal to 1"),
    ("evict_since", {"segment": ""}, "give the segment name"),
    ("evict_older_than", {}, "missing argument 'older_than'"),
    ("mark_segment", {"name": 5}, "argument 'name' must be of type str"),
    ("tune_window", {}, "give max_window_turns and/or max_window_tokens"),
    ("tune_window", {"max_window_turns": 1}, "argument 'max_window_turns': input should be greater than or equal to 2"),
    ("log_choice", {"decision": "d"}, "missing argument 'rationale'"),
    # context tools
    ("upsert_slot", {"label": "ok", "role": "robot", "content": "c"},
     "argument 'role': input should be 'user', 'assistant' or 'system'"),
    ("evict_thinking_blocks", {"row_ids": "all"}, "argument 'row_ids' must be of type array"),
    ("evict_tool_use_blocks", {"keep_recent": -1}, "argument 'keep_recent': input should be greater than or equal to 0"),
    ("evict_write_pairs", {"skip_pinned": "yes"}, "argument 'skip_pinned' must be of type bool"),
    ("read_skeleton", {}, "file_path must be a non-empty string"),
    # memory notes and their status
    ("write_memory", {"payload": {}}, "give the note's text (or a payload with an observation)"),
    ("write_memory", {"text": "t", "payload": {"evidence": {"nested": 1}}},
     "payload field 'evidence' must be text, a number or a list of names"),
    ("supersede_memory", {"old": "", "new": "x"}, "argument 'old': string should have at least 1 character"),
    ("deprecate_memory", {"atom": 7}, "argument 'atom' must be of type str"),
    # wiki, RAG, graph, proposals
    ("wiki_read", {}, "missing argument 'path'"),
    ("wiki_write", {"path": "p", "content": "y", "mode": "merge"}, "argument 'mode': input should be 'replace' or 'append'"),
    ("wiki_list", {"prefix": 3}, "argument 'prefix' must be of type str"),
    ("rag_index", {"text": 5}, "argument 'text' must be of type str"),
    ("rag_query", {"question": "x", "k": "5"}, "argument 'k' must be of type int"),
    ("graph_add_node", {"label": "x", "properties_json": "{bad"},
     "properties_json is not valid JSON: Expecting property name enclosed in double quotes at column 2"),
    ("graph_add_node", {"label": "x", "properties_json": "[1]"}, "properties_json must be a JSON object"),
    ("graph_add_edge", {"from_id": "a", "to_id": "b", "relationship": "r", "properties": {}, "properties_json": "{}"},
     "give properties or properties_json, not both"),
    ("graph_query", {"cypher": "MATCH (n:Node) RETURN n", "write": "yes"}, "argument 'write' must be of type bool"),
    ("graph_neighbors", {"node_id": "a", "depth": 9}, "argument 'depth': input should be less than or equal to 5"),
    ("graph_match", {"pattern_json": "{not json"},
     "pattern_json is not valid JSON: Expecting property name enclosed in double quotes at column 2"),
    ("graph_shortest_path", {"from_id": "a"}, "missing argument 'to_id'"),
    ("propose_role_amendment", {"title": "t", "rationale": "r"}, "missing argument 'proposed_text'"),
    # peer tools (NATS; a refusal before any connection)
    ("peer_send", {"to": "eng"}, "missing argument 'payload_json'"),
    ("peer_ack", {"ids": "1,2"}, "argument 'ids' must be of type array"),
]


def _files(root: Path, skip: tuple[Path, ...]) -> dict[str, str]:
    """Every file of the instance by content, except the store, the log and the backends' own folders."""
    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.name.startswith(("turns.sqlite", "debug.log")) \
                and not any(base in path.parents for base in skip):
            out[str(path.relative_to(root))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def _everything(ctx: ToolContext) -> dict[str, Any]:
    inst = ctx.instance
    back = backends_for(inst, ctx.config, ctx.state)
    with back.using_graph() as graph:
        counts = graph.counts()
    with back.using_rag() as rag:
        indexed = rag.status()
    return {"rows": ctx.store.history(), "files": _files(inst.root, (inst.graph_dir, inst.index_dir)),
            "graph": counts, "rag": indexed}


def _handlers() -> dict[str, Any]:
    return {spec.name: spec.handler for spec in all_specs()}


def test_every_tool_has_a_refusal_case() -> None:
    assert {spec.name for spec in all_specs()} == {name for name, _, _ in REFUSALS}


def test_bad_arguments_get_one_clear_line_and_change_nothing(mnemara_home: Path) -> None:
    inst, cfg = make_instance("refusals", read_skeleton_enabled=True)
    with TurnStore(inst.turns_path) as store:
        ctx = ToolContext(instance=inst, live=LiveConfig(inst.config_path, current=cfg), store=store)
        handlers = _handlers()
        for i in range(4):
            store.append("user", f"row {i} " + "x " * 20)
        assert handlers["upsert_slot"](ctx, {"label": "plan", "role": "system", "content": "step 1"})["ok"]
        append_note(inst.memory_dir, "The gateway timeout is 12 s.", "fact")
        assert handlers["wiki_write"](ctx, {"path": "p", "content": "page"})["ok"]
        assert handlers["rag_index"](ctx, {"text": "an indexed text"})["ok"]
        assert handlers["graph_add_node"](ctx, {"label": "entity", "id": "a"})["ok"]
        before = _everything(ctx)
        wrong = []
        for name, raw, error in REFUSALS:
            answer = handlers[name](ctx, dict(raw))
            if answer != {"ok": False, "error": error}:
                wrong.append((name, raw, answer))
        assert wrong == []
        assert _everything(ctx) == before
        backends_for(inst, cfg, ctx.state).release()


def test_a_refused_backend_call_opens_no_backend(mnemara_home: Path) -> None:
    """The arguments are checked before the graph or the index is opened (or created)."""
    inst, cfg = make_instance("fresh")
    with TurnStore(inst.turns_path) as store:
        ctx = ToolContext(instance=inst, live=LiveConfig(inst.config_path, current=cfg), store=store)
        handlers = _handlers()
        assert handlers["graph_match"](ctx, {"pattern_json": "{not json"})["ok"] is False
        assert handlers["rag_query"](ctx, {"question": "x", "k": 0})["ok"] is False
        assert ctx.state.memory_backends is None
        assert not (inst.graph_dir / "graph.kuzu").exists() and not (inst.index_dir / "chunks.lance").exists()
