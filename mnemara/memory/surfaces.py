"""Write-to-all: one memory or wiki write reaches every surface that is on.

The file write (``memory/YYYY-MM-DD.md``, ``wiki/<slug>.md``) is the primary
action and the truth. Indexing it in RAG and linking it in the graph follow;
when either backend is off, missing or broken the write still succeeds and the
answer says what happened to each surface::

    {"ok": true, "file": "memory/2026-04-27.md", ...,
     "rag": {"ok": false, "error": "RAG backend unavailable: ..."},
     "graph": {"ok": true, "edges": 2}}

Graph conventions (other modules rely on them): a memory note is the node
``note:<note id>`` (label ``memory_atom``; before note ids: ``memory:<day>@<ts>#<offset>``), an entity it ``applies_to`` is
``entity:<name lower-cased>`` (label ``entity``); a wiki page is ``wiki:<slug>``
(label ``wiki_page``) and each frontmatter tag ``tag:<tag lower-cased>``
(label ``tag``), joined by ``tagged`` edges.
"""
from __future__ import annotations

import atexit
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Protocol

from mnemara.core.debuglog import log_event
from mnemara.core.errors import BackendUnavailable, UsageError
from mnemara.memory.notes import Atom, validate_category, write_note
from mnemara.memory.wiki import normalize_slug, page_tags, write_page

if TYPE_CHECKING:
    from mnemara.core.config import Config
    from mnemara.store.instance import Instance
    from mnemara.memory.graph.store import Graph
    from mnemara.memory.search.rag import RagIndex

MAX_APPLIES_TO = 20
RELEASE_AFTER = 1.5  # seconds of graph inactivity before the Kuzu file is closed


class BackendOff(BackendUnavailable):
    """A backend is switched off in the config (not an error; reported as skipped)."""


class MemoryBackends:
    """Lazily created RAG index and graph of one instance (held in a session's :class:`BackendsHolder`)."""

    def __init__(self, instance: "Instance", config: "Config") -> None:
        self.instance = instance
        self.config = config
        self._rag: "RagIndex | None" = None
        self._rag_key: tuple[Any, ...] = ()
        self._graph: "Graph | None" = None
        self.rag_lock = threading.RLock()  # tools run in worker threads; one backend call at a time
        self.graph_lock = threading.RLock()
        self.release_after = RELEASE_AFTER
        self._release_timer: threading.Timer | None = None
        self._exit_hook = False

    @contextmanager
    def using_rag(self) -> Iterator["RagIndex"]:
        with self.rag_lock:
            yield self.rag()

    @contextmanager
    def using_graph(self) -> Iterator["Graph"]:
        """The graph for one call; its file is released soon after for other processes."""
        with self.graph_lock:
            self._cancel_release()
            try:
                yield self.graph()
            finally:
                self.release_soon()

    def release_soon(self) -> None:
        """Release the graph after ``release_after`` idle seconds (at once when 0).

        Opening and closing Kuzu costs tens of milliseconds or more, so a burst
        of graph calls shares one open database; when the agent goes quiet the
        file lock is dropped so ``mnemara replay`` or another process can open it.
        """
        with self.graph_lock:
            self._cancel_release()
            if self.release_after <= 0:
                self.release()
                return
            if not self._exit_hook:  # close cleanly if the process ends inside the idle window
                atexit.register(self.release)
                self._exit_hook = True
            timer = threading.Timer(self.release_after, self.release)
            timer.daemon = True
            timer.start()
            self._release_timer = timer

    def _cancel_release(self) -> None:
        if self._release_timer is not None:
            self._release_timer.cancel()
            self._release_timer = None

    def rag(self) -> "RagIndex":
        if not self.config.rag_enabled:
            raise BackendOff("rag_enabled is false in config.json")
        key = (self.config.rag_embedder, self.config.rag_embed_url, self.config.rag_embed_model, self.config.rag_auto_index_memory,
               self.config.rag_auto_index_wiki)
        if self._rag is None or key != self._rag_key:  # config edits apply to the next call
            from mnemara.memory.search.rag import RagIndex

            self._rag = RagIndex.for_instance(self.instance, self.config)
            self._rag_key = key
        return self._rag

    def graph(self) -> "Graph":
        if not self.config.graph_enabled:
            raise BackendOff("graph_enabled is false in config.json")
        if self._graph is None:
            from mnemara.memory.graph.store import Graph

            self._graph = Graph(self.instance.graph_dir)
        return self._graph

    def release(self) -> None:
        """Close the graph so other processes can open its file (it reopens on next use).

        A session calls it when it closes: a pending idle release would otherwise leave the file
        open in this process, where Kuzu's lock does not keep ``forget`` or ``replay`` out."""
        with self.graph_lock:
            self._cancel_release()
            if self._graph is not None:
                self._graph.close()


class BackendsHolder(Protocol):
    """Whatever keeps one caller's backends open between calls: a session's ``ToolState``, or
    :class:`HeldBackends` for a process with no session (the recall worker)."""

    memory_backends: "MemoryBackends | None"


class HeldBackends:
    """A :class:`BackendsHolder` of its own, for a caller with no session; :meth:`close` releases them."""

    def __init__(self) -> None:
        self.memory_backends: MemoryBackends | None = None

    def close(self) -> None:
        if self.memory_backends is not None:
            self.memory_backends.release()


def backends_for(instance: "Instance", config: "Config", state: "BackendsHolder | None" = None) -> MemoryBackends:
    """The backends held in ``state`` (a session's tool state), created on first use."""
    if state is None:  # a one-off caller (a CLI command, a script): nothing to share, close at once
        once = MemoryBackends(instance, config)
        once.release_after = 0
        return once
    cached = state.memory_backends
    if cached is None or cached.instance.root != instance.root:
        cached = state.memory_backends = MemoryBackends(instance, config)
    cached.config = config
    return cached


def normalize_applies_to(value: object) -> list[str]:
    """``applies_to`` as a list of entity names (a string may hold several, comma-separated)."""
    if value is None or value == "" or value == []:
        return []
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
        raise UsageError("applies_to must be a string or a list of strings")
    names = list(dict.fromkeys(" ".join(v.split()) for v in items if v.strip()))
    if len(names) > MAX_APPLIES_TO:
        raise UsageError(f"applies_to names at most {MAX_APPLIES_TO} entities")
    for name in names:
        if len(name) > 100 or any(ord(c) < 32 for c in name):
            raise UsageError(f"invalid applies_to entity {name[:40]!r}: 1-100 printable characters")
    return names


def write_memory(instance: "Instance", config: "Config", text: str, category: str | None = None,
                 applies_to: object = None, state: "BackendsHolder | None" = None) -> dict[str, Any]:
    """Append a note, mirror ``wiki/<rest>`` categories to the wiki, index it and link it.

    Bad input raises :class:`UsageError` before anything is written.
    """
    if not isinstance(text, str) or not text.strip():
        raise UsageError("refusing to write an empty note")
    category = validate_category(category)
    entities = normalize_applies_to(applies_to)
    atom, wiki_rel = note_files(instance, text, category)
    wiki_slug = wiki_rel[len("wiki/"):-len(".md")] if wiki_rel else None
    path = atom.file
    result: dict[str, Any] = {"ok": True, "file": f"memory/{path.name}", "timestamp": atom.timestamp,
                              "category": category, "id": atom.id, "atom_id": atom.id}
    back = backends_for(instance, config, state)
    if wiki_rel:
        result["wiki"] = wiki_rel
    files = [path] + ([instance.wiki_dir / f"{wiki_slug}.md"] if wiki_slug else [])
    result["rag"] = _index(back, files, config.rag_auto_index_memory or bool(wiki_slug and config.rag_auto_index_wiki),
                           instance)
    if entities or wiki_slug:
        result["graph"] = _link_memory(back, atom, entities, category, wiki_slug, instance)
    return result


def note_files(instance: "Instance", text: str, category: str | None) -> tuple[Atom, str | None]:
    """The file part of a memory write, shared by ``write_memory``, ``mnemara note`` and ``/note``.

    Appends the note; a ``wiki/<rest>`` category also appends the text to ``wiki/<rest>.md``.
    Returns the note (with its id) and the wiki page written (``wiki/<slug>.md``) or None.
    A bad category or wiki path is refused before anything is written. Both or neither:
    the wiki page is written first, so when the wiki refuses it (a symlink out of ``wiki/``,
    the page size cap) no note is appended and the caller answers ``ok: false``.
    """
    category = validate_category(category)
    wiki_slug = normalize_slug(category[len("wiki/"):]) if category.startswith("wiki/") else None
    page = write_page(instance.wiki_dir, wiki_slug, text, mode="append") if wiki_slug else None
    atom = write_note(instance.memory_dir, text, category)
    return atom, (f"wiki/{page.slug}.md" if page is not None else None)


def wiki_write(instance: "Instance", config: "Config", path: str, content: str, mode: str = "replace",
               state: "BackendsHolder | None" = None) -> dict[str, Any]:
    """Write a wiki page, then index it and link its frontmatter tags."""
    page = write_page(instance.wiki_dir, path, content, mode)
    tags = page_tags(page.text)
    result: dict[str, Any] = {"ok": True, "path": f"wiki/{page.slug}.md", "bytes": len(page.text.encode("utf-8")),
                              "tags": tags}
    back = backends_for(instance, config, state)
    result["rag"] = _index(back, [page.path], config.rag_auto_index_wiki, instance)
    result["graph"] = _link_page(back, page.slug, tags, instance)
    return result


def _index(back: MemoryBackends, files: list[Path], enabled: bool, instance: "Instance") -> dict[str, Any]:
    if not enabled:
        return {"ok": True, "skipped": "auto-index is off (rag_auto_index_*)"}
    from mnemara.memory.search.rag import RagUnavailable

    try:
        with back.using_rag() as rag:
            stats = rag.catch_up(only=files, embed_budget=64)
    except BackendOff as exc:
        return {"ok": True, "skipped": str(exc)}
    except RagUnavailable as exc:
        log_event(instance.debug_log_path, "rag_unavailable", level="warning", reason=str(exc))
        return {"ok": False, "error": f"RAG backend unavailable: {exc}"}
    return {"ok": True, "added": stats.get("added", 0), "removed": stats.get("removed", 0)}


def _link_memory(back: MemoryBackends, atom: Atom, entities: list[str], category: str, wiki_slug: str | None,
                 instance: "Instance") -> dict[str, Any]:
    from mnemara.memory.graph.store import GraphUnavailable

    try:
        with back.using_graph() as graph:
            return _link_atom(graph, atom, entities, category, wiki_slug)
    except BackendOff as exc:
        return {"ok": True, "skipped": str(exc)}
    except GraphUnavailable as exc:
        log_event(instance.debug_log_path, "graph_unavailable", level="warning", reason=str(exc))
        return {"ok": False, "error": f"Graph backend unavailable: {exc}"}


def _link_atom(graph: "Graph", atom: Atom, entities: list[str], category: str, wiki_slug: str | None) -> dict[str, Any]:
    node = atom.ref
    graph.ensure_node(node, "memory_atom", {"file": f"memory/{atom.file.name}", "timestamp": atom.timestamp,
                                            "category": category, "text": atom.text[:200]})
    graph.set_targets(node, "applies_to", {
        f"entity:{name.lower()}": ("entity", {"name": name}) for name in entities})
    edges = len(entities)
    if wiki_slug:
        graph.set_targets(node, "written_to", {f"wiki:{wiki_slug}": ("wiki_page", {"slug": wiki_slug})})
        edges += 1
    return {"ok": True, "node": node, "edges": edges}


def _link_page(back: MemoryBackends, slug: str, tags: list[str], instance: "Instance") -> dict[str, Any]:
    from mnemara.memory.graph.store import GraphUnavailable

    try:
        with back.using_graph() as graph:
            node = f"wiki:{slug}"
            graph.ensure_node(node, "wiki_page", {"slug": slug, "path": f"wiki/{slug}.md"})
            graph.set_targets(node, "tagged", {f"tag:{tag.lower()}": ("tag", {"name": tag}) for tag in tags})
            return {"ok": True, "node": node, "edges": len(tags)}
    except BackendOff as exc:
        return {"ok": True, "skipped": str(exc)}
    except GraphUnavailable as exc:
        log_event(instance.debug_log_path, "graph_unavailable", level="warning", reason=str(exc))
        return {"ok": False, "error": f"Graph backend unavailable: {exc}"}
