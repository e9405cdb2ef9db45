"""Hybrid retrieval over memory notes, wiki pages and manual entries: the query side of the index.

Two channels, fused by score (min-max per channel, weighted; then dates the
question names and conversation neighbours: :mod:`mnemara.memory.search.ranking`):

* **keyword**: LanceDB's native full-text index (BM25) on ``fts_text``, the
  output of :func:`mnemara.memory.search.tokenize.tokens` (stemmed, identifiers
  spelled every way) stored beside the text; the question goes through the
  same function (less its question words), so index and query can never
  tokenize differently. Always on, needs no model.
* **vector**: cosine search over embeddings from the configured embedder
  (:mod:`mnemara.memory.search.embedders`: the bundled local model by default,
  Ollama, or none). The weights come from the model in use
  (:func:`mnemara.memory.search.embedders.ranking_weights`), shown in every answer.

Hits whose notes may conflict (the claim guard of :mod:`similarity`) are all
kept, each marked ``may_conflict_with`` the others, newest first; a newer one that
ranked just past the cut is added, never put in the place of a better match.

Storing, catching up with the files and embedding are :mod:`mnemara.memory.search.index_store`.
Between queries a RagIndex also keeps the rows of the chunks table (until its version changes).
An unreachable embedder only degrades a query to keyword-only and says so.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from mnemara.core.errors import UsageError
from mnemara.memory.search import ranking
from mnemara.memory.search.embed import EmbedError
from mnemara.memory.search.index_store import (  # noqa: F401  (names importers use from here)
    _COLUMNS,
    CHUNKS,
    FTS_COLUMN,
    FTS_INDEX,
    KIND_RE,
    MANIFEST,
    QUERY_EMBED_BUDGET,
    TEXT_LIMIT,
    UNINDEXED_LIMIT,
    IndexStore,
    RagUnavailable,
    _lance,
    _sql,
)
from mnemara.memory.search.recency import best_with_conflicts
from mnemara.memory.search.tokenize import query_tokens

if TYPE_CHECKING:
    from mnemara.core.config import Config
    from mnemara.store.instance import Instance


class RagIndex(IndexStore):
    """The retrieval index of one instance: :class:`IndexStore` plus search. Cheap to construct;
    LanceDB opens on first use."""

    def __init__(self, root: Path, **kwargs: Any) -> None:
        super().__init__(root, **kwargs)
        self._matrix: tuple[Any, list[str], Any] | None = None  # (table name+version, hashes, unit vectors)
        self._term_stats: tuple[Any, tuple[int, dict[str, int]]] | None = None
        self._timeline_cache: tuple[Any, ranking.Timeline] | None = None
        self._rows_cache: tuple[Any, _RowIndex] | None = None
        self._matrix_rows: dict[str, int] = {}  # hash -> row of the unit matrix
        self._subject_cache: tuple[Any, _SubjectWords] | None = None

    @classmethod
    def for_instance(cls, instance: "Instance", config: "Config", **kwargs: Any) -> "RagIndex":
        from mnemara.memory.search.embedders import make_embedder

        embedder, problem = make_embedder(config, **({"timeout": kwargs.pop("timeout")} if "timeout" in kwargs else {}))
        return cls(instance.root, embedder=embedder, embed_problem=problem,
                   index_memory=config.rag_auto_index_memory, index_wiki=config.rag_auto_index_wiki, **kwargs)

    # -- reading ---------------------------------------------------------------------
    def query(self, question: str, k: int = 5, kind: str | None = None) -> dict[str, Any]:
        """The ``k`` best chunks for ``question`` with per-channel ranks, scores and the fusion rule."""
        if not isinstance(question, str) or not question.strip():
            raise UsageError("the question is empty")
        if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= 100:
            raise UsageError(f"k must be an integer from 1 to 100, got {k!r}")
        if kind is not None and not KIND_RE.fullmatch(kind):
            raise UsageError(f"invalid kind {kind!r}: use 1-40 of a-z, 0-9, '_' or '-'")
        return self._guard(self._query, question, k, kind)

    def _query(self, question: str, k: int, kind: str | None) -> dict[str, Any]:
        MatchQuery = _lance("lancedb.query").MatchQuery

        self._catch_up(None, False, 0)
        table = self._chunks()
        depth = max(4 * k, ranking.DEPTH)
        where = f"kind = {_sql(kind)}" if kind else None
        keyword: list[dict[str, Any]] = []
        terms = " ".join(query_tokens(question))
        if table is not None and terms:
            search = table.search(MatchQuery(terms, FTS_COLUMN), query_type="fts")
            if where:
                search = search.where(where, prefilter=True)
            keyword = search.select(_COLUMNS + [FTS_COLUMN, "_score"]).limit(depth).to_list()
        vector, degraded = self._vector_channel(table, question, depth, where, kind)
        with_vector = not degraded.startswith("keyword-only")
        adaptive, why = self._weights(with_vector)
        coverage = ranking.keyword_coverage(terms.split(), [row[FTS_COLUMN] or "" for row in keyword])
        weights = adaptive.for_coverage(coverage)
        hits = ranking.fuse(keyword, vector, weights, _hit)
        window = ranking.apply_dates(hits.values(), question, weights.date)
        if table is not None and hits and weights.neighbour > 0 and kind in (None, "memory"):
            timeline = self._timeline(table)
            missing = sorted(ranking.neighbour_ids(hits, timeline))
            known = self._rows(table).rows("id", missing, None, 1000)
            for row in known or ():
                hits.setdefault(row["id"], _hit(row))["score"] = 0.0
            for start in range(0, len(missing) if known is None else 0, 500):
                part = ", ".join(_sql(i) for i in missing[start:start + 500])
                for row in table.search().where(f"id IN ({part})").select(_COLUMNS).limit(1000).to_list():
                    hits.setdefault(row["id"], _hit(row))["score"] = 0.0
            ranking.apply_neighbours(hits, timeline, weights.neighbour)
        ordered = [h for h in ranking.ordered(hits.values()) if h["channels"] or h["score"] > 0]
        answer: dict[str, Any] = {"ok": True, "fusion": ranking.RULE,
                                  "channels": ["keyword"] + (["vector"] if with_vector else []),
                                  "weights": weights.as_dict(), "weights_from": why}
        if adaptive.vector_covered is not None and with_vector:
            answer["keyword_coverage"] = round(coverage, 6)
        if window:
            answer["date_window"] = window
        if not with_vector:
            answer["degraded"] = degraded
        elif degraded:
            answer["note"] = degraded
        # a few hits past the k-th are looked at too: a newer note that may correct one of the k
        # best is added beside it (both flagged), never in its place. Only hits a channel found are
        # compared (a neighbour keeps its place and does not shorten the reach).
        head = ranking.first_found(ordered, k + min(k, RECENCY_MARGIN))
        found = [h for h in head if h["channels"]]
        checked = best_with_conflicts(found, sum(1 for h in head[:k] if h["channels"]))
        answer["hits"] = ranking.keep_neighbour_slots(head[:k], checked)
        return answer

    def _weights(self, with_vector: bool) -> tuple[ranking.Weights, str]:
        from mnemara.memory.search.embedders import ranking_weights

        if self.channel_weights is not None:
            base, _ = ranking_weights(self.embedder if with_vector else None)
            keyword, vector = self.channel_weights
            return (ranking.Weights(keyword, vector if with_vector else 0.0, base.date, base.neighbour),
                    f"channel weights set by the caller ({keyword}, {vector})")
        return ranking_weights(self.embedder if with_vector else None)

    def _timeline(self, table: Any) -> ranking.Timeline:
        """Memory notes in writing order (cached per table version: one column scan after a write)."""
        key = table.version
        if self._timeline_cache is None or self._timeline_cache[0] != key:
            data = table.search().where("kind = 'memory'").select(["id", "path", "category", "created_at"]) \
                .limit(10_000_000).to_arrow()
            rows = zip(*(data.column(name).to_pylist() for name in ("id", "path", "category", "created_at")))
            self._timeline_cache = (key, ranking.Timeline(rows))
        return self._timeline_cache[1]

    def _rows(self, table: Any) -> "_RowIndex":
        """Every stored chunk (the columns a hit needs, and its hash), with its positions by hash and
        by id in storage order; read again whenever the table's version moved (one scan after a write)."""
        key = table.version
        if self._rows_cache is None or self._rows_cache[0] != key:
            data = table.search().select(_COLUMNS + ["hash"]).limit(10_000_000).to_arrow()
            self._rows_cache = (key, _RowIndex(data))
        return self._rows_cache[1]

    def _vector_channel(self, table: Any, question: str, depth: int, where: str | None,
                        kind: str | None = None) -> tuple[list[dict[str, Any]], str]:
        problem = self._embedder_ready()
        if problem:
            return [], f"keyword-only: {problem}"
        sync = self._sync_vectors(QUERY_EMBED_BUDGET) if table is not None else {}
        if sync.get("skipped"):
            return [], f"keyword-only: {sync['skipped']}"
        try:
            qvec = self._embed([question], query=True)[0]
        except EmbedError as exc:
            return [], f"keyword-only: {exc}"
        vtable = self._vector_table() if table is not None else None
        if vtable is None:
            return [], ""
        from mnemara.memory.search.embedders import similarity_floor

        floor = similarity_floor(self.embedder)
        hits = [h for h in self._nearest(vtable, qvec, depth * 2) if 1.0 - h[1] >= floor]
        if not hits:
            return [], ""
        order: dict[str, tuple[int, float]] = {}
        for n, (digest, distance) in enumerate(hits):
            order.setdefault(digest, (n, distance))
        rows = self._rows(table).rows("hash", order, kind, depth * 4)
        if rows is None:
            clause = f"hash IN ({', '.join(_sql(h) for h in order)})" + (f" AND {where}" if where else "")
            rows = table.search().where(clause).select(_COLUMNS + ["hash"]).limit(depth * 4).to_list()
        for row in rows:
            row["_distance"] = order[row["hash"]][1]
        rows.sort(key=lambda r: (order[r["hash"]][0], r["id"]))
        partial = f"vector channel partial: {len(self._pending or ())} chunks not embedded yet" if sync.get("pending") else ""
        return rows[:depth], partial

    def _nearest(self, vtable: Any, qvec: list[float], limit: int) -> list[tuple[str, float]]:
        """(hash, cosine distance) of the ``limit`` nearest stored vectors.

        The vectors live in LanceDB; the scan is an in-memory matrix product over a
        copy that is reloaded whenever the table's version changes (10k x 768
        floats: 30 MB, a few ms per query, no index to train or keep fresh).
        """
        import numpy as np

        hashes, matrix = self._unit_matrix(vtable)
        query = np.asarray(qvec, dtype=np.float32)
        if not hashes or query.shape[0] != matrix.shape[1]:
            return []
        query /= float(np.linalg.norm(query)) or 1.0
        return self._best(hashes, matrix, query, limit)

    def _unit_matrix(self, vtable: Any) -> tuple[list[str], Any]:
        """(hashes, unit vectors as rows) of the vector table, reloaded when its version changes."""
        import numpy as np

        key = (vtable.name, vtable.version)
        if self._matrix is None or self._matrix[0] != key:
            data = vtable.to_arrow()
            vectors = data.column("vector").combine_chunks()
            dim = vectors.type.list_size
            matrix = np.asarray(vectors.flatten(), dtype=np.float32).reshape(-1, dim)
            norms = np.linalg.norm(matrix, axis=1, keepdims=True)
            norms[norms == 0] = 1.0
            self._matrix = (key, data.column("hash").to_pylist(), matrix / norms)
            self._matrix_rows = {h: n for n, h in enumerate(self._matrix[1])}
        return self._matrix[1], self._matrix[2]

    @staticmethod
    def _best(hashes: list[str], matrix: Any, query: Any, limit: int) -> list[tuple[str, float]]:
        with _one_blas_thread():
            similarity = matrix @ query
        return RagIndex._ranked(hashes, similarity, limit)

    @staticmethod
    def _ranked(hashes: list[str], similarity: Any, limit: int) -> list[tuple[str, float]]:
        """The ``limit`` best of ``similarity`` (one per row of ``hashes``), best first, as (hash, distance)."""
        import numpy as np

        count = min(limit, len(hashes))
        best = np.argpartition(-similarity, count - 1)[:count]
        best = best[np.argsort(-similarity[best], kind="stable")]
        return [(hashes[i], float(1.0 - similarity[i])) for i in best]

    def same_subject_candidates(self, hits: list[dict[str, Any]], limit: int = 12) -> dict[str, list[dict[str, Any]]]:
        """For each note hit, the notes that may be on its subject, as hits: the ``limit`` notes sharing
        the most of its rarest subject words (as dedupe on write looks them up, here from the index's
        own tokens: :class:`_SubjectWords`) and, when vectors exist, the notes of its ``limit`` nearest
        vectors. A backend failure raises :class:`RagUnavailable`."""
        return self._guard(self._same_subject, hits, limit)

    def _same_subject(self, hits: list[dict[str, Any]], limit: int) -> dict[str, list[dict[str, Any]]]:
        table = self._chunks()
        notes = [h for h in hits if h.get("kind") == "memory" and h.get("id")]
        if table is None or not notes:
            return {}
        rows = self._rows(table)
        words = self._subject_words(table)
        similar = self._nearest_notes(rows, notes, limit)
        wanted = {hit["id"]: list(dict.fromkeys(words.closest(hit["id"], limit) + similar.get(hit["id"], [])))
                  for hit in notes}
        every = list(dict.fromkeys(ident for ids in wanted.values() for ident in ids))
        found = rows.rows("id", every, "memory", 10 * len(every) + 10)  # one take for every hit's candidates
        if found is None:  # an id stored twice: each hit's own lookup, so only that hit goes without
            return {ident: [_hit(row) for row in rows.rows("id", ids, "memory", 10 * len(ids) + 10) or []]
                    for ident, ids in wanted.items()}
        by_id = {row["id"]: row for row in found}
        return {ident: [_hit(by_id[c]) for c in ids if c in by_id] for ident, ids in wanted.items()}

    def _subject_words(self, table: Any) -> "_SubjectWords":
        """The memory notes by subject word, read again whenever the table's version moved."""
        key = table.version
        if self._subject_cache is None or self._subject_cache[0] != key:
            data = table.search().where("kind = 'memory'").select(["id", FTS_COLUMN, "text"]).limit(10_000_000).to_arrow()
            self._subject_cache = (key, _SubjectWords(*(data.column(c).to_pylist() for c in ("id", FTS_COLUMN, "text"))))
        return self._subject_cache[1]

    def _nearest_notes(self, rows: "_RowIndex", notes: list[dict[str, Any]], limit: int) -> dict[str, list[str]]:
        """hit id -> the ids of the notes nearest each hit by its stored vector ({} keyword-only)."""
        if self._embedder_ready():
            return {}
        vtable = self._vector_table()
        if vtable is None:
            return {}
        import numpy as np

        hashes, matrix = self._unit_matrix(vtable)
        placed = [(hit["id"], position) for hit in notes
                  if (position := self._vector_row(rows, hit["id"])) is not None]
        if not placed:
            return {}
        with _one_blas_thread():  # every hit's similarities in one product, a column each
            similarities = matrix @ matrix[[position for _ident, position in placed]].T
        out: dict[str, list[str]] = {}
        for column, (ident, _position) in enumerate(placed):
            best = self._ranked(hashes, np.ascontiguousarray(similarities[:, column]), limit + 1)
            ids = rows.ids_of_hashes([h for h, _ in best])
            out[ident] = [found for digest, _ in best for found in ids.get(digest, [])]
        return out

    def _vector_row(self, rows: "_RowIndex", ident: str) -> int | None:
        digest = rows.hash_of(ident)
        return None if digest is None else self._matrix_rows.get(digest)

    def term_stats(self) -> tuple[int, dict[str, int]] | None:
        """``(chunks, token -> how many chunks hold it)`` of the full-text column, for IDF weights.

        Cached per table version (a few hundred ms at 10k notes, once after each write).
        """
        try:
            table = self._chunks()
            if table is None:
                return None
            key = (table.version, table.count_rows())
            if self._term_stats is None or self._term_stats[0] != key:
                column = table.search().select([FTS_COLUMN]).limit(10_000_000).to_arrow().column(FTS_COLUMN)
                df: dict[str, int] = {}
                for text in column.to_pylist():
                    for token in set((text or "").split()):
                        df[token] = df.get(token, 0) + 1
                self._term_stats = (key, (len(column), df))
            return self._term_stats[1]
        except Exception:  # IDF is a refinement: without it the gate counts every token alike
            return None

    def status(self) -> dict[str, Any]:
        """Counts for humans: chunks by kind, vectors, sources tracked."""
        def run() -> dict[str, Any]:
            table = self._chunks()
            kinds: dict[str, int] = {}
            if table is not None:
                for value in table.search().select(["kind"]).limit(10_000_000).to_arrow().column("kind").to_pylist():
                    kinds[value] = kinds.get(value, 0) + 1
            vtable = self._vector_table()
            return {"chunks": sum(kinds.values()), "by_kind": kinds,
                    "vectors": 0 if vtable is None else vtable.count_rows(),
                    "sources": len(self._load_manifest().get("sources", {}))}
        return self._guard(run)



_BLAS: list[Any] = []  # the threadpoolctl controller, made on first use


def _one_blas_thread() -> Any:
    """Run BLAS on one thread: on 2 busy cores a second BLAS thread waits for a time slice, which
    made the 10k x 256 product take ~8 ms instead of ~0.2 ms. The product is the same bit for bit
    (BLAS splits it by rows; measured on 300 LoCoMo questions)."""
    from threadpoolctl import ThreadpoolController

    if not _BLAS:
        _BLAS.append(ThreadpoolController())
    return _BLAS[0].limit(limits=1, user_api="blas")


class _RowIndex:
    """The chunks table as read at one version, with row positions by hash and by id."""

    def __init__(self, data: Any) -> None:
        self.data = data
        self.positions: dict[str, dict[str, list[int]]] = {}
        for column in ("hash", "id"):
            index: dict[str, list[int]] = {}
            for position, value in enumerate(data.column(column).to_pylist()):
                index.setdefault(value, []).append(position)
            self.positions[column] = index

    def hash_of(self, ident: str) -> str | None:
        """The text hash of the chunk ``ident`` (None when it is not stored, or stored twice)."""
        found = self.positions["id"].get(ident, [])
        return str(self.data.column("hash")[found[0]].as_py()) if len(found) == 1 else None

    def ids_of_hashes(self, digests: Iterable[str]) -> dict[str, list[str]]:
        """hash -> the ids of the chunks with that text."""
        ids = self.data.column("id")
        return {d: [str(ids[p].as_py()) for p in self.positions["hash"].get(d, [])] for d in digests}

    def rows(self, column: str, keys: Iterable[str], kind: str | None, limit: int) -> list[dict[str, Any]] | None:
        """The rows whose ``column`` is one of ``keys`` (and of ``kind``), when they are exactly what a
        LanceDB query would return: at most ``limit`` rows and no id twice (else its scan order
        would decide which rows, or which of two, come back). None: ask LanceDB."""
        index = self.positions[column]
        found = [position for key in keys for position in index.get(key, ())]
        rows = [row for row in self.data.take(found).to_pylist() if kind is None or row["kind"] == kind] \
            if found else []
        if len(rows) > limit or len({row["id"] for row in rows}) != len(rows):
            return None
        return rows


class _SubjectWords:
    """Memory notes by subject word at one table version: each note's indexed tokens (``fts_text``)
    plus the words its aliases stand for ("reports to" -> "manager"), and who holds each word. The
    rarest-word lookup of dedupe on write (:meth:`mnemara.memory.note_index.NoteIndex.closest`),
    kept in memory beside the index so a query pays dictionary lookups, not an SQLite query per hit."""

    RAREST = 6  # as NoteIndex.closest: a common word matches thousands of notes and says little

    def __init__(self, ids: list[str], fts: list[str | None], texts: list[str | None]) -> None:
        from mnemara.memory.search.claim_words import with_aliases
        from mnemara.memory.search.tokenize import tokens

        self.words: dict[str, frozenset[str]] = {}
        self.holders: dict[str, list[str]] = {}
        for ident, indexed, text in zip(ids, fts, texts):
            words = set((indexed or "").split())
            aliased = with_aliases(text or "")
            if aliased != (text or ""):
                words.update(tokens(aliased))
            self.words[ident] = frozenset(words)
            for word in words:
                self.holders.setdefault(word, []).append(ident)
        # notes numbered in id order, so a tie in score goes to the smaller id by number
        self._names = sorted(self.words)
        self._number = {ident: n for n, ident in enumerate(self._names)}
        self._held: dict[str, Any] = {}  # word -> its holders' numbers (a numpy array), made on first use

    def _holders_of(self, word: str) -> Any:
        import numpy as np

        held = self._held.get(word)
        if held is None:
            held = self._held[word] = np.fromiter((self._number[i] for i in self.holders[word]), dtype=np.int64)
        return held

    def closest(self, ident: str, n: int) -> list[str]:
        """The ``n`` other notes sharing the most (IDF-weighted) of note ``ident``'s rarest words; ties
        by id. Scored over every note at once: a common word's thousands of holders cost one array add."""
        import math

        import numpy as np

        mine = self.words.get(ident, frozenset())
        # a word only this note holds finds no other note: it must not take one of the RAREST places ("Minha
        # bicicleta fica guardada na garagem do prédio" has six words no other note holds, and "bicicleta" was
        # left out of the lookup, so "Agora guardo a bicicleta dentro do apartamento" was never found; round 6)
        rare = sorted((w for w in mine if len(self.holders[w]) > 1), key=lambda w: (len(self.holders[w]), w))[:self.RAREST]
        if not rare or n <= 0:
            return []
        total = len(self.words) + 1
        held = [self._holders_of(word) for word in rare]
        # each weight >= 1 (a word's holders are at most every note), so a score > 0 means a shared word
        weights = [np.full(len(h), math.log(total / (1 + len(self.holders[w]))) + 1.0) for w, h in zip(rare, held)]
        score = np.bincount(np.concatenate(held), weights=np.concatenate(weights), minlength=len(self._names))
        own = self._number.get(ident)
        if own is not None:
            score[own] = 0.0
        found = np.flatnonzero(score)
        best = found[np.lexsort((found, -score[found]))[:n]]
        return [self._names[i] for i in best]


RECENCY_MARGIN = 10  # hits past the k-th that may take a place in the answer as a newer conflicting note


def _hit(row: dict[str, Any]) -> dict[str, Any]:
    text = row["text"]
    hit = {"id": row["id"], "kind": row["kind"], "source": row["source"], "path": row["path"],
           "category": row["category"], "title": row["title"], "created_at": row["created_at"],
           "text": text[:TEXT_LIMIT], "channels": {}}
    if len(text) > TEXT_LIMIT:
        hit["truncated"] = True
    return hit
