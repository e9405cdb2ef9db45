"""The stored side of retrieval: LanceDB tables under ``index/``, the manifest, writing, catching up.

The files are the truth. ``index/sources.json`` records size, mtime and hash of
every memory day file and wiki page that was indexed; :meth:`IndexStore.catch_up`
(run before every query and after every write) re-chunks only files whose
size or mtime changed and whose hash differs, and drops sources whose file is
gone. With nothing changed it costs a directory listing and some ``stat`` calls, and no lock.

Each chunk row keeps ``fts_text``, the output of :func:`mnemara.memory.search.tokenize.tokens`,
under LanceDB's full-text index. Embeddings live in a table per model keyed by the hash of
the embedded text, so re-indexing unchanged text never embeds it again and a new model re-embeds.

Between queries the store keeps the table names and open tables (until ``index/`` changes) and
the parsed manifest (until its mtime, size or inode changes); whatever changed less than
:data:`RACY_NS` ago is read again.

Any failure of LanceDB (missing, broken, corrupt folder) raises :class:`RagUnavailable`.
Searching is :mod:`mnemara.memory.search.rag`.
"""
from __future__ import annotations

import hashlib
import json
import re
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Iterable

from mnemara.core.backend_loader import import_failure, load_backend
from mnemara.core.errors import BackendUnavailable, UsageError
from mnemara.core.fsutil import atomic_write_text, locked, private_mkdir, tighten_modes
from mnemara.memory.search import chunking
from mnemara.memory.search.chunking import Chunk
from mnemara.memory.search.embed import EmbedError
from mnemara.memory.notes import day_files
from mnemara.memory.search.tokenize import VERSION as TOKENIZER_VERSION
from mnemara.memory.search.tokenize import fts_text
from mnemara.memory.wiki import list_pages

FTS_COLUMN = "fts_text"
CHUNKS = "chunks"
KIND_RE = re.compile(r"[a-z0-9_-]{1,40}")
MANIFEST = "sources.json"
OPTIMIZE_EVERY = 100  # write operations between compactions
UNINDEXED_LIMIT = 500  # rows outside the full-text index before it is updated
FTS_INDEX = "fts_text_idx"
EMBED_BATCH = 64
QUERY_EMBED_BUDGET = 256  # at most this many pending texts are embedded while answering a query
TEXT_LIMIT = 2000
NOTE_IDS = 2  # memory chunks are named note:<note id>; before, memory:<day>.md#<byte offset>
# A file or folder changed less than this long ago may change again within the same timestamp tick,
# unseen by its (mtime, size, inode): what is read from it then is not kept between queries.
RACY_NS = 2_000_000_000


class RagUnavailable(BackendUnavailable):
    """LanceDB cannot be used; ``str(exc)`` is the reason."""


def _reason(exc: BaseException) -> str:
    return import_failure(exc)


def _lance(module: str = "lancedb") -> Any:
    """LanceDB (or one of its modules, or PyArrow) through the guarded loader."""
    return load_backend(module, RagUnavailable)


def _sql(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _now() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


class IndexStore:
    """The index of one instance as stored: LanceDB tables, the manifest, writing and catching up.
    Cheap to construct; LanceDB opens on first use. Queries are :class:`mnemara.memory.search.rag.RagIndex`."""

    def __init__(
        self,
        root: Path,
        *,
        embedder: Any = None,
        embed_problem: str = "",
        index_memory: bool = True,
        index_wiki: bool = True,
        retry_embedder_after: float = 30.0,
        channel_weights: tuple[float, float] | None = None,
    ) -> None:
        self.root = Path(root)
        self.index_dir = self.root / "index"
        self.memory_dir = self.root / "memory"
        self.wiki_dir = self.root / "wiki"
        self.embedder = embedder
        self.embed_problem = embed_problem or ("" if embedder else "no embedder configured")
        self.index_memory = index_memory
        self.index_wiki = index_wiki
        self.retry_embedder_after = retry_embedder_after
        self._db: Any = None
        self._embed_failed_at = 0.0
        self._pending: set[str] | None = None  # chunk hashes without a vector (None: not yet reconciled)
        self._seen_version: int | None = None
        self._fts_checked = False
        self._names_cache: tuple[tuple[int, int], set[str]] | None = None  # (index/ mtime, inode), tables
        self._open_tables: dict[str, Any] = {}  # kept only while _names_cache holds
        self._manifest_cache: tuple[tuple[int, int, int], dict[str, Any]] | None = None  # (mtime, size, inode)
        self.channel_weights = channel_weights  # (keyword, vector) instead of the embedder's (benches)

    # -- LanceDB access ----------------------------------------------------------
    def _connect(self) -> Any:
        if self._db is None:
            lancedb = _lance()
            try:
                private_mkdir(self.index_dir)
                self._db = lancedb.connect(str(self.index_dir), read_consistency_interval=timedelta(0))
            except Exception as exc:
                raise RagUnavailable(_reason(exc)) from None
        return self._db

    def close(self) -> None:
        """Let go of the LanceDB connection and its open tables, e.g. before something else rewrites
        the index folder; the next search or index call opens it again."""
        self._db = None
        self._forget_tables()
        self._manifest_cache = None

    def _forget_tables(self) -> None:
        self._names_cache = None
        self._open_tables = {}

    def _table_names(self) -> set[str]:
        """The tables in index/. Listed again whenever the folder changed: making or dropping a
        table (by this process or any other) adds or removes a folder there, which moves its mtime."""
        db = self._connect()
        try:
            stat = self.index_dir.stat()
            key: tuple[int, int] | None = (stat.st_mtime_ns, stat.st_ino)
        except FileNotFoundError:
            key = None
        if key is not None and self._names_cache is not None and self._names_cache[0] == key:
            return set(self._names_cache[1])
        names = set(db.list_tables().tables)
        self._forget_tables()
        if key is not None and time.time_ns() - key[0] > RACY_NS:
            self._names_cache = (key, names)
        return set(names)

    def _open(self, name: str) -> Any:
        """The table ``name``, opened once while the table names hold (the connection's consistency
        interval of 0 makes every read of an open table see its newest version)."""
        table = self._open_tables.get(name)
        if table is None:
            table = self._connect().open_table(name)
            if self._names_cache is not None:
                self._open_tables[name] = table
        return table

    def _chunks(self, create: bool = False) -> Any:
        db = self._connect()
        if CHUNKS in self._table_names():
            return self._open(CHUNKS)
        if not create:
            return None
        pa = _lance("pyarrow")
        manifest = self._load_manifest()
        if manifest.get("tokenizer") != TOKENIZER_VERSION:  # a new index is tokenized by this version
            manifest["tokenizer"] = TOKENIZER_VERSION
            self._save_manifest(manifest)

        schema = pa.schema([pa.field(name, pa.string()) for name in
                            ("id", "source", "kind", "category", "path", "title", "text", "search_text",
                             FTS_COLUMN, "hash", "sig", "created_at")])
        self._forget_tables()
        return db.create_table(CHUNKS, schema=schema)

    def _guard(self, func: Any, *args: Any, **kwargs: Any) -> Any:
        """Run ``func`` turning any backend failure into :class:`RagUnavailable`."""
        try:
            return func(*args, **kwargs)
        except (RagUnavailable, UsageError):
            raise
        except Exception as exc:
            raise RagUnavailable(_reason(exc)) from None

    # -- writing -----------------------------------------------------------------------
    def index_text(self, text: str, kind: str = "manual", source_path: str = "", category: str = "") -> dict[str, Any]:
        """Index free text. The same ``source_path`` (or, without one, the same text) replaces."""
        if not isinstance(text, str) or not text.strip():
            raise UsageError("refusing to index empty text")
        kind = (kind or "manual").strip()
        if not KIND_RE.fullmatch(kind):
            raise UsageError(f"invalid kind {kind!r}: use 1-40 of a-z, 0-9, '_' or '-'")
        if kind in ("memory", "wiki"):  # with a source_path this forged a note recall trusted, never cleaned up
            raise UsageError(f"kind {kind!r} is reserved for the files under {kind}/, indexed from them; "
                             "use another kind (e.g. manual) for free text")
        category = (category or "").strip()[:200]
        source_path = (source_path or "").strip()[:500]
        source = f"{kind}:{source_path}" if source_path else f"{kind}:sha256:{hashlib.sha256(text.encode()).hexdigest()[:16]}"
        chunks = chunking.text_chunks(text, source, kind, category, source_path, _now())
        if self._guard(self._needs_rebuild):
            self._guard(self._rebuild)
        return self._guard(self._write_sources, {source: chunks}, embed_budget=None)

    def catch_up(self, only: Iterable[Path] | None = None, *, include_all: bool = False,
                 embed_budget: int | None = 0) -> dict[str, Any]:
        """Bring the index in line with memory/ and wiki/ (or just the files in ``only``)."""
        return self._guard(self._catch_up, only, include_all, embed_budget)

    def _catch_up(self, only: Iterable[Path] | None, include_all: bool, embed_budget: int | None) -> dict[str, Any]:
        if self._needs_rebuild():
            return self._rebuild()
        kinds = {"memory": include_all or self.index_memory, "wiki": include_all or self.index_wiki}
        current = {key: path for key, path in self._source_files() if kinds[key.split("/", 1)[0]]}
        if only is not None:
            wanted = {self._key_of(Path(p)) for p in only}
            current = {k: v for k, v in current.items() if k in wanted}
        if self._in_step(current, only is None, kinds):
            return {"added": 0, "removed": 0, "sources": 0}
        private_mkdir(self.index_dir)
        with locked(self.index_dir / ".lock"):
            manifest = self._load_manifest()
            sources = manifest.setdefault("sources", {})
            changed: dict[str, list[Chunk]] = {}
            dirty = False
            old_ids = manifest.get("note_ids") != NOTE_IDS  # memory chunks still named by byte offset
            if manifest.get("tokenizer") != TOKENIZER_VERSION:  # only reached for an index built with this one
                manifest["tokenizer"] = TOKENIZER_VERSION
                dirty = True
            for key, path in current.items():
                try:
                    stat = path.stat()
                except FileNotFoundError:
                    continue
                entry = sources.get(key)
                stale_ids = old_ids and key.startswith("memory/")
                if entry and not stale_ids and entry.get("mtime_ns") == stat.st_mtime_ns \
                        and entry.get("size") == stat.st_size:
                    continue
                data = path.read_bytes()
                digest = hashlib.sha256(data).hexdigest()
                sources[key] = {"mtime_ns": stat.st_mtime_ns, "size": stat.st_size, "sha256": digest}
                dirty = True
                if entry and not stale_ids and entry.get("sha256") == digest:
                    continue
                changed[key] = self._chunks_of(key, data.decode("utf-8", errors="replace"), stat.st_mtime)
            gone = [] if only is not None else [
                key for key in sources if kinds.get(key.split("/", 1)[0]) and key not in current
            ]
            for key in gone:
                changed[key] = []
                del sources[key]
                dirty = True
            stats = self._write_sources(changed, embed_budget=embed_budget, locked_already=True) if changed else {
                "added": 0, "removed": 0, "sources": 0}
            if old_ids and only is None and kinds["memory"]:
                manifest["note_ids"] = NOTE_IDS
                dirty = True
            if dirty:
                self._save_manifest(manifest)
        return stats

    def _in_step(self, current: dict[str, Path], whole: bool, kinds: dict[str, bool]) -> bool:
        """True when the manifest already records every file of ``current`` at its present size and
        mtime and names no file that is gone (``whole``: ``current`` is every file): the locked pass
        of :meth:`_catch_up` would then change nothing, so it is skipped. Anything else, including
        what that pass would only tidy, goes through it."""
        manifest = self._manifest_view()
        if manifest.get("tokenizer") != TOKENIZER_VERSION or manifest.get("note_ids") != NOTE_IDS:
            return False
        sources = manifest.get("sources", {})
        for key, path in current.items():
            entry = sources.get(key)
            if not isinstance(entry, dict):
                return False
            try:
                stat = path.stat()
            except FileNotFoundError:
                return False
            if entry.get("mtime_ns") != stat.st_mtime_ns or entry.get("size") != stat.st_size:
                return False
        return not whole or all(key in current for key in sources if kinds.get(key.split("/", 1)[0]))

    def _needs_rebuild(self) -> bool:
        """An index written before ``fts_text`` existed, or by another version of the tokenizer
        (:data:`mnemara.memory.search.tokenize.VERSION`), is rebuilt once (files are the truth)."""
        if self._fts_checked:
            return False
        table = self._chunks()
        self._fts_checked = True
        if table is None:
            return False
        return FTS_COLUMN not in table.schema.names or self._load_manifest().get("tokenizer") != TOKENIZER_VERSION

    def rebuild(self) -> dict[str, Any]:
        """Drop the index and rebuild it from memory/ and wiki/ (manual entries are carried over when readable)."""
        return self._guard(self._rebuild)

    def _rebuild(self) -> dict[str, Any]:
        import shutil

        carried: dict[str, list[Chunk]] = {}
        lost = ""
        try:
            table = self._chunks()
            if table is not None:
                for row in table.search().where("kind != 'memory' AND kind != 'wiki'").limit(10_000_000).to_list():
                    carried.setdefault(row["source"], []).append(Chunk(
                        row["id"], row["source"], row["kind"], row["category"], row["path"], row["title"],
                        row["text"], row["created_at"]))
        except Exception as exc:
            lost = f"manual entries could not be read from the old index ({_reason(exc)})"
        self.close()
        self._pending = None
        self._seen_version = None
        self._fts_checked = True
        private_mkdir(self.index_dir)
        with locked(self.index_dir / ".lock"):
            for child in self.index_dir.iterdir():
                if child.name == ".lock":
                    continue
                if child.is_dir() and not child.is_symlink():
                    shutil.rmtree(child)
                else:
                    child.unlink()
        stats = self._catch_up(None, True, None)
        if carried:
            more = self._write_sources(carried, embed_budget=None)
            stats["added"] += more["added"]
        stats["manual_carried"] = sum(len(v) for v in carried.values())
        if lost:
            stats["warning"] = lost
        stats["chunks"] = self._count()
        return stats

    def _write_sources(self, changed: dict[str, list[Chunk]], *, embed_budget: int | None,
                       locked_already: bool = False) -> dict[str, Any]:
        if not locked_already:
            private_mkdir(self.index_dir)
            with locked(self.index_dir / ".lock"):
                return self._write_sources(changed, embed_budget=embed_budget, locked_already=True)
        table = self._chunks(create=True)
        existing = self._existing(table, list(changed))
        fresh: list[Chunk] = []
        stale: list[str] = []
        for source, chunks in changed.items():
            old = existing.get(source, {})
            new = {c.id: c for c in chunks}
            stale += [i for i, sig in old.items() if i not in new or new[i].signature != sig]
            fresh += [c for c in chunks if old.get(c.id) != c.signature]
        for start in range(0, len(stale), 500):
            table.delete(f"id IN ({', '.join(_sql(i) for i in stale[start:start + 500])})")
        if fresh:
            table.add([_row(c) for c in fresh])  # one fragment for the whole batch
            if self._pending is not None:
                self._pending.update(c.hash for c in fresh)
        added, removed = len(fresh), len(stale)
        self._after_write(table, bool(added or removed))
        stats: dict[str, Any] = {"added": added, "removed": removed, "sources": len(changed)}
        if embed_budget != 0 and added:
            stats["embedding"] = self._sync_vectors(embed_budget)
        return stats

    def _existing(self, table: Any, sources: list[str]) -> dict[str, dict[str, str]]:
        """source -> {chunk id: signature} of the rows already stored for ``sources``."""
        out: dict[str, dict[str, str]] = {}
        for start in range(0, len(sources), 200):
            part = ", ".join(_sql(src) for src in sources[start:start + 200])
            for row in table.search().where(f"source IN ({part})").select(["source", "id", "sig"]) \
                    .limit(10_000_000).to_list():
                out.setdefault(row["source"], {})[row["id"]] = row["sig"]
        return out

    def _after_write(self, table: Any, wrote: bool) -> None:
        """Keep the full-text index current and compact now and then.

        Rows added after the index was built are still searched, but by a slow
        flat scan; once there are many of them the index is brought up to date.
        """
        if not wrote:
            return
        if not any(ix.index_type == "FTS" for ix in table.list_indices()):
            FTS = _lance("lancedb.index").FTS

            # fts_text is already tokenized by tokenize.tokens: split on spaces, nothing else
            table.create_index(FTS_COLUMN, config=FTS(base_tokenizer="whitespace", lower_case=False, stem=False,
                                                      remove_stop_words=False, ascii_folding=False),
                               replace=True, name=FTS_INDEX)
        counter = self.index_dir / "writes_since_optimize"
        try:
            writes = int(counter.read_text(encoding="utf-8").strip() or 0) + 1
        except (FileNotFoundError, ValueError):
            writes = 1
        stats = table.index_stats(FTS_INDEX)
        unindexed = stats.num_unindexed_rows if stats is not None else 0
        if writes >= OPTIMIZE_EVERY or unindexed > UNINDEXED_LIMIT:
            table.optimize(cleanup_older_than=timedelta(hours=1))
            writes = 0
        atomic_write_text(counter, str(writes))
        tighten_modes(self.index_dir)  # LanceDB writes 0644 files and 0755 folders
        if self._pending is not None:
            self._seen_version = table.version

    # -- vectors -----------------------------------------------------------------------
    def _vector_table_name(self, dim: int) -> str:
        model = self.embedder.model if self.embedder else "none"
        slug = re.sub(r"[^a-z0-9]+", "_", model.lower()).strip("_")[:40]
        return f"vec_{slug}_{hashlib.sha256(model.encode()).hexdigest()[:6]}_{dim}"

    def _vector_table(self) -> Any:
        prefix = self._vector_table_name(0).rsplit("_", 1)[0] + "_"
        names = sorted(n for n in self._table_names() if n.startswith(prefix))
        return self._open(names[-1]) if names else None

    def _embedder_ready(self) -> str:
        """'' when the embedder may be tried now, else the reason it is not."""
        if self.embedder is None:
            return self.embed_problem
        if self._embed_failed_at and time.monotonic() - self._embed_failed_at < self.retry_embedder_after:
            return f"{self.embed_problem} (retrying in {self.retry_embedder_after:.0f} s)"
        return ""

    def _embed(self, texts: list[str], query: bool = False) -> list[list[float]]:
        prefix = ""
        if self.embedder and "nomic" in self.embedder.model:
            prefix = "search_query: " if query else "search_document: "
        try:
            vectors = self.embedder.embed([prefix + t for t in texts])
        except EmbedError as exc:
            self._embed_failed_at = time.monotonic()
            self.embed_problem = str(exc)
            raise
        self._embed_failed_at = 0.0
        return vectors

    def _sync_vectors(self, budget: int | None) -> dict[str, Any]:
        """Embed chunk texts that have no vector yet (at most ``budget``); never raises EmbedError."""
        problem = self._embedder_ready()
        if problem:
            return {"embedded": 0, "skipped": problem}
        table = self._chunks()
        if table is None:
            return {"embedded": 0}
        if self._pending is None or self._seen_version != table.version:
            have = set()
            vtable = self._vector_table()
            if vtable is not None:
                have = set(vtable.search().select(["hash"]).limit(10_000_000).to_arrow().column("hash").to_pylist())
            self._pending = set(table.search().select(["hash"]).limit(10_000_000).to_arrow().column("hash").to_pylist()) - have
            self._seen_version = table.version
        todo = sorted(self._pending)[: budget if budget is not None else None]
        if not todo:
            return {"embedded": 0, "pending": 0}
        texts: dict[str, str] = {}
        for start in range(0, len(todo), 500):
            part = ", ".join(_sql(h) for h in todo[start:start + 500])
            for row in table.search().where(f"hash IN ({part})").select(["hash", "search_text"]).limit(1_000_000).to_list():
                texts[row["hash"]] = row["search_text"]
        done = 0
        try:
            for start in range(0, len(todo), EMBED_BATCH):
                batch = [h for h in todo[start:start + EMBED_BATCH] if h in texts]
                if not batch:
                    continue
                vectors = self._embed([texts[h] for h in batch])
                self._store_vectors(batch, vectors)
                self._pending.difference_update(batch)
                done += len(batch)
        except EmbedError as exc:
            return {"embedded": done, "pending": len(self._pending), "skipped": str(exc)}
        self._pending.difference_update(h for h in todo if h not in texts)
        return {"embedded": done, "pending": len(self._pending)}

    def _store_vectors(self, hashes: list[str], vectors: list[list[float]]) -> None:
        pa = _lance("pyarrow")

        dim = len(vectors[0])
        name = self._vector_table_name(dim)
        db = self._connect()
        if name in self._table_names():
            vtable = self._open(name)
        else:
            schema = pa.schema([pa.field("hash", pa.string()), pa.field("vector", pa.list_(pa.float32(), dim))])
            self._forget_tables()
            vtable = db.create_table(name, schema=schema)
        rows = [{"hash": h, "vector": v} for h, v in zip(hashes, vectors) if len(v) == dim]
        if rows:
            vtable.add(rows)
        tighten_modes(self.index_dir)

    def _count(self) -> int:
        table = self._chunks()
        return 0 if table is None else table.count_rows()

    # -- files and manifest ------------------------------------------------------------
    def _source_files(self) -> list[tuple[str, Path]]:
        out = [(f"memory/{p.name}", p) for p in day_files(self.memory_dir)] if self.memory_dir.is_dir() else []
        out += [(f"wiki/{slug}.md", self.wiki_dir / f"{slug}.md") for slug in list_pages(self.wiki_dir)]
        return out

    def _key_of(self, path: Path) -> str:
        path = Path(path).resolve()
        for base, name in ((self.memory_dir.resolve(), "memory"), (self.wiki_dir.resolve(), "wiki")):
            if base in path.parents:
                return f"{name}/{path.relative_to(base).as_posix()}"
        return str(path)

    def _chunks_of(self, key: str, text: str, mtime: float) -> list[Chunk]:
        if key.startswith("memory/"):
            return chunking.memory_chunks(text, key)
        slug = key[len("wiki/"):-len(".md")]
        modified = datetime.fromtimestamp(mtime, timezone.utc).replace(microsecond=0).isoformat()
        return chunking.wiki_chunks(text, key, slug, modified)

    def _load_manifest(self) -> dict[str, Any]:
        try:
            data = json.loads((self.index_dir / MANIFEST).read_text(encoding="utf-8"))
            return data if isinstance(data, dict) and isinstance(data.get("sources", {}), dict) else {"sources": {}}
        except (FileNotFoundError, json.JSONDecodeError, UnicodeDecodeError):
            return {"sources": {}}

    def _manifest_view(self) -> dict[str, Any]:
        """The manifest for reading only (never change it): parsed again only when the file's
        (mtime, size, inode) moved, or it changed too recently to trust them (:data:`RACY_NS`)."""
        path = self.index_dir / MANIFEST
        try:
            stat = path.stat()
        except FileNotFoundError:
            self._manifest_cache = None
            return {"sources": {}}
        key = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
        if self._manifest_cache is not None and self._manifest_cache[0] == key:
            return self._manifest_cache[1]
        manifest = self._load_manifest()
        settled = time.time_ns() - stat.st_mtime_ns > RACY_NS
        self._manifest_cache = (key, manifest) if settled else None
        return manifest

    def _save_manifest(self, manifest: dict[str, Any]) -> None:
        atomic_write_text(self.index_dir / MANIFEST, json.dumps(manifest, indent=1, sort_keys=True))


_COLUMNS = ["id", "source", "kind", "category", "path", "title", "text", "created_at"]


def _row(chunk: Chunk) -> dict[str, str]:
    return {"id": chunk.id, "source": chunk.source, "kind": chunk.kind, "category": chunk.category,
            "path": chunk.path, "title": chunk.title, "text": chunk.text, "search_text": chunk.search_text,
            FTS_COLUMN: fts_text(chunk.search_text),
            "hash": chunk.hash, "sig": chunk.signature, "created_at": chunk.created_at}
