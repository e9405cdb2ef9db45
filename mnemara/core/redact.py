"""Credentials taken out of URLs before they reach ``debug.log`` or the screen.

A base URL or server URL may carry a password (``https://user:pass@proxy``), a token as the
user (``nats://TOKEN@host``), a token in its path (``https://gw.example/t/3f9a...``) or in its
query (``?key=...``). :func:`redact_url` keeps what tells the user *which* server it is (scheme,
host, port, the path's ordinary words, the query's keys) and shows ``***`` for the rest;
:func:`redact_urls_in` does it for every URL inside a text. ``debug.log`` applies it to every
field of every event (:class:`~mnemara.core.debuglog.JsonLinesFormatter`), and the CLI to every
error line it prints, so a new event or message cannot leak one.
"""
from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

MASK = "***"
_URL = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]{1,15}://[^\s\"'<>`]+")
#: A path segment that reads as a credential: known key prefixes, or long and mixing letters and digits.
_PREFIXED = re.compile(r"^(sk-|sk_|pk_|ghp_|gho_|github_pat_|xox[abpr]-|glpat-|AKIA)", re.I)


def _secret_segment(segment: str) -> bool:
    if _PREFIXED.match(segment):
        return True
    return (len(segment) >= 16 and any(c.isdigit() for c in segment) and any(c.isalpha() for c in segment)
            and not re.fullmatch(r"v\d+(\.\d+)*", segment))


def redact_url(url: str) -> str:
    """``url`` with its password or user token, secret-looking path segments and query values as ``***``."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return "(a URL that cannot be parsed)"
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    if port is not None:
        host = f"{host}:{port}"
    if parts.password is not None:
        host = f"{parts.username or ''}:{MASK}@{host}"
    elif parts.username:
        host = f"{MASK}@{host}"
    path = "/".join(MASK if _secret_segment(seg) else seg for seg in parts.path.split("/"))
    query = "&".join(f"{pair.split('=', 1)[0]}={MASK}" if "=" in pair else (MASK if pair else pair)
                     for pair in parts.query.split("&")) if parts.query else ""
    fragment = MASK if parts.fragment else ""
    return urlunsplit((parts.scheme, host if parts.netloc else parts.netloc, path, query, fragment))


def redact_urls_in(text: str) -> str:
    """``text`` with every URL in it passed through :func:`redact_url` (text without ``://`` is returned as is)."""
    if "://" not in text:
        return text
    return _URL.sub(lambda m: redact_url(m.group()), text)
