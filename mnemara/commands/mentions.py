"""``@path`` in a message attaches that file's text, as in Claude Code (issue 39); one implementation for the
panel and the REPL.

A mention is ``@`` at the start of the message or after a space, followed by a path (``@src/app.py``,
``@~/notes.md``, ``@"a file with spaces.txt"``). Each mentioned file goes through the permission gate as a
**Read** of that path would (``file_tool_home_only`` and ``file_tool_roots``, per-process paths, pipes and
devices, ``Read: deny``): the user's own mention is the user's yes, so ``Read: ask`` does not ask again,
but nothing Read may never open is attached. A file is attached when it is a regular UTF-8 text file of at
most :data:`MAX_MENTION_BYTES`; the message then carries, after the text as typed, one block per file
labelled as the user's attachment::

    <user_attachment path="/home/me/src/app.py" lines="120" bytes="4096">
    ...the file's text...
    </user_attachment>

That is what is stored in the window and sent (``mnemara context --call N`` shows it). A mention that
cannot be attached refuses the whole message, in one line that says why; the UI gives the message back to
edit, so nothing is lost. A word like ``@alice`` that names no file and does not look like a path (no
``/``, no ``.``, no ``~``) is not a mention and is sent as typed; ``@@`` sends one ``@`` as is.
"""
from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mnemara.core.errors import UsageError
from mnemara.guard.target_text import show_target

if TYPE_CHECKING:
    from mnemara.guard.gate import PermissionGate

#: The largest file one mention attaches (about 64k tokens of text).
MAX_MENTION_BYTES = 256 * 1024
#: All the files of one message together.
MAX_MESSAGE_ATTACHED_BYTES = 1024 * 1024
#: ``@`` at the start or after white space; a quoted path, or one running to the next white space.
_MENTION = re.compile(r'(?<!\S)@(?:"([^"\n]+)"|([^\s"@][^\s]*))')
_TRAILING = ",;:!?)]}'"


@dataclass(frozen=True)
class Attachment:
    """One mentioned file: as typed, where it resolved, and its text."""

    mention: str
    path: str
    text: str

    @property
    def lines(self) -> int:
        return self.text.count("\n") + (0 if self.text.endswith("\n") or not self.text else 1)

    @property
    def size(self) -> int:
        return len(self.text.encode("utf-8"))

    def block(self) -> str:
        """The labelled block the message carries (the path quoted as JSON would, so it stays one token)."""
        path = self.path.replace("\\", "\\\\").replace('"', '\\"')
        body = self.text if self.text.endswith("\n") or not self.text else self.text + "\n"
        return f'<user_attachment path="{path}" lines="{self.lines}" bytes="{self.size}">\n{body}</user_attachment>'

    def summary(self) -> str:
        """One line for the log: what was attached, the path shown whole and escaped."""
        return f"attached by you: {show_target(self.path).text} ({self.lines} lines, {self.size} bytes)"


@dataclass(frozen=True)
class PreparedMessage:
    """A message ready to send: ``text`` (as typed plus the attachments' blocks) and what was attached."""

    typed: str
    attachments: tuple[Attachment, ...] = ()

    @property
    def text(self) -> str:
        if not self.attachments:
            return self.typed
        return "\n\n".join([self.typed, *(a.block() for a in self.attachments)])

    def shown(self) -> str:
        """What the log shows for the message: the text as typed and one line per attachment."""
        return "\n".join([self.typed, *(a.summary() for a in self.attachments)])


def mentioned_paths(text: str) -> list[tuple[str, bool]]:
    """Each ``@`` mention in ``text``: ``(path as typed, quoted)``, in order (``@@`` is none)."""
    return [(m.group(1), True) if m.group(1) is not None else (m.group(2), False) for m in _MENTION.finditer(text)]


def _looks_like_path(word: str) -> bool:
    return "/" in word or "." in word or word.startswith("~")


def _expanded(path: str, cwd: str) -> str:
    full = os.path.expanduser(path)
    return full if os.path.isabs(full) else os.path.join(cwd, full)


def _pick(word: str, quoted: bool, cwd: str) -> str | None:
    """The path a mention names (trailing punctuation dropped when only that names a file), or None when
    the word is not a mention at all (no such file, and it does not look like a path)."""
    if quoted or os.path.lexists(_expanded(word, cwd)):
        return word
    trimmed = word.rstrip(_TRAILING)
    if trimmed and trimmed != word and os.path.lexists(_expanded(trimmed, cwd)):
        return trimmed
    return word if _looks_like_path(trimmed or word) else None


def prepare_message(text: str, gate: PermissionGate, cwd: str) -> PreparedMessage:
    """``text`` with every file it mentions attached; raises :class:`UsageError` (one line) when one cannot be."""
    attachments: list[Attachment] = []
    seen: set[str] = set()
    total = 0
    for word, quoted in mentioned_paths(text):
        path = _pick(word, quoted, cwd)
        if path is None:
            continue
        attachment = read_mention(path, gate, cwd)
        if attachment.path in seen:
            continue
        seen.add(attachment.path)
        total += attachment.size
        if total > MAX_MESSAGE_ATTACHED_BYTES:
            raise UsageError(f"@{show_target(path).text}: the files of one message may hold at most "
                             f"{MAX_MESSAGE_ATTACHED_BYTES // 1024} KB together; message not sent")
        attachments.append(attachment)
    return PreparedMessage(text.replace("@@", "@") if "@@" in text else text, tuple(attachments))


def read_mention(path: str, gate: PermissionGate, cwd: str) -> Attachment:
    """The attachment for ``@path``: checked by the gate as a Read of it, then read (a regular UTF-8 file)."""
    shown = show_target(path).text
    full = _expanded(path, cwd)
    decision = gate.decide("Read", {"file_path": full})
    if decision.verdict == "deny":
        raise UsageError(f"@{shown}: {decision.reason}; message not sent")
    resolved = os.path.realpath(full)
    try:
        fd = os.open(resolved, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise UsageError(f"@{shown}: no such file; message not sent (Tab after @ completes paths; @@ sends an @)")
    except OSError as exc:
        raise UsageError(f"@{shown}: cannot be read ({exc.strerror or exc}); message not sent")
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise UsageError(f"@{shown}: is a folder; mention a file in it (Tab completes); message not sent")
        if not stat.S_ISREG(info.st_mode):
            raise UsageError(f"@{shown}: is not a regular file; message not sent")
        if info.st_size > MAX_MENTION_BYTES:
            raise UsageError(f"@{shown}: {info.st_size} bytes, over the {MAX_MENTION_BYTES // 1024} KB an @ mention "
                             "attaches; ask the agent to Read the part you need; message not sent")
        data = os.read(fd, MAX_MENTION_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_MENTION_BYTES:
        raise UsageError(f"@{shown}: over the {MAX_MENTION_BYTES // 1024} KB an @ mention attaches; message not sent")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = ""
    if (not text and data) or "\x00" in text:
        raise UsageError(f"@{shown}: not UTF-8 text (a binary file?); only text files are attached; message not sent")
    return Attachment(path, resolved, text)
