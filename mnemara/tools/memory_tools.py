"""Wiki, RAG, graph and role-proposal tools: thin adapters over :mod:`mnemara.memory`.

Every handler answers a JSON object and never raises: bad input gives
``{"ok": false, "error": "<one line>"}``, a missing or broken backend
``{"ok": false, "error": "RAG backend unavailable: ..."}`` (or ``Graph``).
LanceDB and Kuzu are imported only when a tool of theirs runs.
"""
from __future__ import annotations

from typing import Any, Callable

from mnemara.errors import BackendUnavailable, MnemaraError
from mnemara.tools import ToolContext, ToolSpec

_STR = {"type": "string"}
_OBJ = {"type": "object"}
_PROPS_JSON = {"type": "string", "description": "The properties as a JSON object in text (same as properties)."}


def _safe(backend: str, func: Callable[[ToolContext, dict[str, Any]], dict[str, Any]]):
    """Wrap a handler: user errors and backend failures become ``ok: false`` answers."""

    def handler(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
        try:
            back = _backends(ctx)
            if backend == "Graph":
                with back.using_graph():
                    answer = func(ctx, args or {})
            elif backend == "RAG":
                with back.rag_lock:
                    answer = func(ctx, args or {})
            else:
                answer = func(ctx, args or {})
            return {"ok": True, **answer} if "ok" not in answer else answer
        except BackendUnavailable as exc:  # off in the config, missing or broken (RagUnavailable, ...)
            return {"ok": False, "error": f"{backend or 'backend'} backend unavailable: {exc.message}"}
        except MnemaraError as exc:
            return {"ok": False, "error": exc.message}
        except Exception as exc:  # a surprise: say what it was, never crash the turn
            return {"ok": False, "error": f"{backend or 'tool'} failed: {type(exc).__name__}: {exc}"}

    handler.__name__ = func.__name__
    return handler


def _backends(ctx: ToolContext):
    from mnemara.memory.surfaces import backends_for

    return backends_for(ctx.instance, ctx.config, ctx.state)


def _arg(args: dict[str, Any], name: str, kind: type | tuple[type, ...], default: Any = ...) -> Any:
    from mnemara.errors import UsageError

    if name not in args or args[name] is None:
        if default is ...:
            raise UsageError(f"missing argument {name!r}")
        return default
    value = args[name]
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
        names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise UsageError(f"argument {name!r} must be of type {names}")
    return value


# -- wiki -----------------------------------------------------------------------------
def wiki_read(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    from mnemara.memory.wiki import read_page

    page = read_page(ctx.instance.wiki_dir, _arg(args, "path", str))
    return {"path": f"wiki/{page.slug}.md", "content": page.text, "tags": page.tags}


def wiki_write(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    from mnemara.memory.surfaces import wiki_write as write

    return write(ctx.instance, ctx.config, _arg(args, "path", str), _arg(args, "content", str),
                 _arg(args, "mode", str, "replace"), ctx.state)


def wiki_list(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    from mnemara.memory.wiki import list_pages

    pages = list_pages(ctx.instance.wiki_dir, _arg(args, "prefix", str, ""))
    return {"pages": pages, "count": len(pages)}


# -- RAG ------------------------------------------------------------------------------
def rag_index(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    stats = _backends(ctx).rag().index_text(
        _arg(args, "text", str), _arg(args, "kind", str, "manual"), _arg(args, "source_path", str, ""),
        _arg(args, "category", str, ""))
    return {"indexed": stats["added"], "replaced": stats["removed"], "embedding": stats.get("embedding", {})}


def rag_query(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    from mnemara.memory.status import query_active

    kind = _arg(args, "kind", str, None)
    return query_active(_backends(ctx).rag(), ctx.instance.memory_dir, _arg(args, "question", str),
                        _arg(args, "k", int, 5), kind or None, _arg(args, "include_superseded", bool, False))


# -- graph ----------------------------------------------------------------------------
def _properties(args: dict[str, Any]) -> dict[str, Any] | None:
    """``properties`` (an object) or the spec's ``properties_json`` (a JSON object as text); not both."""
    import json

    from mnemara.errors import UsageError

    props = _arg(args, "properties", dict, None)
    text = _arg(args, "properties_json", (str, dict), None)
    if text is None:
        return props
    if props is not None:
        raise UsageError("give properties or properties_json, not both")
    if isinstance(text, str):
        try:
            text = json.loads(text) if text.strip() else {}
        except json.JSONDecodeError as exc:
            raise UsageError(f"properties_json is not valid JSON: {exc.msg} at column {exc.colno}") from None
    if not isinstance(text, dict):
        raise UsageError("properties_json must be a JSON object")
    return text


def graph_add_node(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    return _backends(ctx).graph().add_node(_arg(args, "label", str), _properties(args), _arg(args, "id", str, None))


def graph_add_edge(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    return _backends(ctx).graph().add_edge(_arg(args, "from_id", str), _arg(args, "to_id", str),
                                           _arg(args, "relationship", str), _properties(args))


def graph_query(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    return _backends(ctx).graph().query(_arg(args, "cypher", str), _arg(args, "params", dict, None),
                                        allow_write=_arg(args, "write", bool, False))


def graph_neighbors(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    return _backends(ctx).graph().neighbors(_arg(args, "node_id", str), _arg(args, "depth", int, 1),
                                            _arg(args, "relationship", str, None))


def graph_match(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    import json

    from mnemara.errors import UsageError

    pattern = _arg(args, "pattern_json", (str, dict))
    if isinstance(pattern, str):
        try:
            pattern = json.loads(pattern)
        except json.JSONDecodeError as exc:
            raise UsageError(f"pattern_json is not valid JSON: {exc.msg} at column {exc.colno}") from None
    return _backends(ctx).graph().match(pattern, _arg(args, "limit", int, 50))


def graph_shortest_path(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    return _backends(ctx).graph().shortest_path(_arg(args, "from_id", str), _arg(args, "to_id", str),
                                                _arg(args, "max_depth", int, 10))


# -- proposals -------------------------------------------------------------------------
def propose_role_amendment(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    from mnemara.memory.proposals import propose_role_amendment as propose

    path = propose(ctx.instance.role_proposals_dir, _arg(args, "title", str), _arg(args, "rationale", str),
                   _arg(args, "proposed_text", str))
    return {"path": f"role_proposals/{path.name}", "status": "pending",
            "note": "the role doc is unchanged; a human reviews proposals with /proposals"}


def _schema(required: list[str], **props: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": required, "additionalProperties": False}


def _rag_on(cfg: Any) -> bool:
    return bool(cfg.rag_enabled)


def _graph_on(cfg: Any) -> bool:
    return bool(cfg.graph_enabled)


def specs() -> list[ToolSpec]:
    node_id = {"type": "string", "description": "a node id, e.g. entity:lease manager"}
    return [
        ToolSpec("wiki_read", "Read a wiki page (wiki/<path>.md).",
                 _schema(["path"], path={**_STR, "description": "page slug, slashes allowed, e.g. patterns/loader_traps"}),
                 _safe("", wiki_read), "WikiRead"),
        ToolSpec("wiki_write", "Write a wiki page (mode replace or append). Optional frontmatter 'tags:' links the "
                 "page to tag nodes in the graph. The page is indexed for rag_query.",
                 _schema(["path", "content"], path=_STR, content=_STR,
                         mode={"type": "string", "enum": ["replace", "append"]}),
                 _safe("", wiki_write), "WikiWrite"),
        ToolSpec("wiki_list", "List wiki page slugs, optionally under a prefix.",
                 _schema([], prefix=_STR), _safe("", wiki_list), "WikiList"),
        ToolSpec("rag_index", "Index free text for rag_query. The same source_path (or the same text) replaces.",
                 _schema(["text"], text=_STR, kind=_STR, source_path=_STR, category=_STR),
                 _safe("RAG", rag_index), "RagIndex", _rag_on),
        ToolSpec("rag_query", "Search memory notes, wiki pages and indexed text (keyword BM25 fused with vectors "
                 "when an embedder answers). Each hit shows its per-channel ranks and scores.",
                 _schema(["question"], question=_STR, k={"type": "integer", "minimum": 1, "maximum": 100},
                         kind={**_STR, "description": "memory, wiki, manual or a kind given to rag_index"},
                         include_superseded={"type": "boolean", "description": "Also return superseded and "
                                             "deprecated notes (marked with their status)."}),
                 _safe("RAG", rag_query), "RagQuery", _rag_on),
        ToolSpec("graph_add_node", "Add (or update, same id) a node of the property graph.",
                 _schema(["label"], label=_STR, properties=_OBJ, properties_json=_PROPS_JSON, id=_STR),
                 _safe("Graph", graph_add_node), "GraphWrite", _graph_on),
        ToolSpec("graph_add_edge", "Add an edge between two existing nodes; the same (from, relationship, to) "
                 "updates its properties.",
                 _schema(["from_id", "to_id", "relationship"], from_id=node_id, to_id=node_id, relationship=_STR,
                         properties=_OBJ, properties_json=_PROPS_JSON),
                 _safe("Graph", graph_add_edge), "GraphWrite", _graph_on),
        ToolSpec("graph_query", "Run one Cypher statement over Node/Edge with $parameters. Read-only unless "
                 "write is true.",
                 _schema(["cypher"], cypher=_STR, params=_OBJ, write={"type": "boolean"}),
                 _safe("Graph", graph_query), "GraphQuery", _graph_on),
        ToolSpec("graph_neighbors", "Nodes within depth hops (1-5) of a node, nearest first.",
                 _schema(["node_id"], node_id=node_id, depth={"type": "integer", "minimum": 1, "maximum": 5},
                         relationship=_STR),
                 _safe("Graph", graph_neighbors), "GraphRead", _graph_on),
        ToolSpec("graph_match", "Find nodes ({label, id, properties}) or edges ({from, relationship, to}) matching "
                 "a JSON pattern.",
                 _schema(["pattern_json"], pattern_json={"type": ["string", "object"]},
                         limit={"type": "integer", "minimum": 1, "maximum": 500}),
                 _safe("Graph", graph_match), "GraphRead", _graph_on),
        ToolSpec("graph_shortest_path", "Shortest path (either direction) between two nodes.",
                 _schema(["from_id", "to_id"], from_id=node_id, to_id=node_id,
                         max_depth={"type": "integer", "minimum": 1, "maximum": 30}),
                 _safe("Graph", graph_shortest_path), "GraphRead", _graph_on),
        ToolSpec("propose_role_amendment", "Propose a change to your role doc for a human to review "
                 "(writes role_proposals/<timestamp>_<slug>.md; the role doc itself is never changed).",
                 _schema(["title", "rationale", "proposed_text"], title=_STR, rationale=_STR, proposed_text=_STR),
                 _safe("", propose_role_amendment), "ProposeRoleAmendment"),
    ]
