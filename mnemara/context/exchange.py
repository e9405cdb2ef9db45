"""``/export`` and ``/import``: a session as one markdown file, and back.

The file is readable (text blocks appear as fenced text) and exact: every row's
id, role, timestamp, pin, flags, meta and blocks, the config and the role doc
survive a round trip. Layout::

    <!-- mnemara-export v1 -->
    # Mnemara export: <instance>
    ## config            one ```json fence
    ## role doc          <!-- role {"path": ..., "present": ...} --> and one fence
    ## turn <id> · <role>
    <!-- row {...row fields...} -->
    ```text             a text block (fence longer than any backtick run inside)
    ```json block       any other block, one JSON object

Import parses the whole file before touching anything; the first problem is
reported with its line number and text, and the store, config and role doc are
left as they were. An instance that has a role doc keeps it: an export carrying a
different one has it saved beside the instance (``role.md`` or ``role.imported-<time>.md``),
and the summary names the file and the ``/role`` line that switches to it.
"""
from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from mnemara.core import json_limits
from mnemara.core.config import Config
from mnemara.core.debuglog import now_iso
from mnemara.core.errors import ConfigError, MnemaraError, UsageError
from mnemara.core.folder_check import describe
from mnemara.core.fsutil import atomic_write_text
from mnemara.core.roledoc import read_role_doc
from mnemara.store.export_doc import ExportDoc
from mnemara.store.rows import Turn, validate_label
from mnemara.store.turns import ROLES, TurnStore

MARKER = "<!-- mnemara-export v1 -->"
_ROW_RE = re.compile(r"^<!-- row (\{.*\}) -->$")
_ROLE_RE = re.compile(r"^<!-- role (\{.*\}) -->$")
_TURN_RE = re.compile(r"^## turn (\d+) · (\w+)$")
_FENCE_RE = re.compile(r"^(`{3,})(.*)$")
_ROW_KEYS = {"id", "role", "created_at", "pin_label", "slot_pos", "evicted", "protected", "meta"}
MAX_IMPORT_BYTES = 256 * 1024 * 1024


def _fence(text: str) -> str:
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def _fenced(info: str, text: str) -> list[str]:
    fence = _fence(text)
    return [f"{fence}{info}", *text.split("\n"), fence, ""]


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def select_for_export(store: TurnStore, last: int | None = None) -> list[Turn]:
    """All rows (evicted ones too) oldest first; with ``last``, pinned rows plus the newest ``last`` live rows."""
    if last is None:
        return store.history()
    if last <= 0:
        raise UsageError("the number of turns to export must be positive")
    return sorted([*store.pinned(), *store.live_rows(limit=last)], key=lambda t: t.id)


def export_markdown(rows: Iterable[Turn], config: Config, instance_name: str = "") -> str:
    """Render rows, config and the role doc (read now from ``config.role_doc_path``) as markdown."""
    rows = list(rows)
    role = read_role_doc(config.role_doc_path)
    pinned = sum(1 for t in rows if t.pinned)
    out = [
        MARKER,
        f"# Mnemara export: {instance_name or 'session'}",
        "",
        f"Exported {now_iso()}: {len(rows)} rows ({pinned} pinned). Restore with `/import <this file>`.",
        "",
        "## config",
        "",
        *_fenced("json", json.dumps(config.to_dict(), indent=2, ensure_ascii=False, sort_keys=True)),
        "## role doc",
        "",
        f"<!-- role {_json({'path': config.role_doc_path, 'present': bool(role.path) and role.warning is None})} -->",
        *_fenced("markdown", role.text),
    ]
    for t in rows:
        head = {"id": t.id, "role": t.role, "created_at": t.created_at, "pin_label": t.pin_label,
                "slot_pos": t.slot_pos, "evicted": t.evicted, "protected": t.protected, "meta": t.meta}
        out += [f"## turn {t.id} · {t.role}", "", f"<!-- row {_json(head)} -->", ""]
        for block in t.blocks:
            if set(block) == {"type", "text"} and block["type"] == "text" and isinstance(block["text"], str):
                out += _fenced("text", block["text"])
            else:
                out += _fenced("json block", _json(block))
    return "\n".join(out)


def write_export(path: Path, text: str) -> None:
    """Write an export atomically; never overwrite a file that is not itself a Mnemara export."""
    path = Path(path).expanduser()
    if path.is_dir():
        raise UsageError(f"{path} is a folder; give a file path")
    if not path.parent.is_dir():
        raise UsageError(f"folder {path.parent} does not exist")
    if path.exists():
        try:
            with path.open("r", encoding="utf-8") as fh:
                first = fh.readline().rstrip("\n")
        except (OSError, UnicodeDecodeError):
            first = ""
        if first != MARKER:
            raise UsageError(f"{path} exists and is not a Mnemara export; refusing to overwrite it")
    atomic_write_text(path, text)


# -- import --------------------------------------------------------------------
class _Lines:
    def __init__(self, path: str, lines: list[str]) -> None:
        self.path, self.lines, self.i = path, lines, 0

    def fail(self, reason: str, at: int | None = None) -> UsageError:
        n = self.i if at is None else at
        shown = self.lines[n] if n < len(self.lines) else "<end of file>"
        if len(shown) > 80:
            shown = shown[:79] + "…"
        return UsageError(f"{self.path}: line {n + 1}: {reason} (got: {shown!r}); nothing was imported")

    def peek(self) -> str | None:
        return self.lines[self.i] if self.i < len(self.lines) else None

    def skip_blank(self) -> None:
        while self.i < len(self.lines) and not self.lines[self.i].strip():
            self.i += 1

    def expect(self, line: str) -> None:
        self.skip_blank()
        if self.peek() != line:
            raise self.fail(f"expected {line!r}")
        self.i += 1

    def fence(self, info: str | None = None) -> tuple[str, str, int]:
        """Read one fenced block; returns (info, content, line index of the opening fence)."""
        self.skip_blank()
        start = self.i
        m = _FENCE_RE.match(self.peek() or "")
        if not m:
            raise self.fail("expected a ``` fenced block")
        fence, got = m.group(1), m.group(2)
        if info is not None and got != info:
            raise self.fail(f"expected a ```{info} fence")
        self.i += 1
        body: list[str] = []
        while True:
            line = self.peek()
            if line is None:
                raise self.fail(f"fenced block opened on line {start + 1} is never closed", at=start)
            self.i += 1
            if line == fence:
                return got, "\n".join(body), start
            body.append(line)


def _load_json(lines: _Lines, text: str, at: int, what: str) -> Any:
    try:
        return json_limits.loads(text)
    except json.JSONDecodeError as exc:
        raise lines.fail(f"invalid JSON in {what}: {exc.msg}", at=at + exc.lineno) from None
    except json_limits.JSONRefused as exc:
        raise lines.fail(f"{what} refused: {exc}", at=at) from None


def _parse_row_head(lines: _Lines, raw: object, at: int, heading: tuple[int, str]) -> dict[str, Any]:
    if not isinstance(raw, dict) or set(raw) != _ROW_KEYS:
        raise lines.fail(f"row header must have exactly the keys {sorted(_ROW_KEYS)}", at=at)
    if not isinstance(raw["id"], int) or raw["id"] <= 0 or raw["role"] not in ROLES:
        raise lines.fail("row header needs a positive integer id and a role of user/assistant/system", at=at)
    if (raw["id"], raw["role"]) != heading:
        raise lines.fail("row header does not match its '## turn' heading", at=at)
    if not isinstance(raw["created_at"], str) or not isinstance(raw["meta"], dict):
        raise lines.fail("row header created_at must be a string and meta an object", at=at)
    if not isinstance(raw["evicted"], bool) or not isinstance(raw["protected"], bool):
        raise lines.fail("row header evicted/protected must be true or false", at=at)
    if raw["pin_label"] is not None:
        try:
            validate_label(raw["pin_label"])
        except MnemaraError as exc:
            raise lines.fail(exc.message, at=at) from None
        if not isinstance(raw["slot_pos"], int) or raw["slot_pos"] < 0:
            raise lines.fail("a pinned row needs a non-negative integer slot_pos", at=at)
    elif raw["slot_pos"] is not None:
        raise lines.fail("an unpinned row cannot have a slot_pos", at=at)
    return raw


def parse_export(text: str, source: str = "export") -> ExportDoc:
    """Parse an export completely or raise :class:`UsageError` naming the line that failed."""
    from mnemara.legacy import export018

    if export018.is_legacy_export(text):
        return export018.parse(text, source)
    lines = _Lines(source, text.split("\n"))
    if lines.peek() == MARKER + "\r":
        raise lines.fail("the file has CRLF (Windows) line endings; convert it back to LF line endings and import again")
    if lines.peek() != MARKER:
        newer = re.fullmatch(r"<!-- mnemara-export v(\d+) -->", lines.peek() or "")
        if newer:
            raise lines.fail(f"export format v{newer.group(1)} is not supported by this Mnemara (it reads v1); upgrade mnemara")
        raise lines.fail(f"not a Mnemara export (the first line must be {MARKER!r})")
    lines.i += 1
    while (lines.peek() or "").strip() != "## config":
        line = lines.peek()
        if line is None or line.startswith("## "):
            raise lines.fail("expected '## config'")
        lines.i += 1
    lines.i += 1
    _info, cfg_text, at = lines.fence("json")
    raw_cfg = _load_json(lines, cfg_text, at, "config")
    try:
        config = Config.from_dict(raw_cfg, source="config")
    except ConfigError as exc:
        raise lines.fail(exc.message, at=at) from None
    lines.expect("## role doc")
    lines.skip_blank()
    m = _ROLE_RE.match(lines.peek() or "")
    if not m:
        raise lines.fail("expected '<!-- role {...} -->'")
    role_meta = _load_json(lines, m.group(1), lines.i - 1, "role header")
    if not isinstance(role_meta, dict) or not isinstance(role_meta.get("path"), str) or not isinstance(role_meta.get("present"), bool):
        raise lines.fail("role header needs a string 'path' and a boolean 'present'")
    lines.i += 1
    _info, role_text, _ = lines.fence("markdown")
    doc = ExportDoc(config, role_meta["path"], role_meta["present"], role_text)
    seen_ids: set[int] = set()
    seen_labels: set[str] = set()
    while True:
        lines.skip_blank()
        line = lines.peek()
        if line is None:
            break
        hm = _TURN_RE.match(line)
        if not hm:
            raise lines.fail("expected '## turn <id> · <role>'")
        heading = (int(hm.group(1)), hm.group(2))
        lines.i += 1
        lines.skip_blank()
        rm = _ROW_RE.match(lines.peek() or "")
        if not rm:
            raise lines.fail("expected '<!-- row {...} -->'")
        at = lines.i
        head = _parse_row_head(lines, _load_json(lines, rm.group(1), at - 1, "row header"), at, heading)
        if head["id"] in seen_ids:
            raise lines.fail(f"row {head['id']} appears twice", at=at)
        if head["pin_label"] is not None and head["pin_label"] in seen_labels:
            raise lines.fail(f"slot {head['pin_label']!r} appears twice", at=at)
        seen_ids.add(head["id"])
        if head["pin_label"] is not None:
            seen_labels.add(head["pin_label"])
        lines.i += 1
        blocks: list[dict[str, Any]] = []
        while True:
            lines.skip_blank()
            nxt = lines.peek()
            if nxt is None or nxt.startswith("## "):
                break
            info, body, bat = lines.fence()
            if info == "text":
                blocks.append({"type": "text", "text": body})
            elif info == "json block":
                block = _load_json(lines, body, bat, "block")
                if not isinstance(block, dict) or not isinstance(block.get("type"), str):
                    raise lines.fail("a json block must be an object with a string 'type'", at=bat)
                blocks.append(block)
            else:
                raise lines.fail("expected a ```text or ```json block fence", at=bat)
        doc.rows.append(Turn(id=head["id"], role=head["role"], blocks=blocks, tokens=0,
                             created_at=head["created_at"], pin_label=head["pin_label"], slot_pos=head["slot_pos"],
                             evicted=head["evicted"], protected=head["protected"], meta=head["meta"]))
    return doc


def read_export(path: Path) -> ExportDoc:
    """Read and parse an export file; every refusal is one line naming the file."""
    path = Path(path).expanduser()
    if not path.exists() and not path.is_symlink():
        raise UsageError(f"{path}: no such file")
    why = describe(path, path.lstat(), MAX_IMPORT_BYTES)
    if why is not None:
        raise UsageError(f"{path}: refused: {why}; import a regular file")
    if not path.is_file():
        raise UsageError(f"{path}: not a file")
    if path.stat().st_size > MAX_IMPORT_BYTES:
        raise UsageError(f"{path}: larger than {MAX_IMPORT_BYTES // (1024 * 1024)} MB; refusing to import")
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: not UTF-8 text (byte {exc.start}); not a Mnemara export") from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot read: {exc.strerror or exc}") from None
    return parse_export(text, str(path))


@dataclass
class ImportResult:
    rows: int
    pinned: int
    kept_ids: bool
    role_doc_path: str
    config: Config
    config_kept: bool = False  # --keep-permissions: this instance's config stayed
    role_doc_offered: str = ""  # the export's (different) role doc, saved here but not switched to

    def summary(self) -> str:
        how = "with their original ids" if self.kept_ids else "appended after the existing rows (earlier live rows evicted, kept on disk)"
        config = "this instance's config kept" if self.config_kept else "config restored from the export"
        role = f"role doc: {self.role_doc_path}" if self.role_doc_path else "no role doc"
        if self.role_doc_offered:
            role = (f"role doc kept: {self.role_doc_path} (the export's, which differs, is "
                    f"{self.role_doc_offered}; /role {shlex.quote(self.role_doc_offered)} switches to it)")
        return f"imported {self.rows} rows ({self.pinned} pinned) {how}; {config}; {role}"


def _holds(path: str, text: str) -> bool:
    """The file at ``path`` holds exactly ``text``."""
    try:
        return Path(path).expanduser().read_text(encoding="utf-8") == text
    except (OSError, UnicodeDecodeError):
        return False


def _place_role_doc(doc: ExportDoc, instance_root: Path, current: Config) -> str:
    """Where the imported role doc lives: its original path if that file still holds the same text."""
    if not doc.role_present:
        return (doc.config or current).role_doc_path
    original = Path(doc.role_path).expanduser() if doc.role_path else None
    if original is not None and original.is_file():
        try:
            if original.read_text(encoding="utf-8") == doc.role_text:
                return doc.role_path
        except (OSError, UnicodeDecodeError):
            pass
    target = instance_root / "role.md"
    if target.exists():
        try:
            same = target.read_text(encoding="utf-8") == doc.role_text
        except (OSError, UnicodeDecodeError):
            same = False
        if not same:
            target = instance_root / f"role.imported-{now_iso().replace(':', '')}.md"
    if not target.exists():
        atomic_write_text(target, doc.role_text)
    return str(target)


class PermissionChangeNeedsConsent(UsageError):
    """The export would change what the agent may do (or the role doc path); nothing was imported."""

    def __init__(self, message: str, changes: list[str]) -> None:
        super().__init__(message)
        self.changes = changes


def permission_changes(current: Config, incoming: Config, instance_root: Path) -> list[str]:
    """Every change in what the agent may do if ``incoming`` replaced ``current``.

    Computed from the permission gate itself (:func:`mnemara.guard.effective.capability_changes`:
    its answer for every known tool, tool family and server-wide name, before and after; the
    allowed patterns added or removed; every other config field that differs). When something
    changes, the policy entries that differ are listed too, as ASCII JSON.
    """
    from mnemara.guard.effective import capability_changes, instance_for

    lines = capability_changes(current, incoming, instance_for(instance_root), skip=frozenset({"role_doc_path"}))
    if not lines:
        return []
    old = [json.dumps(item, sort_keys=True) for item in current.to_dict().get("allowed_tools") or []]
    new = [json.dumps(item, sort_keys=True) for item in incoming.to_dict().get("allowed_tools") or []]
    lines += [f"  - allowed_tools: {item}" for item in old if item not in new]
    lines += [f"  + allowed_tools: {item}" for item in new if item not in old]
    return lines


def import_export(path: Path, store: TurnStore, config_path: Path, instance_root: Path,
                  permissions: str = "ask") -> ImportResult:
    """Restore an export: rows into ``store``, config into ``config_path``, the role doc beside it.

    ``permissions`` says what happens when the export's config would change what the agent may do
    (:func:`permission_changes`, or a role doc path it carries no text for): ``"ask"`` (the default)
    imports nothing and raises :class:`PermissionChangeNeedsConsent` listing the differences,
    ``"accept"`` takes the export's config, ``"keep"`` imports the rows and keeps this config.
    """
    if permissions not in ("ask", "accept", "keep"):
        raise UsageError(f"permissions must be ask, accept or keep, not {permissions!r}")
    doc = read_export(path)
    config_path = Path(config_path)
    mine = Config.load(config_path) if config_path.exists() else Config()
    changes = permission_changes(mine, doc.config, Path(instance_root)) if doc.config is not None else []
    named_role = doc.config is not None and not doc.role_present and doc.config.role_doc_path != mine.role_doc_path
    if named_role and doc.config is not None:  # no role text in the export: its path would be read as is
        changes += [f"  - role_doc_path: {json.dumps(mine.role_doc_path)}",
                    f"  + role_doc_path: {json.dumps(doc.config.role_doc_path)} (sent to the model every turn)"]
    if changes and permissions == "ask":
        raise PermissionChangeNeedsConsent(
            f"{path}: importing would change what the agent may do or which files and addresses Mnemara "
            "reads, runs and sends to (~ the permission gate's answer for a tool before -> after; - now, + imported):\n"
            + "\n".join(changes), changes)
    empty = not store.history(limit=1)
    current = mine if doc.config is None else doc.config
    offered = ""
    if named_role and permissions == "keep":
        role_path = mine.role_doc_path
    elif doc.role_present and mine.role_doc_path and not _holds(mine.role_doc_path, doc.role_text):
        # never replace the instance's role doc silently: keep it, save the export's beside it and say so
        role_path, offered = mine.role_doc_path, _place_role_doc(doc, Path(instance_root), current)
    else:
        role_path = _place_role_doc(doc, Path(instance_root), current)
    store.import_rows(doc.rows, keep_ids=empty, evict_live=True)
    data = (doc.config or current).to_dict()
    data["role_doc_path"] = role_path
    if permissions == "keep":
        data = {**mine.to_dict(), "role_doc_path": role_path}
    config = Config.from_dict(data, source=str(path))
    config.save(config_path)
    return ImportResult(len(doc.rows), sum(1 for r in doc.rows if r.pinned), empty, role_path, config,
                        config_kept=permissions == "keep", role_doc_offered=offered)
