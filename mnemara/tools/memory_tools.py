"""Wiki, RAG, graph and role-proposal tools: thin adapters over :mod:`mnemara.memory`.

Declared with :func:`mnemara.tools.declare.declare` (bad arguments answer
``{"ok": false, "error": "<one line>"}`` before any backend is opened); a missing
or broken backend answers ``{"ok": false, "error": "RAG backend unavailable: ..."}``
(or ``Graph``). LanceDB and Kuzu are imported only when a tool of theirs runs.
"""
from __future__ import annotations

import json
from typing import Any, Callable, Literal, TypeVar

from pydantic import Field, model_validator

from mnemara.core.errors import BackendUnavailable, MnemaraError
from mnemara.tools import ToolContext, ToolSpec
from mnemara.tools.declare import ToolArgs, declare

NODE_ID = "a node id, e.g. entity:lease manager"
A = TypeVar("A", bound=ToolArgs)


TypedHandler = Callable[[ToolContext, A], dict[str, Any]]  # a handler taking its validated argument model


def _guarded(backend: str, func: TypedHandler[A]) -> TypedHandler[A]:
    """Run a handler (its arguments already validated) holding its backend; a backend failure is an answer.

    ``backend`` is ``"RAG"``, ``"Graph"`` or ``""`` (files only). A refusal
    (:class:`MnemaraError`) is left to :func:`declare`; a surprise is named, never raised.
    """

    def handler(ctx: ToolContext, args: A) -> dict[str, Any]:
        try:
            back = _backends(ctx)
            if backend == "Graph":
                with back.using_graph():
                    answer = func(ctx, args)
            elif backend == "RAG":
                with back.rag_lock:
                    answer = func(ctx, args)
            else:
                answer = func(ctx, args)
            return {"ok": True, **answer} if "ok" not in answer else answer
        except BackendUnavailable as exc:  # off in the config, missing or broken (RagUnavailable, ...)
            return {"ok": False, "error": f"{backend or 'backend'} backend unavailable: {exc.message}"}
        except MnemaraError:
            raise
        except Exception as exc:  # a surprise: say what it was, never crash the turn
            return {"ok": False, "error": f"{backend or 'tool'} failed: {type(exc).__name__}: {exc}"}

    handler.__name__ = func.__name__
    return handler


def _backends(ctx: ToolContext) -> Any:
    from mnemara.memory.surfaces import backends_for

    return backends_for(ctx.instance, ctx.config, ctx.state)


# -- argument models (schema, validation and error text) ----------------------------------
class WikiReadArgs(ToolArgs):
    path: str = Field(description="page slug, slashes allowed, e.g. patterns/loader_traps")


class WikiWriteArgs(ToolArgs):
    path: str
    content: str
    mode: Literal["replace", "append"] = "replace"


class WikiListArgs(ToolArgs):
    prefix: str = ""


class RagIndexArgs(ToolArgs):
    text: str
    kind: str = "manual"
    source_path: str = ""
    category: str = ""


class RagQueryArgs(ToolArgs):
    question: str
    k: int = Field(5, ge=1, le=100)
    kind: str | None = Field(None, description="memory, wiki, manual or a kind given to rag_index")
    include_superseded: bool = Field(False, description="Also return superseded and deprecated notes "
                                                        "(marked with their status).")


def _parsed_json(text: str, name: str) -> Any:
    """``text`` read as JSON; a ``ValueError`` naming the argument and the spot otherwise."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{name} is not valid JSON: {exc.msg} at column {exc.colno}") from None


class _Properties(ToolArgs):
    properties: dict[str, Any] | None = None
    properties_json: str | dict[str, Any] | None = Field(
        None, description="The properties as a JSON object in text (same as properties).")

    @model_validator(mode="after")
    def _one_object(self) -> "_Properties":
        """``properties`` or ``properties_json`` (a JSON object, as text or not); not both."""
        given = self.properties_json
        if given is None:
            return self
        if self.properties is not None:
            raise ValueError("give properties or properties_json, not both")
        value = (_parsed_json(given, "properties_json") if given.strip() else {}) if isinstance(given, str) else given
        if not isinstance(value, dict):
            raise ValueError("properties_json must be a JSON object")
        self.properties = value
        return self

    def merged(self) -> dict[str, Any] | None:
        """The node's or edge's properties, whichever argument gave them."""
        return self.properties


class GraphAddNodeArgs(_Properties):
    label: str
    id: str | None = None


class GraphAddEdgeArgs(_Properties):
    from_id: str = Field(description=NODE_ID)
    to_id: str = Field(description=NODE_ID)
    relationship: str


class GraphQueryArgs(ToolArgs):
    cypher: str
    params: dict[str, Any] | None = None
    write: bool = False


class GraphNeighborsArgs(ToolArgs):
    node_id: str = Field(description=NODE_ID)
    depth: int = Field(1, ge=1, le=5)
    relationship: str | None = None


class GraphMatchArgs(ToolArgs):
    pattern_json: str | dict[str, Any]
    limit: int = Field(50, ge=1, le=500)

    @model_validator(mode="after")
    def _reads_pattern(self) -> "GraphMatchArgs":
        if isinstance(self.pattern_json, str):
            self.pattern_json = _parsed_json(self.pattern_json, "pattern_json")
        return self


class GraphShortestPathArgs(ToolArgs):
    from_id: str = Field(description=NODE_ID)
    to_id: str = Field(description=NODE_ID)
    max_depth: int = Field(10, ge=1, le=30)


class ProposeRoleAmendmentArgs(ToolArgs):
    title: str
    rationale: str
    proposed_text: str


# -- wiki -----------------------------------------------------------------------------
def wiki_read(ctx: ToolContext, args: WikiReadArgs) -> dict[str, Any]:
    from mnemara.memory.wiki import read_page

    page = read_page(ctx.instance.wiki_dir, args.path)
    return {"path": f"wiki/{page.slug}.md", "content": page.text, "tags": page.tags}


def wiki_write(ctx: ToolContext, args: WikiWriteArgs) -> dict[str, Any]:
    from mnemara.memory.surfaces import wiki_write as write

    return write(ctx.instance, ctx.config, args.path, args.content, args.mode, ctx.state)


def wiki_list(ctx: ToolContext, args: WikiListArgs) -> dict[str, Any]:
    from mnemara.memory.wiki import list_pages

    pages = list_pages(ctx.instance.wiki_dir, args.prefix)
    return {"pages": pages, "count": len(pages)}


# -- RAG ------------------------------------------------------------------------------
def rag_index(ctx: ToolContext, args: RagIndexArgs) -> dict[str, Any]:
    stats = _backends(ctx).rag().index_text(args.text, args.kind, args.source_path, args.category)
    return {"indexed": stats["added"], "replaced": stats["removed"], "embedding": stats.get("embedding", {})}


def rag_query(ctx: ToolContext, args: RagQueryArgs) -> dict[str, Any]:
    from mnemara.memory.status import query_active

    return query_active(_backends(ctx).rag(), ctx.instance.memory_dir, args.question, args.k, args.kind or None,
                        args.include_superseded)


# -- graph ----------------------------------------------------------------------------
def graph_add_node(ctx: ToolContext, args: GraphAddNodeArgs) -> dict[str, Any]:
    result: dict[str, Any] = _backends(ctx).graph().add_node(args.label, args.merged(), args.id)
    return result


def graph_add_edge(ctx: ToolContext, args: GraphAddEdgeArgs) -> dict[str, Any]:
    result: dict[str, Any] = _backends(ctx).graph().add_edge(args.from_id, args.to_id, args.relationship,
                                                             args.merged())
    return result


def graph_query(ctx: ToolContext, args: GraphQueryArgs) -> dict[str, Any]:
    result: dict[str, Any] = _backends(ctx).graph().query(args.cypher, args.params, allow_write=args.write)
    return result


def graph_neighbors(ctx: ToolContext, args: GraphNeighborsArgs) -> dict[str, Any]:
    result: dict[str, Any] = _backends(ctx).graph().neighbors(args.node_id, args.depth, args.relationship)
    return result


def graph_match(ctx: ToolContext, args: GraphMatchArgs) -> dict[str, Any]:
    pattern: Any = args.pattern_json  # read as JSON by the model; Graph.match refuses what is not an object
    result: dict[str, Any] = _backends(ctx).graph().match(pattern, args.limit)
    return result


def graph_shortest_path(ctx: ToolContext, args: GraphShortestPathArgs) -> dict[str, Any]:
    result: dict[str, Any] = _backends(ctx).graph().shortest_path(args.from_id, args.to_id, args.max_depth)
    return result


# -- proposals -------------------------------------------------------------------------
def propose_role_amendment(ctx: ToolContext, args: ProposeRoleAmendmentArgs) -> dict[str, Any]:
    from mnemara.memory.proposals import propose_role_amendment as propose

    path = propose(ctx.instance.role_proposals_dir, args.title, args.rationale, args.proposed_text)
    return {"path": f"role_proposals/{path.name}", "status": "pending",
            "note": "the role doc is unchanged; a human reviews proposals with /proposals"}


def specs() -> list[ToolSpec]:
    return [
        declare("wiki_read", "Read a wiki page (wiki/<path>.md).", WikiReadArgs, _guarded("", wiki_read)),
        declare("wiki_write", "Write a wiki page (mode replace or append). Optional frontmatter 'tags:' links the "
                "page to tag nodes in the graph. The page is indexed for rag_query.", WikiWriteArgs,
                _guarded("", wiki_write)),
        declare("wiki_list", "List wiki page slugs, optionally under a prefix.", WikiListArgs, _guarded("", wiki_list)),
        declare("rag_index", "Index free text for rag_query. The same source_path (or the same text) replaces.",
                RagIndexArgs, _guarded("RAG", rag_index)),
        declare("rag_query", "Search memory notes, wiki pages and indexed text (keyword BM25 fused with vectors "
                "when an embedder answers). Each hit shows its per-channel ranks and scores.",
                RagQueryArgs, _guarded("RAG", rag_query)),
        declare("graph_add_node", "Add (or update, same id) a node of the property graph.", GraphAddNodeArgs,
                _guarded("Graph", graph_add_node)),
        declare("graph_add_edge", "Add an edge between two existing nodes; the same (from, relationship, to) "
                "updates its properties.", GraphAddEdgeArgs, _guarded("Graph", graph_add_edge)),
        declare("graph_query", "Run one Cypher statement over Node/Edge with $parameters. Read-only unless "
                "write is true.", GraphQueryArgs, _guarded("Graph", graph_query)),
        declare("graph_neighbors", "Nodes within depth hops (1-5) of a node, nearest first.", GraphNeighborsArgs,
                _guarded("Graph", graph_neighbors)),
        declare("graph_match", "Find nodes ({label, id, properties}) or edges ({from, relationship, to}) matching "
                "a JSON pattern.", GraphMatchArgs, _guarded("Graph", graph_match)),
        declare("graph_shortest_path", "Shortest path (either direction) between two nodes.",
                GraphShortestPathArgs, _guarded("Graph", graph_shortest_path)),
        declare("propose_role_amendment", "Propose a change to your role doc for a human to review "
                "(writes role_proposals/<timestamp>_<slug>.md; the role doc itself is never changed).",
                ProposeRoleAmendmentArgs, _guarded("", propose_role_amendment)),
    ]
