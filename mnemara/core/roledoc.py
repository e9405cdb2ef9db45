"""The role doc: a plain markdown file re-read from disk for every API call.

``read_role_doc`` never raises: a missing or unreadable file yields an empty
prompt plus a warning the caller reports. ``fetch_role_doc`` downloads once for
``role --set-from-url`` (https only, 1 MB cap, UTF-8 only).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any
from urllib.parse import urljoin, urlparse

from mnemara.core.errors import UsageError

if TYPE_CHECKING:
    from http.client import HTTPMessage

MAX_ROLE_BYTES = 1_000_000
FETCH_DEADLINE = 120.0  # seconds for the whole download of a role doc


@dataclass(frozen=True)
class RoleDoc:
    path: str
    text: str
    warning: str | None = None


def read_role_doc(path: str) -> RoleDoc:
    """Read the role doc now. Empty path means no role doc (no warning)."""
    if not path:
        return RoleDoc(path="", text="")
    try:
        return RoleDoc(path=path, text=Path(path).expanduser().read_text(encoding="utf-8"))
    except FileNotFoundError:
        return RoleDoc(path, "", f"role doc not found: {path} (using an empty system prompt)")
    except (OSError, UnicodeDecodeError) as exc:
        return RoleDoc(path, "", f"role doc unreadable: {path}: {exc} (using an empty system prompt)")


def check_role_file(path: str) -> Path:
    """Resolve a role doc given by the user; refuse what cannot be read as UTF-8 text."""
    p = Path(path).expanduser()
    if not p.exists():
        raise UsageError(f"role doc not found: {path}")
    if not p.is_file():
        raise UsageError(f"role doc is not a file: {path}")
    try:
        p.read_bytes().decode("utf-8")
    except OSError as exc:
        raise UsageError(f"role doc unreadable: {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise UsageError(f"role doc is not UTF-8 text: {path}") from None
    return p.resolve()


def fetch_role_doc(url: str, *, max_bytes: int = MAX_ROLE_BYTES, timeout: float = 30.0,
                   deadline: float = FETCH_DEADLINE) -> str:
    """Download a role doc once. Refuses non-https (also as a redirect target), >1 MB, non-UTF-8 and
    an answer not complete within ``deadline`` seconds, with one clear line.

    ``timeout`` bounds each network operation; a server dripping a byte every few seconds would
    keep each one short and the whole download going for days, so the download as a whole has a
    deadline too.
    """
    import threading

    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append(_download(url, max_bytes, timeout))
        except BaseException as exc:  # handed to the caller's thread below
            outcome.append(exc)

    worker = threading.Thread(target=run, name="mnemara-role-fetch", daemon=True)
    worker.start()
    worker.join(deadline)
    if not outcome:
        raise UsageError(f"refusing {url}: no complete answer within {deadline:g} s")
    if isinstance(outcome[0], BaseException):
        raise outcome[0]
    text: str = outcome[0]
    return text


def _download(url: str, max_bytes: int, timeout: float) -> str:
    import ssl
    import urllib.error
    import urllib.request

    parsed = urlparse(url)
    if parsed.scheme != "https" or not parsed.netloc:
        raise UsageError(f"refusing {url!r}: only https:// URLs are accepted")
    class HttpsOnlyRedirects(urllib.request.HTTPRedirectHandler):
        """Follow a redirect only to another https:// URL; anything else ends the fetch."""

        def http_error_302(self, req: urllib.request.Request, fp: IO[bytes], code: int, msg: str,
                           headers: HTTPMessage) -> Any:
            target = urljoin(req.full_url, headers.get("location") or headers.get("uri") or "")
            if urlparse(target).scheme != "https":
                raise UsageError(f"refusing {url}: it redirects to {target!r}, which is not https")
            return super().http_error_302(req, fp, code, msg, headers)

        http_error_301 = http_error_303 = http_error_307 = http_error_308 = http_error_302

    opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=ssl.create_default_context()),
                                         HttpsOnlyRedirects())
    request = urllib.request.Request(url, headers={"User-Agent": "mnemara"})
    try:
        with opener.open(request, timeout=timeout) as resp:
            declared = resp.headers.get("Content-Length")
            if declared and declared.isdigit() and int(declared) > max_bytes:
                raise UsageError(f"refusing {url}: {declared} bytes is over the {max_bytes} byte cap")
            data: bytes = resp.read(max_bytes + 1)
    except urllib.error.HTTPError as exc:
        raise UsageError(f"could not fetch {url}: HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise UsageError(f"could not fetch {url}: {reason}") from None
    if len(data) > max_bytes:
        raise UsageError(f"refusing {url}: larger than the {max_bytes} byte cap")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"refusing {url}: the document is not UTF-8 text") from None
    if not text.strip():
        raise UsageError(f"refusing {url}: the document is empty")
    return text
