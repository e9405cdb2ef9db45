"""The NATS transport's settings: URL, stream, subjects, credentials, each checked with a one-line refusal.

Subjects: a message from sender S to role R is published on ``<prefix>.to.R.S``; a
broadcast from S on ``<prefix>.broadcast.S``. The sender a panel shows is the last
token of the subject, never a header a client sets: a server that gives each panel
its own user allowed to publish only subjects ending in its role makes that token
what the server authenticated (docs/peer-inbox.md, "Identities"). One stream
(``peer_nats_stream``) holds ``<prefix>.>``; each panel role reads it through its own
durable pull consumer, named from the role, that filters its own subjects
(``<prefix>.to.R.*``) and the broadcasts of the senders it accepts (``peer_poll_roles``).
"""
from __future__ import annotations

import re
import ssl
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit, urlunsplit

from mnemara.core.redact import redact_url
from mnemara.core.errors import MnemaraError

if TYPE_CHECKING:
    from mnemara.core.config import Config

SCHEMES = ("nats", "tls", "ws", "wss")
TOKEN = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
PREFIX = re.compile(r"^[A-Za-z0-9_-]{1,64}(\.[A-Za-z0-9_-]{1,64}){0,7}$")
BROADCAST = "broadcast"
DIRECT = "to"
USER_INFO = "$SYS.REQ.USER.INFO"  # the server answers who this connection is and what it may do


class PeerSettingsError(MnemaraError, ValueError):
    """A peer transport setting that cannot be used; the message is one line naming it."""

    exit_code = 2


def check_url(url: str) -> str:
    """``url`` as given when it is a usable NATS URL (``nats://[user:pass@]host:port``, tls, ws, wss)."""
    text = (url or "").strip()
    if not text:
        raise PeerSettingsError("peer_nats_url is empty (e.g. nats://127.0.0.1:4222)")
    if any(c.isspace() for c in text) or "," in text:
        raise PeerSettingsError(f"peer_nats_url {redact(text)!r} is not one URL (spaces or commas)")
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise PeerSettingsError(f"peer_nats_url {redact(text)!r} is not a URL ({exc})") from None
    if parts.scheme not in SCHEMES:
        raise PeerSettingsError(f"peer_nats_url {redact(text)!r}: the scheme must be one of "
                                f"{', '.join(s + '://' for s in SCHEMES)}")
    if not parts.hostname:
        raise PeerSettingsError(f"peer_nats_url {redact(text)!r} names no host")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise PeerSettingsError(f"peer_nats_url {redact(text)!r}: a NATS URL has no path, query or fragment")
    if port == 0:
        raise PeerSettingsError(f"peer_nats_url {redact(text)!r}: port 0 is not a server port")
    return text


def redact(url: str) -> str:
    """``url`` with its password (or token) replaced by ``***``, for messages and the status line."""
    return redact_url(url)


def check_token(what: str, value: str) -> str:
    """A role, sender or stream name usable as one subject token and in a consumer name."""
    if not TOKEN.match(value or ""):
        raise PeerSettingsError(f"{what} {value!r} cannot be used with NATS: use 1-64 letters, digits, '-' or '_'")
    return value


def _path(what: str, raw: str, base: Path | None) -> Path | None:
    if not raw.strip():
        return None
    path = Path(raw.strip()).expanduser()
    if not path.is_absolute() and base is not None:
        path = base / path
    if not path.is_file():
        raise PeerSettingsError(f"{what} {path} is not a readable file")
    return path


def _covers(pattern: list[str], tokens: list[str]) -> bool:
    """Whether subject tokens ``pattern`` (``*`` a wildcard) match a prefix of ``tokens``."""
    return len(pattern) <= len(tokens) and all(p in ("*", t) for p, t in zip(pattern, tokens))


def inbox_prefix(role: str) -> str:
    """The reply subjects of a panel's connections (``_INBOX_<role>``): a server can then let each user
    subscribe to its own replies only, so no panel reads another's fetched messages."""
    return f"_INBOX_{check_token('role', role)}"


@dataclass(frozen=True)
class NatsSettings:
    url: str
    stream: str = "MNEMARA_PEER"
    prefix: str = "mnemara.peer"
    creds: Path | None = None
    tls_ca: Path | None = None
    tls_cert: Path | None = None
    tls_key: Path | None = None

    def __post_init__(self) -> None:
        check_url(self.url)
        check_token("peer_nats_stream", self.stream)
        if not PREFIX.match(self.prefix or ""):
            raise PeerSettingsError(f"peer_nats_subject_prefix {self.prefix!r} is not dot-separated tokens of "
                                    "letters, digits, '-' or '_'")
        if (self.tls_cert is None) != (self.tls_key is None):
            raise PeerSettingsError("peer_nats_tls_cert and peer_nats_tls_key go together (both or neither)")

    @classmethod
    def from_config(cls, config: "Config", base: Path | None = None) -> "NatsSettings":
        """The settings of a config; relative file paths are taken from ``base`` (the instance folder)."""
        return cls(
            url=check_url(config.peer_nats_url),
            stream=config.peer_nats_stream,
            prefix=config.peer_nats_subject_prefix,
            creds=_path("peer_nats_creds", config.peer_nats_creds, base),
            tls_ca=_path("peer_nats_tls_ca", config.peer_nats_tls_ca, base),
            tls_cert=_path("peer_nats_tls_cert", config.peer_nats_tls_cert, base),
            tls_key=_path("peer_nats_tls_key", config.peer_nats_tls_key, base),
        )

    @property
    def shown_url(self) -> str:
        return redact(self.url)

    def role_subject(self, role: str, sender: str) -> str:
        """The subject of a message from ``sender`` to ``role``."""
        return f"{self.prefix}.{DIRECT}.{check_token('role', role)}.{check_token('sender role', sender)}"

    def sender_of(self, subject: str) -> tuple[str, str | None] | None:
        """(sender, recipient role or None for a broadcast) named by ``subject``; None when it is not
        one of ours (a subject without a sender token is never shown as from anyone)."""
        head = f"{self.prefix}."
        if not subject.startswith(head):
            return None
        parts = subject[len(head):].split(".")
        if len(parts) == 3 and parts[0] == DIRECT and all(TOKEN.match(p) for p in parts[1:]):
            return parts[2], parts[1]
        if len(parts) == 2 and parts[0] == BROADCAST and TOKEN.match(parts[1]):
            return parts[1], None
        return None

    def broadcast_subject(self, sender: str) -> str:
        return f"{self.prefix}.{BROADCAST}.{check_token('sender role', sender)}"

    def durable(self, role: str) -> str:
        return f"mnemara_{check_token('role', role)}"

    def filter_subjects(self, role: str, senders: tuple[str, ...]) -> list[str]:
        """Our role's subject and the broadcasts of each accepted sender (never our own)."""
        subjects = [f"{self.prefix}.{DIRECT}.{check_token('role', role)}.*"]
        subjects += [self.broadcast_subject(s) for s in dict.fromkeys(senders) if s and s != role]
        return subjects

    def permissions(self, role: str, *, create_stream: bool = False) -> dict[str, Any]:
        """The NATS permissions a panel of ``role`` needs and no more (a user's ``permissions`` block in
        the server's config): publish only as ``role``, read only its own consumer, replies only to its
        own inbox prefix (:func:`inbox_prefix`). ``create_stream``: also create the stream (one user)."""
        durable, stream = self.durable(role), self.stream
        api = "$JS.API"
        publish = [f"{self.prefix}.{DIRECT}.*.{role}", f"{self.prefix}.{BROADCAST}.{role}",
                   f"{api}.STREAM.INFO.{stream}", f"{api}.CONSUMER.INFO.{stream}.{durable}",
                   f"{api}.CONSUMER.CREATE.{stream}.{durable}", f"{api}.CONSUMER.CREATE.{stream}.{durable}.>",
                   f"{api}.CONSUMER.DURABLE.CREATE.{stream}.{durable}", f"{api}.CONSUMER.MSG.NEXT.{stream}.{durable}",
                   f"{api}.CONSUMER.RESET.{stream}.{durable}", f"$JS.ACK.{stream}.{durable}.>",
                   USER_INFO]
        if create_stream:
            publish.append(f"{api}.STREAM.CREATE.{stream}")
        return {"publish": {"allow": publish}, "subscribe": {"allow": [f"{inbox_prefix(role)}.>"]}}

    def sends_as_others(self, allow: list[str] | None, role: str) -> bool:
        """Whether publish permissions ``allow`` (None: unrestricted) let a user publish a peer message
        under a sender token other than ``role``."""
        if allow is None:
            return True
        ours = self.prefix.split(".")
        for subject in allow:
            tokens = subject.split(".")
            if tokens[-1] == ">" and _covers(tokens[:-1], ours):
                return True  # a tail wildcard at or above the prefix covers every sender
            if len(tokens) > len(ours) and _covers(tokens[:len(ours)], ours) and tokens[-1] != role:
                return True  # a subject under the prefix whose last (sender) token is not ours
        return False

    def anonymous(self) -> "NatsSettings":
        """These settings without any credential (user, password, token, creds file, client certificate):
        what anyone who reaches the server can do."""
        parts = urlsplit(self.url)
        host = parts.netloc.rsplit("@", 1)[-1]
        return NatsSettings(url=urlunsplit((parts.scheme, host, "", "", "")), stream=self.stream, prefix=self.prefix,
                            tls_ca=self.tls_ca)

    @property
    def server_url(self) -> str:
        """The URL without its user info (given to ``nats.connect`` apart, see :meth:`connect_options`)."""
        parts = urlsplit(self.url)
        host = parts.hostname or ""
        if ":" in host:
            host = f"[{host}]"
        if parts.port is not None:
            host = f"{host}:{parts.port}"
        return urlunsplit((parts.scheme, host, "", "", ""))

    def connect_options(self) -> dict[str, Any]:
        """Keyword arguments for ``nats.connect`` beyond the URL: the URL's user and password (or token),
        percent-decoded so a password may hold any character; a creds file; TLS."""
        options: dict[str, Any] = {}
        parts = urlsplit(self.url)
        if parts.password is not None:
            options["user"] = unquote(parts.username or "")
            options["password"] = unquote(parts.password)
        elif parts.username:
            options["token"] = unquote(parts.username)
        if self.creds is not None:
            options["user_credentials"] = str(self.creds)
        scheme = urlsplit(self.url).scheme
        if self.tls_ca or self.tls_cert or scheme in ("tls", "wss"):
            try:
                context = ssl.create_default_context(cafile=str(self.tls_ca) if self.tls_ca else None)
                if self.tls_cert is not None and self.tls_key is not None:
                    context.load_cert_chain(str(self.tls_cert), str(self.tls_key))
            except (OSError, ssl.SSLError) as exc:
                raise PeerSettingsError(f"peer NATS TLS files cannot be used: {exc}") from None
            options["tls"] = context
        return options
