"""Accountable forgetting: remove a note everywhere this instance holds it, with a receipt.

``plan_forget`` finds what a target reaches without changing anything; the
target is a note id (or an id of before note ids, see
:func:`mnemara.memory.notes.find_notes`) or a query, which selects every note
whose normalised text *contains* the normalised query (plain substring, never a
fuzzy ranking: forgetting must be predictable). ``execute`` then, in this order:

1. removes each note from its day file (and its whole entry from
   ``memory/archive`` when asked) through :mod:`mnemara.memory.dayfile`, which
   finds it by id and checks its text first; other notes keep their ids;
2. removes the copy a ``wiki/...`` category mirrored into a wiki page;
3. brings the RAG index in line and rewrites its tables so the old bytes are
   gone from disk (:mod:`scrub`); the note's vectors go too;
4. rewrites the graph without the note's node, its edges and entity/tag
   nodes left with no edge;
5. redacts the text in ``turns.sqlite`` rows (tool calls and results that
   carried it) and vacuums the database (unless ``keep_turns``);
6. drops the note's status entry;
7. reads every file of the instance back, binary ones too, and names in
   ``still_on_disk`` each one that still holds the text (other than those the
   plan said it leaves alone), whatever the steps believed they did.

The receipt (``forget_receipt`` in ``debug.log``) names what was removed and
from where, never the text itself (a SHA-256 and a length stand in for it),
and what forget cannot reach.
"""
from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from mnemara.core.backend_loader import load_backend
from mnemara.core.errors import UsageError
from mnemara.core.fsutil import rewrite_locked
from mnemara.memory import forget_reach as reach
from mnemara.memory.dayfile import drop_notes
from mnemara.memory.note_index import drop_note_index, is_note_index
from mnemara.memory.notes import Atom, all_notes, archive_files, find_notes, is_note_ref, parse_file
from mnemara.memory.search.similarity import normalize
from mnemara.memory.status import chunk_id

if TYPE_CHECKING:
    from mnemara.core.config import Config
    from mnemara.store.instance import Instance

MIN_QUERY = 4
T = TypeVar("T")
GRAPH_LOCK_WAIT = 10.0  # seconds to wait for another process to release the Kuzu file
REDACTED = "[forgotten]"
NOT_REACHABLE = [
    "text already sent to the model provider in earlier turns (their logs, prompt caches)",
    "exports and copies written outside this instance folder (/export files, backups, other instances)",
]


@dataclass
class ForgetPlan:
    target: str
    atoms: list[Atom] = field(default_factory=list)
    archive_included: bool = False
    wiki_pages: list[str] = field(default_factory=list)
    turn_rows: list[int] = field(default_factory=list)
    graph_nodes: list[str] = field(default_factory=list)
    chunks: list[str] = field(default_factory=list)  # memory chunks of the notes found in the RAG index
    manual_chunks: list[str] = field(default_factory=list)  # rag_index entries quoting the text
    found_elsewhere: list[str] = field(default_factory=list)  # other instance files holding the text (untouched)
    keep_turns: bool = False  # the conversation rows, spool and prompt history keep the text
    graph_unread: str | None = None  # why the graph could not be searched for nodes quoting the text

    @property
    def chunk_ids(self) -> list[str]:
        """Every chunk id forget removes: the notes' own (as indexed, or as they would be) and quoting entries."""
        own = self.chunks or [chunk_id(a) for a in self.atoms if not a.archived]
        return list(dict.fromkeys(own + self.manual_chunks))

    def describe(self) -> list[str]:
        lines = [f"forget {len(self.atoms)} note(s):"]
        for a in self.atoms:
            lines.append(f"  {a.id}  ({a.location}, {a.category}): {a.text[:80]!r}")
        lines.append(f"  RAG index chunks: {', '.join(self.chunks + self.manual_chunks) or 'none'}")
        lines.append(f"  graph nodes: {', '.join(self.graph_nodes) or 'none'}")
        if self.graph_unread:
            lines.append(f"  graph NOT searched for other nodes quoting it (cannot read it: {self.graph_unread}); "
                         "a copy there is named after the forget")
        if self.wiki_pages:
            lines.append(f"  wiki pages holding a mirrored copy: {', '.join(self.wiki_pages)}")
        rows = ", ".join(map(str, self.turn_rows))
        lines.append(f"  conversation rows to redact: {len(self.turn_rows)}" + (f" (turns.sqlite ids {rows})" if rows else ""))
        quoting = [p for p in self.found_elsewhere if p.startswith("graph node ")]
        if quoting:
            lines.append(f"  graph node properties quoting it (text redacted): {', '.join(quoting)}")
        untouched = [p for p in self.found_elsewhere if p not in quoting]
        if untouched:
            lines.append(f"  also found (NOT changed): {', '.join(untouched)}")
        for item in self.unreachable():
            lines.append(f"  cannot reach: {item}")
        return lines

    def unreachable(self) -> list[str]:
        out = list(NOT_REACHABLE)
        if not self.archive_included:
            out.append("memory/archive (use --include-archive)")
        return out


def _variants(text: str) -> list[str]:
    """The forms a note's text takes in stored JSON and truncated copies, longest first."""
    forms = {text, json.dumps(text)[1:-1], json.dumps(text, ensure_ascii=False)[1:-1]}
    for cut in (500, 300, 200):
        if len(text) > cut:
            forms |= {text[:cut], json.dumps(text[:cut])[1:-1]}
    return sorted((f for f in forms if len(f) >= MIN_QUERY), key=len, reverse=True)


def _archive_atoms(archive_dir: Path) -> list[Atom]:
    out: list[Atom] = []
    for path in archive_files(Path(archive_dir).parent):
        try:
            out.extend(parse_file(path))
        except (OSError, UnicodeDecodeError):
            continue
    return out


def select_atoms(memory_dir: Path, target: str, include_archive: bool) -> list[Atom]:
    target = (target or "").strip()
    if is_note_ref(target):
        try:
            return find_notes(memory_dir, target, archive=include_archive)
        except UsageError as exc:
            if "memory/archive/" in exc.message and not include_archive:
                raise UsageError(f"{exc.message}; add --include-archive to forget it") from None
            raise
    query = normalize(target)
    if len(query) < MIN_QUERY:
        raise UsageError(f"the query {target!r} is too short to forget by (at least {MIN_QUERY} characters)")
    pool = all_notes(memory_dir, archive=include_archive)
    found = [a for a in pool if query in normalize(a.text)]
    if not found:
        raise UsageError(f"no note contains {target!r}" + ("" if include_archive else " (the archive was not searched)"))
    return found


def plan_forget(root: Path, target: str, *, include_archive: bool = False, keep_turns: bool = False) -> ForgetPlan:
    """What forgetting ``target`` would remove. Reads only."""
    root = Path(root)
    plan = ForgetPlan(target=target, archive_included=include_archive, keep_turns=keep_turns)
    plan.atoms = select_atoms(root / "memory", target, include_archive)
    graph_rows: list[tuple[str, str]] | None = None
    try:
        graph_rows = read_graph_nodes(root, wait=GRAPH_LOCK_WAIT)
    except Exception as exc:
        plan.graph_unread = " ".join(str(exc).split())[:300] or type(exc).__name__
    plan.graph_nodes = _own_nodes(plan.atoms, graph_rows)
    for a in plan.atoms:
        if a.category.startswith("wiki/"):
            page = root / "wiki" / f"{a.category[len('wiki/'):]}.md"
            if page.is_file() and a.text in page.read_text(encoding="utf-8", errors="replace"):
                plan.wiki_pages.append(f"wiki/{a.category[len('wiki/'):]}.md")
    pattern = _reach_pattern(plan)
    if not keep_turns and pattern is not None:  # every row: typed text, answers, tool calls/results, slots
        plan.turn_rows = reach.rows_holding(root / "turns.sqlite", pattern)
    chunk_rows = _chunk_rows(root)
    plan.chunks = _own_chunks(chunk_rows, plan.atoms)
    plan.manual_chunks = _manual_chunks_quoting(chunk_rows, plan.atoms)
    plan.found_elsewhere = _scan_elsewhere(root, plan, keep_turns) + _graph_nodes_quoting(graph_rows, plan)
    return plan


def _chunk_rows(root: Path) -> list[dict[str, Any]]:
    """``id``, ``kind``, ``source`` and ``text`` of every RAG chunk ([] without a readable index)."""
    if not (root / "index").is_dir():
        return []
    try:
        from mnemara.memory.search.rag import RagIndex

        table = RagIndex(root)._chunks()
        if table is None:
            return []
        return table.search().select(["id", "kind", "source", "text"]).limit(10_000_000).to_list()
    except Exception:
        return []


def _own_chunks(rows: list[dict[str, Any]], atoms: list[Atom]) -> list[str]:
    """Ids of the memory chunks holding ``atoms`` (``note:<id>``, or a byte-offset id of before)."""
    refs = {a.ref for a in atoms}
    places = {(a.location, a.text) for a in atoms if not a.archived}
    return sorted(r["id"] for r in rows if r["kind"] == "memory"
                  and (r["id"] in refs or (r["source"], r["text"]) in places))


def _manual_chunks_quoting(rows: list[dict[str, Any]], atoms: list[Atom]) -> list[str]:
    """Ids of ``rag_index`` entries (not memory/wiki files) whose text contains a forgotten note."""
    return sorted(r["id"] for r in rows if r["kind"] not in ("memory", "wiki")
                  and any(v in r["text"] for a in atoms for v in _variants(a.text)))


def graph_nodes_of(root: Path) -> list[tuple[str, str]] | None:
    """``(node id, properties)`` of every graph node; [] without a graph, None when unreadable now."""
    try:
        return read_graph_nodes(root)
    except Exception:
        return None


def read_graph_nodes(root: Path, wait: float = 0.0) -> list[tuple[str, str]]:
    """``(node id, properties)`` of every graph node ([] without a graph); waits up to ``wait``
    seconds for a holder of the file to let go. Raises with the reason when it cannot read them."""
    from mnemara.memory.graph.store import DB_FILE, check_opens, close_database, open_database

    path = root / "graph" / DB_FILE
    if not path.exists():
        return []

    def read() -> list[Any]:
        kuzu = load_backend("kuzu")
        check_opens(kuzu, path)  # a damaged file must not crash forget or migrate
        db = open_database(kuzu, path, read_only=True)
        try:
            conn = kuzu.Connection(db)
            rows: list[Any] = conn.execute("MATCH (n:Node) RETURN n.id, n.properties").get_all()
            conn.close()
        finally:
            close_database(db)
        return rows

    return [(str(nid), str(props or "")) for nid, props in _while_locked(read, wait)]


def _while_locked(step: Callable[[], T], wait: float) -> T:
    """``step()``, tried again for up to ``wait`` seconds while another holder has the graph file locked."""
    deadline = time.monotonic() + wait
    while True:
        try:
            return step()
        except Exception as exc:
            if "lock" not in str(exc).lower() or time.monotonic() >= deadline:
                raise
            time.sleep(0.25)  # a session keeps Kuzu open for a moment after its last graph call


def _own_nodes(atoms: list[Atom], rows: list[tuple[str, str]] | None) -> list[str]:
    """The graph nodes of ``atoms``: ``note:<id>``, and nodes of before note ids matched by file,
    timestamp and text. When the graph cannot be read, the ``note:<id>`` nodes they would have."""
    wanted = list(dict.fromkeys(a.ref for a in atoms))
    if rows is None:
        return wanted
    out = []
    for nid, props in rows:
        if nid in wanted:
            out.append(nid)
        elif nid.startswith("memory:"):
            try:
                data = json.loads(props)
            except json.JSONDecodeError:
                continue
            if isinstance(data, dict) and any(
                    Path(str(data.get("file", ""))).name == a.file.name and data.get("timestamp") == a.timestamp
                    and a.text.startswith(str(data.get("text", ""))[:200]) for a in atoms):
                out.append(nid)
    return out


def _graph_nodes_quoting(rows: list[tuple[str, str]] | None, plan: ForgetPlan) -> list[str]:
    """Graph nodes other than the notes' own whose properties quote the text (forget redacts it there)."""
    own = set(plan.graph_nodes)
    pattern = _reach_pattern(plan)
    if pattern is None:
        return []
    return [f"graph node {nid}" for nid, props in rows or [] if nid not in own and pattern.search(props or "")]


def _scan_elsewhere(root: Path, plan: ForgetPlan, keep_turns: bool) -> list[str]:
    """Instance files outside what forget rewrites that still contain the text."""
    handled = {a.file.resolve() for a in plan.atoms} | {(root / p).resolve() for p in plan.wiki_pages}

    def skip(path: Path) -> bool:  # the indexes and the graph are rewritten; their copies are found by id
        return (path.resolve() in handled or root / "index" in path.parents or root / "graph" in path.parents
                or is_note_index(path) or (not keep_turns and _conversation_file(root, path)))

    return reach.files_holding(root, _reach_needles(plan), skip)


def _conversation_file(root: Path, path: Path) -> bool:
    """turns.sqlite (and its WAL), the spool, the prompt history and the recorded API calls: what forget
    redacts unless keep_turns."""
    if path.parent == root / reach.REQUESTS_DIR:
        return True
    return path.parent == root and (path.name.startswith("turns.sqlite") or path.name in reach.OWN_FILES)


def _still_on_disk(root: Path, plan: ForgetPlan, told: list[str]) -> list[str]:
    """Every instance file that holds the text after forget, other than those the user was told it leaves:
    the check that the receipt is true, whatever a step believed it did."""
    left_alone = {root / place for place in told if not place.startswith("graph node ")}
    return reach.files_holding(root, _reach_needles(plan), lambda path: path in left_alone)


def _check_unchanged(path: Path, atoms: list[Atom]) -> None:
    try:
        current = {(a.id, a.text) for a in parse_file(path)}
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path.name}: {exc}; nothing forgotten") from None
    for atom in atoms:
        if (atom.id, atom.text) not in current:
            raise UsageError(f"note {atom.id} changed in {atom.location} since the plan; nothing forgotten, run it again")


def _remove_from_wiki(page: Path, texts: list[str]) -> None:
    def transform(old: str) -> str | None:
        new = old
        for text in texts:
            new = new.replace(text, "")
        return new if new != old else None

    rewrite_locked(page, transform)


def _reach_needles(plan: ForgetPlan) -> list[str]:
    """The text as forget_reach looks for it: each note's text, and the query when forgetting by one."""
    target = plan.target.strip()
    return reach.needles_for([a.text for a in plan.atoms], None if is_note_ref(target) else target)


def _reach_pattern(plan: ForgetPlan) -> Any:
    """:func:`_reach_needles` as one case-insensitive pattern (None when no form is long enough)."""
    return reach.pattern_of(_reach_needles(plan))


def execute(instance: Instance, config: Config, plan: ForgetPlan) -> dict[str, Any]:
    """Carry out ``plan``; returns the receipt (also written to debug.log)."""
    from mnemara.core.debuglog import log_event
    from mnemara.memory.status import forget_fingerprints

    root = Path(instance.root)
    receipt: dict[str, Any] = {"target_sha256": hashlib.sha256(plan.target.encode()).hexdigest(), "removed": [],
                               "rag": {}, "graph": {}, "turn_rows_redacted": 0, "wiki_pages": plan.wiki_pages}
    by_file: dict[Path, list[Atom]] = {}
    for a in plan.atoms:
        by_file.setdefault(a.file, []).append(a)
        receipt["removed"].append({"id": a.id, "atom": a.id, "file": str(a.file.relative_to(root)), "category": a.category,
                                   "text_sha256": hashlib.sha256(a.text.encode()).hexdigest(), "chars": len(a.text)})
    for path, atoms in by_file.items():  # every note still as planned, or nothing changes anywhere
        _check_unchanged(path, atoms)
    for path, atoms in by_file.items():
        drop_notes(path, atoms)
    receipt["note_index_dropped"] = drop_note_index(root / "memory")  # a cache holding the text: rebuilt on next write
    for page in plan.wiki_pages:
        _remove_from_wiki(root / page, [a.text for a in plan.atoms])
    receipt["rag"] = _forget_in_rag(instance, config, plan)
    receipt["graph"] = _forget_in_graph(root, plan)
    pattern = _reach_pattern(plan)
    if not plan.keep_turns and pattern is not None:  # forget_reach: rows, then the spool and prompt history
        if plan.turn_rows:
            receipt.update(reach.redact_turns(root / "turns.sqlite", plan.turn_rows, pattern))
            receipt["turn_rows_redacted"] = len(plan.turn_rows)
        receipt["files_redacted"] = reach.scrub_own_files(root, pattern)
    receipt["status_entries_dropped"] = forget_fingerprints(root / "memory", {a.id for a in plan.atoms})
    redacted = receipt["graph"].get("properties_redacted", []) if receipt["graph"].get("ok") else []
    receipt["found_elsewhere_not_changed"] = [p for p in plan.found_elsewhere if p not in redacted]
    receipt["cannot_reach"] = plan.unreachable()
    receipt["still_on_disk"] = _still_on_disk(root, plan, receipt["found_elsewhere_not_changed"])
    log_event(instance.debug_log_path, "forget_receipt", **receipt)
    return receipt


def _forget_in_rag(instance: Instance, config: Config, plan: ForgetPlan) -> dict[str, Any]:
    root = Path(instance.root)
    if not (root / "index").is_dir() or not any((root / "index").iterdir()):
        return {"ok": True, "skipped": "no index", "chunks_deleted": 0}
    try:
        from mnemara.memory.search.rag import RagIndex
        from mnemara.memory.scrub import purge_lance

        rag = RagIndex.for_instance(instance, config)
        files = sorted({a.file for a in plan.atoms if a.file.parent.name != "archive"})
        files += [root / p for p in plan.wiki_pages]
        rag.catch_up(only=files)
        rag.close()  # purge_lance rewrites the tables under it
        stats = purge_lance(root / "index", plan.chunk_ids)
        planned = plan.chunks + plan.manual_chunks
        left = sorted(set(planned) & {r["id"] for r in _chunk_rows(root)})
        stats["chunks_deleted"] = len(planned) - len(left)  # catch_up may already have dropped some
        out = {"ok": not left, "chunks": planned, **stats}
        if left:
            out.update(error=f"chunks still in the index: {', '.join(left)}", left="run `mnemara reindex`")
        return out
    except Exception as exc:  # the files are already clean; say what is left
        return {"ok": False, "error": f"RAG backend unavailable: {type(exc).__name__}: {exc}",
                "left": "run `mnemara reindex` once the index works again"}


def _quoting_nodes(plan: ForgetPlan) -> list[str]:
    """Other graph nodes whose properties quote the text (the graph rewrite redacts it there)."""
    return [place for place in plan.found_elsewhere if place.startswith("graph node ")]


def _forget_in_graph(root: Path, plan: ForgetPlan) -> dict[str, Any]:
    from mnemara.memory.graph.store import DB_FILE

    path = root / "graph" / DB_FILE
    if not path.exists():
        return {"ok": True, "skipped": "no graph", "nodes_deleted": 0}
    if not plan.graph_nodes and not _quoting_nodes(plan) and not plan.graph_unread:
        return {"ok": True, "skipped": "no graph node holds these notes", "nodes_deleted": 0}
    from mnemara.memory.scrub import rewrite_graph

    pattern = _reach_pattern(plan)
    scrub = reach.graph_scrubber(pattern) if pattern is not None else None
    try:
        done = _while_locked(lambda: rewrite_graph(path, plan.graph_nodes, scrub=scrub), GRAPH_LOCK_WAIT)
    except Exception as exc:
        return {"ok": False, "error": f"Graph backend unavailable: {type(exc).__name__}: {exc}",
                "left": f"graph nodes {', '.join(plan.graph_nodes)} (close the session holding the graph "
                        "and delete them with graph_query, allow_write)"}
    redacted = [f"graph node {nid}" for nid in done.pop("redacted_nodes", [])]
    return {"ok": True, "nodes": plan.graph_nodes, "properties_redacted": redacted, **done}
