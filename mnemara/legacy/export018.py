"""Read a Mnemara 0.18 ``/export`` file (``# Mnemara Full Export: <instance>``).

Its sections sit between ``<!-- mnemara:begin:NAME -->`` and ``<!-- mnemara:end:NAME -->``:
``config`` (a JSON fence), ``role_doc`` (raw text) and ``turns`` (``## <role> <id>``,
an optional ``_ts: <timestamp>_`` line, then the text of the turn). Only text
survives a 0.18 export, so each turn becomes one text block.
"""
from __future__ import annotations

import json
import re
from typing import Any

from mnemara.core.debuglog import now_iso
from mnemara.core.errors import ConfigError, UsageError
from mnemara.store.rows import Turn
from mnemara.store.turns import ROLES

HEADER = "# Mnemara Full Export:"
_SECTION = re.compile(r"<!-- mnemara:begin:(\w+) -->\n(.*?)<!-- mnemara:end:\1 -->", re.DOTALL)
_TURN_HEAD = re.compile(r"^## (\w+) (\d+)[ \t]*$", re.MULTILINE)
_TS_LINE = re.compile(r"\A_ts: ([^\n]*)_\n?")
PLACEHOLDER = "(no text content)"


def is_legacy_export(text: str) -> bool:
    return text.lstrip("\ufeff").startswith(HEADER)


def _config(section: str, source: str) -> Any:
    body = section.strip()
    m = re.fullmatch(r"```json\n(.*)\n```", body, re.DOTALL)
    if m is None:
        raise UsageError(f"{source}: the 0.18 config section is not one ```json fence")
    try:
        raw = json.loads(m.group(1))
    except json.JSONDecodeError as exc:
        raise UsageError(f"{source}: the 0.18 config section is not valid JSON ({exc.msg})") from None
    from mnemara.core.config import Config
    from mnemara.legacy.config018 import convert_config

    try:
        data, _notes = convert_config(raw, source=f"{source} (config section)")
        return Config.from_dict(data, source=source)
    except ConfigError as exc:
        raise UsageError(exc.message) from None


def parse(text: str, source: str = "export") -> Any:
    """An :class:`~mnemara.store.export_doc.ExportDoc` (``config`` None when the file has none)."""
    from mnemara.store.export_doc import ExportDoc

    text = text.lstrip("\ufeff").replace("\r\n", "\n")
    sections = {m.group(1): m.group(2) for m in _SECTION.finditer(text)}
    if "turns" not in sections:
        raise UsageError(f"{source}: a 0.18 export without a turns section (<!-- mnemara:begin:turns -->)")
    config = _config(sections["config"], source) if "config" in sections else None
    role_text = sections.get("role_doc", "")
    role_present = "role_doc" in sections
    role_text = role_text[:-1] if role_text.endswith("\n\n") else role_text
    doc = ExportDoc(config, config.role_doc_path if config else "", role_present, role_text.rstrip("\n") + "\n" if role_present else "")
    parts = _TURN_HEAD.split(sections["turns"])
    seen: set[int] = set()
    for i in range(1, len(parts) - 2 + 1, 3):
        role, row_id, body = parts[i], int(parts[i + 1]), parts[i + 2]
        meta: dict[str, Any] = {"imported_from": "0.18 export"}
        created = ""
        body = body.lstrip("\n")
        m = _TS_LINE.match(body)
        if m:
            created, body = m.group(1), body[m.end():]
        body = body.strip("\n")
        if body == PLACEHOLDER:
            body = ""
        evicted = False
        if role == "marker":  # a segment marker: kept on disk, out of the window
            meta["legacy_marker"] = body.strip().strip('"')
            role, evicted = "system", True
        elif role not in ROLES:
            meta["legacy_role"] = role
            role = "user"
        if row_id in seen:
            raise UsageError(f"{source}: turn {row_id} appears twice in the 0.18 export")
        seen.add(row_id)
        doc.rows.append(Turn(id=row_id, role=role, blocks=[{"type": "text", "text": body}], tokens=0,
                             created_at=created or now_iso(), evicted=evicted, meta=meta))
    return doc
