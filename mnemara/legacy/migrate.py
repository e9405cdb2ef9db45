"""Convert one Mnemara 0.18 instance folder in place, with a backup first.

Order of work (:func:`migrate_instance`):

1. find the files still in 0.18's format (:func:`~mnemara.store.legacy_detect.legacy_parts`);
   none: nothing is touched ("up to date"), so a second run is a no-op;
2. copy the originals into ``pre-migrate-<timestamp>/`` inside the instance
   (``turns.sqlite`` through SQLite's backup API, so a copy is consistent);
3. build every converted file in ``.migrate-staging/`` and check it opens;
4. only then replace the originals with the converted files (one rename each).

A failure in 1-3 leaves every original untouched (the staging folder is
removed) and the error names the file, the problem and the backup folder.
The LanceDB index of 0.18 (``index/``) is moved into the backup and ours is
rebuilt from the memory and wiki files; a failure there is reported but does
not undo the migration (``rag_index`` rebuilds it on the next use).
"""
from __future__ import annotations

import json
import shutil
import sqlite3
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from mnemara.core import json_limits
from mnemara.core.errors import MnemaraError
from mnemara.core.folder_check import refused_entries
from mnemara.core.fsutil import atomic_write_text
from mnemara.store.instance import Instance
from mnemara.store import legacy_detect as detect
from mnemara.legacy.config018 import convert_config
from mnemara.guard.legacy_perms import fold_legacy
from mnemara.peer import watermark

STAGING = ".migrate-staging"


class MigrationError(MnemaraError):
    """A migration step failed; nothing of the instance was changed."""


@dataclass
class MigrationResult:
    name: str
    converted: list[str] = field(default_factory=list)
    backup: Path | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.converted)

    def lines(self) -> list[str]:
        if not self.changed:
            return [f"{self.name}: up to date (nothing in Mnemara 0.18's format)"]
        out = [f"{self.name}: migrated from Mnemara 0.18: {', '.join(self.converted)}",
               f"  originals copied to {self.backup}"]
        out += [f"  {note}" for note in self.notes]
        return out


def _copy_originals(root: Path, backup: Path, parts: list[str]) -> None:
    backup.mkdir()
    for name in ("config.json", "permissions.json", detect.LEGACY_WATERMARK):
        src = root / name
        if src.is_file():
            shutil.copy2(src, backup / name)
    turns = root / "turns.sqlite"
    if turns.is_file():
        try:  # SQLite's backup API gives a consistent copy even if 0.18 is still running
            src_conn = sqlite3.connect(f"file:{turns}?mode=ro", uri=True)
            dst_conn = sqlite3.connect(backup / "turns.sqlite")
            try:
                src_conn.backup(dst_conn)
            finally:
                dst_conn.close()
                src_conn.close()
        except sqlite3.Error:  # a damaged file is still copied, byte for byte
            (backup / "turns.sqlite").unlink(missing_ok=True)
            shutil.copy2(turns, backup / "turns.sqlite")
    memory = root / "memory"
    if memory.is_dir():
        shutil.copytree(memory, backup / "memory", symlinks=True)


def _permission_notes(root: Path, cfg_raw: object) -> list[str]:
    """What the migrated config lets the agent do that a new instance's would not (or the reverse),
    as the permission gate answers it (:func:`mnemara.guard.effective.capability_changes`)."""
    from mnemara.core.config import Config
    from mnemara.core.errors import ConfigError
    from mnemara.guard.effective import capability_changes, instance_for

    try:
        migrated = Config.from_dict(cfg_raw, source=str(root / "config.json"))
    except ConfigError as exc:
        return [f"permissions: not compared ({exc})"]
    lines = capability_changes(Config(), migrated, instance_for(root), skip=frozenset({"role_doc_path"}))
    if not lines:
        return ["permissions: the same as a new instance's"]
    return ["permissions, compared with a new instance (~ tool: new instance -> this one; - new instance, "
            "+ this one):", *lines]


def _build(root: Path, staging: Path, parts: list[str], result: MigrationResult) -> dict[str, Path]:
    """Converted files in ``staging``; returns original name -> staged file."""
    staged: dict[str, Path] = {}
    cfg_raw = json_limits.load_file(root / "config.json")
    if "config.json" in parts:
        data, notes = convert_config(cfg_raw, source=str(root / "config.json"))
        result.notes += notes
        staged["config.json"] = staging / "config.json"
        atomic_write_text(staged["config.json"], json.dumps(data, indent=2, ensure_ascii=False) + "\n")
        cfg_raw = data
    if "turns.sqlite" in parts:
        from mnemara.legacy.turns018 import convert_turns

        staged["turns.sqlite"] = staging / "turns.sqlite"
        try:
            counts = convert_turns(root / "turns.sqlite", staged["turns.sqlite"])
        except sqlite3.Error as exc:
            raise MigrationError(f"{root / 'turns.sqlite'} cannot be read ({exc})") from None
        result.notes.append(f"turns.sqlite: {counts['rows']} rows kept ({counts['pinned']} pinned, "
                            f"{counts['markers']} segment markers)")
    if "permissions.json" in parts:
        raw = json_limits.load_file(root / "permissions.json")
        staged["permissions.json"] = staging / "permissions.json"
        folded = fold_legacy(raw)
        atomic_write_text(staged["permissions.json"], json.dumps(folded, indent=2, ensure_ascii=False) + "\n")
        table = folded.get("allowed_patterns") if isinstance(folded, dict) else None
        for tool, patterns in sorted(table.items()) if isinstance(table, dict) else ():
            result.notes += [f"  + permissions.json allowed_patterns[{tool}]: {json.dumps(p)} (allowed without asking)"
                             for p in patterns if isinstance(p, str)]
    result.notes += _permission_notes(root, cfg_raw)
    if detect.LEGACY_WATERMARK in parts:
        from mnemara.peer.addressing import resolve_db_path

        text = (root / detect.LEGACY_WATERMARK).read_text(encoding="utf-8").strip()
        try:
            value = int(text)
        except ValueError:
            value = -1
        db_path = resolve_db_path(str(cfg_raw.get("peer_db_path") or ""), root)
        if value >= 0 and db_path is not None:
            staged[watermark.FILE_NAME] = staging / watermark.FILE_NAME
            watermark.save(staged[watermark.FILE_NAME], db_path, value)
            result.notes.append(f"peer watermark: {value} (for {db_path})")
        else:
            result.notes.append(f"peer watermark {text!r} not used (no peer_db_path or not a number)")
    return staged


def _swap_in(root: Path, staged: dict[str, Path], parts: list[str]) -> None:
    for name, path in staged.items():
        target = root / name
        if name == "turns.sqlite":
            for suffix in ("-wal", "-shm", "-journal"):
                (root / f"turns.sqlite{suffix}").unlink(missing_ok=True)
        path.replace(target)
    if detect.LEGACY_WATERMARK in parts:
        (root / detect.LEGACY_WATERMARK).unlink(missing_ok=True)


def _reindex(inst: Instance, backup: Path, result: MigrationResult) -> None:
    """Move 0.18's LanceDB index into the backup and rebuild ours from the files."""
    from mnemara.core.config import Config

    old = inst.index_dir
    if old.is_dir() and any(old.iterdir()):
        old.replace(backup / "index")
    old.mkdir(exist_ok=True)
    try:
        cfg = Config.load(inst.config_path)
        if not cfg.rag_enabled:
            result.notes.append("index: rag_enabled is off; not rebuilt")
            return
        from mnemara.memory.search.rag import RagIndex

        stats = RagIndex.for_instance(inst, cfg).rebuild()
        result.notes.append(f"index: rebuilt from memory/ and wiki/ ({stats.get('chunks', stats.get('added', '?'))} chunks)")
    except Exception as exc:  # noqa: BLE001 - the index is derived data: report, never undo the migration
        result.notes.append(f"index: not rebuilt ({type(exc).__name__}: {exc}); rag_index rebuilds it on first use")


def migrate_instance(inst: Instance, now: datetime | None = None) -> MigrationResult:
    """Convert ``inst`` from 0.18's formats in place (see the module docstring)."""
    root = inst.root
    result = MigrationResult(inst.name)
    parts = detect.legacy_parts(root)
    if not parts:
        return result
    refused = refused_entries(root)
    if refused:
        raise MigrationError(
            f"{inst.name}: migration stopped, nothing was changed: the folder holds entries Mnemara does not "
            "take over (links, special files, files over the size cap); move each away and run `mnemara migrate "
            f"--instance {inst.name}` again:\n" + "\n".join(f"  {line}" for line in refused))
    if not detect.readable_store(inst.turns_path):
        raise MigrationError(
            f"{inst.name}: migration stopped, nothing was changed: {inst.turns_path} cannot be read (damaged, or "
            f"not a Mnemara store); restore it from a backup or move it away, then run "
            f"`mnemara migrate --instance {inst.name}` again")
    stamp = (now or datetime.now(timezone.utc)).strftime("%Y%m%dT%H%M%SZ")
    backup = root / f"pre-migrate-{stamp}"
    staging = root / STAGING
    if backup.exists():
        raise MigrationError(f"{inst.name}: {backup} already exists; wait a second and run migrate again")
    shutil.rmtree(staging, ignore_errors=True)
    try:
        _copy_originals(root, backup, parts)
    except (OSError, sqlite3.Error) as exc:
        shutil.rmtree(backup, ignore_errors=True)
        raise MigrationError(f"{inst.name}: could not copy the originals to {backup} ({exc}); nothing was changed") from None
    try:
        staging.mkdir()
        staged = _build(root, staging, parts, result)
    except Exception as exc:  # noqa: BLE001 - any failure here must leave the originals and say so
        shutil.rmtree(staging, ignore_errors=True)
        message = exc.message if isinstance(exc, MnemaraError) else f"{type(exc).__name__}: {exc}"
        raise MigrationError(
            f"{inst.name}: migration stopped, nothing was changed: {message}. The originals are in place "
            f"(a copy is in {backup}); fix the file named above and run `mnemara migrate --instance {inst.name}` again"
        ) from None
    try:
        _swap_in(root, staged, parts)
    except OSError as exc:
        raise MigrationError(
            f"{inst.name}: migration failed while replacing files ({exc}); copy the files of {backup} back into "
            f"{root} and run `mnemara migrate --instance {inst.name}` again"
        ) from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    inst.ensure_layout()
    result.converted = parts
    result.backup = backup
    if "turns.sqlite" not in parts and not inst.turns_path.exists():
        from mnemara.store.turns import TurnStore

        TurnStore(inst.turns_path).close()
    _reindex(inst, backup, result)
    return result
