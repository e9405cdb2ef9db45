"""One instance: a folder under ``$MNEMARA_HOME`` holding everything it knows.

Layout (names from the spec)::

    <home>/<name>/
        config.json  turns.sqlite  permissions.json  role.md  debug.log  .prompt_history
        memory/YYYY-MM-DD.md  memory/archive/
        wiki/  index/  graph/  wiki_proposals/  sleep/  role_proposals/

This module knows paths and names only; it imports nothing heavy.
"""
from __future__ import annotations

import fcntl
import logging
import os
import re
import shutil
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from mnemara.core.debuglog import DEBUG_LOG, instance_logger
from mnemara.core.errors import InstanceBusy, InstanceExists, InstanceNotFound, UsageError
from mnemara.core.fsutil import (
    PRIVATE_DIR,
    PRIVATE_FILE,
    atomic_write_text,
    open_nofollow,
    private_mkdir,
    rewrite_in_place,
    touch_private,
)

NAME_RE = re.compile(r"[A-Za-z0-9._-]{1,64}")
SUBDIRS = (
    "memory",
    "memory/archive",
    "wiki",
    "index",
    "graph",
    "wiki_proposals",
    "sleep",
    "role_proposals",
)


def mnemara_home() -> Path:
    """The root of all instances: ``$MNEMARA_HOME`` or ``~/.mnemara``."""
    env = os.environ.get("MNEMARA_HOME")
    return Path(env).expanduser().absolute() if env else Path.home() / ".mnemara"


def validate_name(name: str) -> str:
    """Return ``name`` if it is a safe instance name, else raise :class:`UsageError`."""
    if not isinstance(name, str) or not NAME_RE.fullmatch(name) or name.startswith("."):
        raise UsageError(
            f"invalid instance name {name!r}: use 1-64 of letters, digits, '.', '_' or '-', "
            "not starting with '.'"
        )
    return name


@dataclass(frozen=True)
class Instance:
    """Paths of one instance. Construct with :meth:`open` or :meth:`create`."""

    name: str
    root: Path

    # -- paths -------------------------------------------------------------
    @property
    def config_path(self) -> Path:
        return self.root / "config.json"

    @property
    def turns_path(self) -> Path:
        return self.root / "turns.sqlite"

    @property
    def permissions_path(self) -> Path:
        return self.root / "permissions.json"

    @property
    def role_copy_path(self) -> Path:
        """Where ``role --set-from-url`` saves the downloaded role doc."""
        return self.root / "role.md"

    @property
    def debug_log_path(self) -> Path:
        return self.root / DEBUG_LOG

    @property
    def logger(self) -> logging.Logger:
        """This instance's logger: what it logs is written to :attr:`debug_log_path` as JSON lines, and
        reaches any handler an embedder adds (:mod:`mnemara.core.debuglog` says how)."""
        return instance_logger(self.debug_log_path)

    @property
    def prompt_history_path(self) -> Path:
        return self.root / ".prompt_history"

    @property
    def memory_dir(self) -> Path:
        return self.root / "memory"

    @property
    def archive_dir(self) -> Path:
        return self.root / "memory" / "archive"

    @property
    def wiki_dir(self) -> Path:
        return self.root / "wiki"

    @property
    def index_dir(self) -> Path:
        return self.root / "index"

    @property
    def graph_dir(self) -> Path:
        return self.root / "graph"

    @property
    def wiki_proposals_dir(self) -> Path:
        return self.root / "wiki_proposals"

    @property
    def sleep_dir(self) -> Path:
        return self.root / "sleep"

    @property
    def role_proposals_dir(self) -> Path:
        return self.root / "role_proposals"

    # -- lifecycle ---------------------------------------------------------
    @classmethod
    def path_for(cls, name: str, home: Path | None = None) -> Path:
        return (home or mnemara_home()) / validate_name(name)

    @classmethod
    def open(cls, name: str, home: Path | None = None) -> "Instance":
        """Open an existing instance or raise :class:`InstanceNotFound`."""
        root = cls.path_for(name, home)
        if root.is_dir() and not (root / "config.json").exists():
            raise InstanceNotFound(
                f"{root} exists but has no config.json, so it is not an instance (restore config.json, "
                f"or move the folder away and run: mnemara init --instance {name})"
            )
        if not (root / "config.json").is_file():
            near = nearest_instance(name, root.parent)
            if near is not None:
                raise InstanceNotFound(f"no instance {name!r} under {root.parent}: did you mean `{near}`? "
                                       f"(to create {name!r}: mnemara init --instance {name})")
            raise InstanceNotFound(
                f"no instance {name!r} under {root.parent} (create it with: mnemara init --instance {name})"
            )
        _make_private(root)
        return cls(name=name, root=root)

    @classmethod
    def at(cls, root: Path, name: str | None = None) -> "Instance":
        """An instance living in an arbitrary folder (for embedding); created if missing."""
        root = Path(root).expanduser().resolve()
        inst = cls(name=name or root.name, root=root)
        inst.ensure_layout()
        return inst

    @classmethod
    def create(cls, name: str, home: Path | None = None, role_doc_path: str = "") -> "Instance":
        """Create a new instance; refuses to touch an existing folder."""
        from mnemara.core.config import Config

        root = cls.path_for(name, home)
        if root.exists():
            raise InstanceExists(f"instance {name!r} already exists at {root}; refusing to overwrite")
        private_mkdir(root.parent)
        root.mkdir(mode=PRIVATE_DIR)
        inst = cls(name=name, root=root)
        inst.ensure_layout()
        Config(role_doc_path=role_doc_path).save(inst.config_path)
        from mnemara.store.turns import TurnStore

        TurnStore(inst.turns_path).close()
        return inst

    def ensure_layout(self) -> None:
        """Create any missing folder or empty file of the layout (never overwrites)."""
        private_mkdir(self.root)
        for sub in SUBDIRS:
            private_mkdir(self.root / sub)
        if not self.permissions_path.exists():
            atomic_write_text(self.permissions_path, '{\n  "allowed_patterns": {}\n}\n')
        for path in (self.debug_log_path, self.prompt_history_path):
            touch_private(path)
        if not self.config_path.exists():
            from mnemara.core.config import Config

            Config().save(self.config_path)

    def delete(self) -> None:
        shutil.rmtree(self.root)


def _make_private(root: Path) -> None:
    """Close an instance folder created before folders were private (0700); never raises."""
    try:
        st = root.stat()
        if st.st_uid == os.getuid() and st.st_mode & 0o077:
            os.chmod(root, PRIVATE_DIR)
    except OSError:
        pass


RUN_LOCK = ".run.lock"
_PID_WIDTH = 24  # the holder's pid, padded: each run overwrites the last one's in place (no truncation)


@contextmanager
def run_lock(instance: Instance) -> Iterator[None]:
    """Hold the instance's session lock for the block; :class:`InstanceBusy` when another process has it.

    Two chat sessions on one instance would each append to the same rolling window,
    interleaving two conversations. ``mnemara note``, ``show`` and the memory tools do
    not take this lock: they are safe beside a running session.
    """
    path = instance.root / RUN_LOCK
    fd = open_nofollow(path, os.O_RDWR | os.O_CREAT, PRIVATE_FILE)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
            raise InstanceBusy(
                f"instance {instance.name!r} is already open in another `mnemara run` or `mnemara serve` (pid {holder}); two sessions "
                "on one instance would interleave their turns in one window. Close the other one first, or use "
                "another instance") from None
        rewrite_in_place(fd, f"{os.getpid()}".ljust(_PID_WIDTH - 1).encode() + b"\n")
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def nearest_instance(name: str, home: Path | None = None) -> str | None:
    """The existing instance whose name is closest to ``name`` (a typo, another case), if any is close."""
    import difflib

    names = list_instances(home)
    same_case = [n for n in names if n.lower() == name.lower()]
    if same_case:
        return same_case[0]
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    return close[0] if close else None


def list_instances(home: Path | None = None) -> list[str]:
    """Names of the instances under ``home``, sorted."""
    base = home or mnemara_home()
    if not base.is_dir():
        return []
    return sorted(
        p.name
        for p in base.iterdir()
        if p.is_dir() and NAME_RE.fullmatch(p.name) and not p.name.startswith(".") and (p / "config.json").is_file()
    )
