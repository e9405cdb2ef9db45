"""``requests/``: the last API calls of an instance, as the API received them.

One JSON file per call, ``requests/<seq>.json`` (``seq`` counts up from 1 for the
instance, six digits), holding the request body exactly as the Claude CLI sent it
(after the CLI added its own parts), the HTTP path, a few harmless headers (never
the API key or any other credential) and, once the answer has streamed through,
its status and ``usage``. Only the newest ``keep`` calls stay (``request_log_calls``
in config.json, default 50); ``mnemara forget`` redacts these files like the rows
of ``turns.sqlite``.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Iterable
from typing import Any, Protocol

from mnemara.core import json_limits
from mnemara.core.errors import UsageError
from mnemara.core.fsutil import locked, open_nofollow, private_mkdir, rewrite_in_place, write_all

FOLDER = "requests"
DEFAULT_KEEP = 50
#: Request headers worth keeping to read a call later; everything else (keys, tokens, cookies) is dropped.
KEPT_HEADERS = ("anthropic-version", "anthropic-beta", "content-type", "user-agent", "x-app")
#: A recorded call nests deeper than a hand-edited file may (tool inputs hold the model's JSON).
REQUEST_DEPTH = 256
_NAME = re.compile(r"^(\d{6,})\.json$")


@dataclass
class RecordedCall:
    """One API call: the request body as sent, and what came back."""

    seq: int
    at: str
    path: str
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)
    status: int | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    bytes_sent: int = 0
    #: The body's bytes as they came (UTF-8 JSON text that parsed to ``body``), when the recorder has them:
    #: :meth:`RequestLog.write` keeps these bytes instead of encoding ``body`` again. Never read back.
    body_json: bytes | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {"seq": self.seq, "at": self.at, "path": self.path, "status": self.status, "usage": self.usage,
                "bytes_sent": self.bytes_sent, "headers": self.headers, "body": self.body}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "RecordedCall":
        return cls(seq=int(data["seq"]), at=str(data.get("at", "")), path=str(data.get("path", "")),
                   body=dict(data.get("body") or {}), headers=dict(data.get("headers") or {}),
                   status=data.get("status"), usage=dict(data.get("usage") or {}),
                   bytes_sent=int(data.get("bytes_sent") or 0))


class HeaderItems(Protocol):
    """Request headers as any HTTP library holds them: (name, value) pairs."""

    def items(self) -> Iterable[tuple[str, object]]: ...


def safe_headers(headers: HeaderItems) -> dict[str, str]:
    """The headers of :data:`KEPT_HEADERS` only: a recorded call never holds a credential."""
    out: dict[str, str] = {}
    for key, value in headers.items():
        if key.lower() in KEPT_HEADERS:
            out[key.lower()] = str(value)
    return out


#: ``.seq`` holds the last call number padded to this width, so each call overwrites it in place: truncating
#: it first freed its block every call (0.9 ms measured here, on the path of every answer's last bytes).
_SEQ_WIDTH = 20


class RequestLog:
    """The ``requests/`` folder of one instance."""

    def __init__(self, root: Path, keep: int = DEFAULT_KEEP) -> None:
        self.folder = Path(root) / FOLDER
        self.keep = keep

    def _seqs(self) -> list[int]:
        try:
            names = os.listdir(self.folder)
        except FileNotFoundError:
            return []
        return sorted(int(m.group(1)) for m in map(_NAME.match, names) if m)

    def path_of(self, seq: int) -> Path:
        return self.folder / f"{seq:06d}.json"

    def next_seq(self) -> int:
        """Reserve the next call number (safe across processes sharing the instance)."""
        private_mkdir(self.folder)
        with locked(self.folder / ".seq.lock"):
            counter = self.folder / ".seq"
            fd = open_nofollow(counter, os.O_RDWR | os.O_CREAT)  # a planted link is refused, never written through
            try:
                try:
                    last = int(os.read(fd, 32).decode("ascii").strip() or 0)
                except ValueError:
                    last = 0
                last = max([last, *self._seqs()]) + 1
                rewrite_in_place(fd, str(last).encode().ljust(_SEQ_WIDTH))
            finally:
                os.close(fd)
            return last

    def write(self, call: RecordedCall) -> Path:
        """Save one call (private file, replaced atomically), then drop the oldest past ``keep``."""
        private_mkdir(self.folder)
        path = self.path_of(call.seq)
        tmp = path.with_suffix(".tmp")
        data = _encoded(call)
        fd = open_nofollow(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)  # private; never through a planted link
        try:
            write_all(fd, data)  # written whole at once: json.dump to a file makes thousands of small writes
        finally:
            os.close(fd)
        os.replace(tmp, path)
        self.prune()
        return path

    def prune(self) -> int:
        """Delete the oldest calls beyond ``keep``; returns how many went."""
        seqs = self._seqs()
        extra = seqs[: max(0, len(seqs) - self.keep)] if self.keep > 0 else seqs
        for seq in extra:
            try:
                self.path_of(seq).unlink()
            except FileNotFoundError:
                pass
        return len(extra)

    def calls(self) -> list[int]:
        """The call numbers kept, oldest first."""
        return self._seqs()

    def load(self, which: str | int) -> RecordedCall:
        """``"last"``, ``"last-1"`` ... or a call number; a clear :class:`UsageError` when there is no such call."""
        seqs = self._seqs()
        if not seqs:
            raise UsageError(f"no API call recorded yet in {self.folder} (request_log_calls is the number kept)")
        seq = _pick(str(which).strip().lower(), seqs)
        try:
            data = json_limits.load_file(self.path_of(seq), max_depth=REQUEST_DEPTH)
            if not isinstance(data, dict) or not isinstance(data.get("body"), dict):
                raise ValueError("not a recorded call: no request body")
            return RecordedCall.from_dict({**data, "seq": seq})
        except (OSError, ValueError, TypeError, KeyError) as exc:
            raise UsageError(f"call {seq} ({self.path_of(seq)}) cannot be read: {exc}; it was left as it is") from None

    def previous(self, seq: int) -> int | None:
        """The call kept just before ``seq`` (None when it is the oldest)."""
        earlier = [s for s in self._seqs() if s < seq]
        return earlier[-1] if earlier else None


def _encoded(call: RecordedCall) -> bytes:
    """The file's bytes: ``body`` last, as the bytes it came in when the recorder has them (the larger part
    of a call, and already JSON: encoding it again was most of the cost of recording)."""
    record = call.to_dict()
    if call.body_json is None:
        return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    del record["body"]
    head = json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return b"".join((head[:-1], b',"body":', call.body_json, b"}"))


def _pick(which: str, seqs: list[int]) -> int:
    if which == "last":
        return seqs[-1]
    if which.startswith("last-") and which[5:].isdigit():
        back = int(which[5:])
        if back >= len(seqs):
            raise UsageError(f"only {len(seqs)} call(s) are kept; {which} is older than the oldest")
        return seqs[-1 - back]
    if which.isdigit() and int(which) > 0:
        seq = int(which)
        if seq not in seqs:
            raise UsageError(f"no call {seq}: the calls kept are {seqs[0]}-{seqs[-1]}")
        return seq
    raise UsageError(f"--call takes 'last', 'last-N' or a call number, not {which!r}")
