"""Slash commands: ONE implementation shared by the TUI, the REPL and tests.

A command is a function ``(ctx, args) -> CommandResult`` registered with
:func:`command`. ``ctx`` is a :class:`CommandContext` (an ``AgentSession`` is
one; tests run commands against a real session too). Commands change
config.json only through ``ctx.update_config`` so every holder of the live
config sees the change. The UI only renders ``CommandResult.text`` and reacts
to ``CommandResult.action``.

Every module of this package (``core``, ``context``, ...) registers its
commands on import; :func:`load_all` imports them all (discovered, no list to edit).
"""
from __future__ import annotations

import importlib
import pkgutil
import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Literal, Protocol

from mnemara.commands.payloads import CommandPayload, Confirm, CopyText, FileShown, InboxState, RefusedInput, SendTurn
from mnemara.core.errors import MnemaraError

if TYPE_CHECKING:
    from mnemara.core.config import Config
    from mnemara.store.instance import Instance
    from mnemara.memory.autorecall import AutoRecall
    from mnemara.peer.inbox import PeerInbox
    from mnemara.store.turns import TurnStore
    from mnemara.session.spend import SessionSpend
    from mnemara.session.usage import StatsFile


class CommandContext(Protocol):
    """What a slash command may use: :class:`mnemara.session.agent.AgentSession` provides all of it."""

    instance: Instance
    store: TurnStore
    busy: bool
    peer_inbox: PeerInbox | None
    auto_recall: AutoRecall
    usage_stats: StatsFile
    spend: SessionSpend  # the spend ledger, the caps and the recorder's gate (/cost, /budget)

    @property
    def config(self) -> Config:
        """The live config (read-only: change it through the methods below)."""
        ...

    def update_config(self, **changes: Any) -> Config:
        """Validate, save atomically and make the change live for every holder."""
        ...

    def override_config(self, **changes: Any) -> Config:
        """Change fields for this session only (validated, not saved)."""
        ...

    def apply_config(self, config: Config) -> Config:
        """Make an already saved config live (e.g. after ``/import`` wrote config.json)."""
        ...



#: What a UI does with a command's result besides showing its text: ``send`` a turn (a :class:`SendTurn`),
#: ``stop`` the running turn, ``quit``, ``confirm`` (ask, then run the :class:`Confirm`'s command), ``copy``
#: (a :class:`CopyText` to the clipboard), ``offer_role_copy`` (a :class:`FileShown`), ``open_role_editor``,
#: ``open_context``, ``clear_log``, ``inbox_state`` (redraw the inbox toggle from an :class:`InboxState`).
CommandAction = Literal[
    "send", "stop", "quit", "confirm", "copy", "offer_role_copy", "open_role_editor", "open_context",
    "clear_log", "inbox_state",
]


@dataclass
class CommandResult:
    """What a command hands back to the UI: ``text`` to show, an ``action`` the UI carries out and
    the ``payload`` that action (or the command's answer as data) needs; see :mod:`mnemara.commands.payloads`.

    An action that needs a payload is refused without one of its type (a bug in the command)."""

    text: str = ""
    ok: bool = True
    action: CommandAction | None = None
    payload: CommandPayload | None = None

    def __post_init__(self) -> None:
        needed = ACTION_PAYLOADS.get(self.action) if self.action else None
        if needed is not None and not isinstance(self.payload, needed):
            raise TypeError(f"a {self.action!r} result needs a {needed.__name__} payload, not {self.payload!r}")


#: The payload type each action that needs one carries.
ACTION_PAYLOADS: dict[str, type] = {
    "send": SendTurn, "confirm": Confirm, "copy": CopyText, "offer_role_copy": FileShown, "inbox_state": InboxState,
}


@dataclass(frozen=True)
class CommandSpec:
    name: str
    func: Callable[[CommandContext, str], CommandResult]
    usage: str
    help: str
    tui_only: bool = False
    aliases: tuple[str, ...] = ()
    listed: bool = True  # in /help's list of commands (False: an answer listed elsewhere, see claude_code)


_REGISTRY: dict[str, CommandSpec] = {}


def command(name: str, *, usage: str = "", help: str = "", tui_only: bool = False, aliases: tuple[str, ...] = ()):
    """Register a slash command implementation."""

    def decorate(func: Callable[[CommandContext, str], CommandResult]) -> Callable[[CommandContext, str], CommandResult]:
        spec = CommandSpec(name, func, usage or f"/{name}", help, tui_only, aliases)
        for key in (name, *aliases):
            _REGISTRY[key] = spec
        return func

    return decorate


def add_alias(alias: str, target: str) -> bool:
    """Make ``/alias`` run the registered command ``target`` (not a Tab candidate: its spec's own
    ``aliases`` are). Refused (False) when ``alias`` is taken by another command or ``target`` is unknown."""
    spec = _REGISTRY.get(target)
    taken = _REGISTRY.get(alias)
    if spec is None or (taken is not None and taken is not spec):
        return False
    _REGISTRY[alias] = spec
    return True


def names_of(spec: CommandSpec) -> list[str]:
    """Every name that runs ``spec`` besides its own: its aliases and the names added by :func:`add_alias`."""
    return sorted(key for key, value in _REGISTRY.items() if value is spec and key != spec.name)


def load_all() -> None:
    """Import every topic module of this package once (they register on import)."""
    for info in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{info.name}")


def specs() -> list[CommandSpec]:
    """Every registered command once, sorted by name (not the unlisted answers to Claude Code's names)."""
    load_all()
    return sorted({id(s): s for s in _REGISTRY.values() if s.listed}.values(), key=lambda s: s.name)


def is_command(line: str) -> bool:
    return line.startswith("/") and not line.startswith("//")


def split_args(args: str) -> list[str]:
    """Shell-like split of a command's arguments (quotes allowed); raises ValueError on bad quoting."""
    return shlex.split(args)


def dispatch(ctx: CommandContext, line: str) -> CommandResult:
    """Run one slash command line. Unknown commands and bad arguments answer, never raise."""
    load_all()
    head, _, rest = line.strip()[1:].partition(" ")
    name = head.strip().lower()
    spec = _REGISTRY.get(name)
    if spec is None:  # refused as typed: a panel gives the line back (it may be a message starting with /)
        return CommandResult(f"unknown command /{name}{did_you_mean(name)} (/help lists them; a message that starts "
                             "with / is sent as //...)", ok=False, payload=RefusedInput())
    try:
        return spec.func(ctx, rest.strip())
    except MnemaraError as exc:
        return CommandResult(f"/{spec.name}: {exc.message}", ok=False)
    except ValueError as exc:
        return CommandResult(f"/{spec.name}: {exc}\nusage: {spec.usage}", ok=False, payload=RefusedInput())


def did_you_mean(name: str) -> str:
    """``: did you mean /x?`` for the registered names closest to ``name`` (or "" when none is close)."""
    import difflib

    close = difflib.get_close_matches(name, sorted(_REGISTRY), n=3, cutoff=0.6)
    if not close:
        close = sorted(key for key in _REGISTRY if len(name) >= 2 and key.startswith(name))[:3]
    return f": did you mean {' or '.join('/' + c for c in close)}?" if close else ""
