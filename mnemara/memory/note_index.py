"""A lookup index of the day files, so a write finds its copies and neighbours without reading every note.

``memory/.note_index.sqlite`` (a cache: deleting it only costs one rebuild) holds, per
note of the day files, its id, file, byte offset, timestamp, text, the
:func:`mnemara.memory.search.exact.copy_key` and the tokens of the full-text
tokenizer (:func:`mnemara.memory.search.similarity.tokens`) in an FTS5 table.

Before every lookup the index syncs itself: one ``stat`` per day file, and only the
files whose size or mtime changed are parsed again (a day file grows by appends, so a
write re-reads today's file only). Any SQLite failure makes the caller fall back to
reading every note: the index may make a write faster, never wrong.
"""
from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Iterator

from mnemara.core.fsutil import check_sqlite_files, touch_private
from mnemara.memory.notes import Atom, day_files, parse_file

INDEX_FILE = ".note_index.sqlite"
SCHEMA_VERSION = 4  # 3: words hold subject_words (aliases too); 4: the "lead" alias
_SCHEMA = """
CREATE TABLE IF NOT EXISTS files (name TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER);
CREATE TABLE IF NOT EXISTS notes (rowid INTEGER PRIMARY KEY, file TEXT, offset INTEGER, end_ INTEGER,
    timestamp TEXT, category TEXT, ident TEXT, style TEXT, line INTEGER, text TEXT, copy_key TEXT);
CREATE INDEX IF NOT EXISTS notes_file ON notes(file);
CREATE INDEX IF NOT EXISTS notes_key ON notes(copy_key);
CREATE VIRTUAL TABLE IF NOT EXISTS words USING fts5(tokens, tokenize='unicode61 remove_diacritics 0');
CREATE VIRTUAL TABLE IF NOT EXISTS vocab USING fts5vocab(words, 'row');
"""
LOOKUP_TERMS = 6


def _connect(path: Path) -> sqlite3.Connection:
    check_sqlite_files(path)  # a linked index (or memory folder) is refused, not written through
    touch_private(path)  # 0600, like every file Mnemara writes; SQLite gives its journal the same mode
    db = sqlite3.connect(path, timeout=5.0, isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode=TRUNCATE")  # a cache: no WAL to checkpoint on every close,
        db.execute("PRAGMA synchronous=OFF")  # no fsync (a crash costs a rebuild, never a wrong answer: see sync)
        if db.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
            db.executescript("DROP TABLE IF EXISTS files; DROP TABLE IF EXISTS notes; DROP TABLE IF EXISTS words; DROP TABLE IF EXISTS vocab;")
            db.executescript(_SCHEMA)
            db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
    except sqlite3.Error:
        db.close()
        raise
    return db


class NoteIndex:
    """The lookup index of one memory folder (open it with :meth:`open`, use as a context manager)."""

    def __init__(self, memory_dir: Path, db: sqlite3.Connection) -> None:
        self.memory_dir = Path(memory_dir)
        self.db = db

    @classmethod
    def open(cls, memory_dir: Path) -> "NoteIndex":
        """Open (or create) the index; a file that is not a readable index is deleted and built again."""
        try:
            return cls(memory_dir, _connect(Path(memory_dir) / INDEX_FILE))
        except sqlite3.DatabaseError:
            drop_note_index(memory_dir)
            return cls(memory_dir, _connect(Path(memory_dir) / INDEX_FILE))

    def __enter__(self) -> "NoteIndex":
        return self

    def __exit__(self, *exc: object) -> None:
        self.db.close()

    def sync(self) -> int:
        """Bring the index up to the day files; returns how many files were (re)read."""
        from mnemara.memory.search.exact import copy_key
        from mnemara.memory.search.similarity import subject_words

        known = {name: (size, mtime) for name, size, mtime in self.db.execute("SELECT name, size, mtime_ns FROM files")}
        present: dict[str, tuple[int, int]] = {}
        for path in day_files(self.memory_dir):
            try:
                st = path.stat()
            except OSError:
                continue
            present[path.name] = (st.st_size, st.st_mtime_ns)
        changed = [n for n, stamp in present.items() if known.get(n) != stamp]
        gone = [n for n in known if n not in present]
        if not changed and not gone:
            return 0
        with closing(self.db.cursor()) as cur:
            cur.execute("BEGIN IMMEDIATE")
            try:
                for name in changed + gone:
                    self._drop(cur, name)
                for name in changed:
                    try:
                        atoms = parse_file(self.memory_dir / name)
                    except (OSError, UnicodeDecodeError):
                        continue  # unreadable: left out, as every reader of the day files does
                    for atom in atoms:
                        cur.execute("INSERT INTO notes (file, offset, end_, timestamp, category, ident, style, line,"
                                    " text, copy_key) VALUES (?,?,?,?,?,?,?,?,?,?)",
                                    (name, atom.offset, atom.end, atom.timestamp, atom.category, atom.ident,
                                     atom.style, atom.line, atom.text, copy_key(atom.text)))
                        cur.execute("INSERT INTO words (rowid, tokens) VALUES (?, ?)",
                                    (cur.lastrowid, " ".join(subject_words(atom.text))))
                    cur.execute("INSERT OR REPLACE INTO files VALUES (?,?,?)", (name, *present[name]))
                cur.execute("COMMIT")
            except BaseException:
                cur.execute("ROLLBACK")
                raise
        return len(changed) + len(gone)

    @staticmethod
    def _drop(cur: sqlite3.Cursor, name: str) -> None:
        cur.execute("DELETE FROM words WHERE rowid IN (SELECT rowid FROM notes WHERE file = ?)", (name,))
        cur.execute("DELETE FROM notes WHERE file = ?", (name,))
        cur.execute("DELETE FROM files WHERE name = ?", (name,))

    def _atoms(self, rows: Iterator[tuple]) -> list[Atom]:
        return [Atom(ts, cat, text, self.memory_dir / file, offset, end, ident, style, line)
                for file, offset, end, ts, cat, ident, style, line, text in rows]

    _COLUMNS = "file, offset, end_, timestamp, category, ident, style, line, text"

    def same_key(self, key: str) -> list[Atom]:
        """The notes whose copy key is ``key``, oldest file first."""
        return self._atoms(self.db.execute(f"SELECT {self._COLUMNS} FROM notes WHERE copy_key = ? "
                                           "ORDER BY file, offset", (key,)))

    def closest(self, words: list[str], n: int) -> list[Atom]:
        """Up to ``n`` notes sharing the most (BM25-weighted) of ``words``, looked up by the rarest
        :data:`LOOKUP_TERMS` of them (a common word matches thousands of notes and says little)."""
        terms = sorted({w for w in words if w})
        if not terms:
            return []
        marks = ",".join("?" * len(terms))
        counts = dict(self.db.execute(f"SELECT term, doc FROM vocab WHERE term IN ({marks})", terms).fetchall())
        rare = sorted((t for t in terms if counts.get(t)), key=lambda t: (counts[t], t))[:LOOKUP_TERMS]
        if not rare:
            return []
        match = " OR ".join('"' + w.replace('"', '""') + '"' for w in rare)
        rows = self.db.execute(f"SELECT {', '.join('n.' + c for c in self._COLUMNS.split(', '))} FROM words "
                               "JOIN notes n ON n.rowid = words.rowid WHERE words MATCH ? ORDER BY bm25(words) LIMIT ?",
                               (match, n))
        return self._atoms(rows)

    def since(self, first_file: str) -> list[Atom]:
        """Every note of the day files from ``first_file`` on."""
        return self._atoms(self.db.execute(f"SELECT {self._COLUMNS} FROM notes WHERE file >= ? ORDER BY file, offset",
                                           (first_file,)))


def is_note_index(path: Path) -> bool:
    """Whether ``path`` is the lookup index of a memory folder (or its journal)."""
    return Path(path).name.startswith(INDEX_FILE)


def drop_note_index(memory_dir: Path) -> bool:
    """Delete the lookup index (it quotes every note; ``mnemara forget`` drops it so no copy of a
    forgotten note stays on disk); the next write rebuilds it. True when there was one."""
    dropped = False
    for suffix in ("", "-journal", "-wal", "-shm"):
        try:
            (Path(memory_dir) / (INDEX_FILE + suffix)).unlink()
            dropped = True
        except FileNotFoundError:
            continue
    return dropped
