"""Every use of a private attribute of the Claude Agent SDK (and of what it runs on), in one place.

The SDK has no public way to send the CLI a ``rewind_conversation`` control
request, to reach the CLI process it started, or to say which command line it
would run; CLI reuse, ``/stop``'s kill and adopting the CLI started early need
all three. Each access is one small function here, and :data:`RELIED_ON` lists
every private name they read, so ``tests/claude/test_private_sdk.py`` can check
them against the installed SDK: an upgrade that renames one fails that test
instead of silently turning reuse or the kill off (the functions answer None
when a name is missing, and their callers then fall back to starting a fresh
process or to not killing).

:class:`~mnemara.claude.adopted.AdoptedTransport` offers the same names
(``_process``, its ``_transport``, that one's ``_loop``), so these functions
read an adopted process as they read one the SDK started.

Only this module may touch the SDK's private names (``tests/claude/test_private_sdk.py``
checks the rest of the package for ``getattr(x, "_name")`` and private SDK imports).
The SDK itself is imported lazily, by :func:`sdk_command` only.
"""
from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient


@dataclass(frozen=True)
class Reliance:
    """One private name read here: ``owner`` (``module`` or ``module:Class``) has ``attribute``:
    in the module, on the class itself (a method), or on every instance (set by ``__init__``)."""

    owner: str
    attribute: str
    on: Literal["module", "class", "instance"]
    why: str


#: Every private name this module reads, for the test that checks them on the installed packages.
RELIED_ON: tuple[Reliance, ...] = (
    Reliance("claude_agent_sdk:ClaudeSDKClient", "_query", "instance",
             "the control channel of a connected client (None before connect)"),
    Reliance("claude_agent_sdk._internal.query:Query", "_send_control_request", "class",
             "sends a control request and returns the CLI's answer"),
    Reliance("claude_agent_sdk:ClaudeSDKClient", "_transport", "instance",
             "the transport a connected client speaks through"),
    Reliance("claude_agent_sdk._internal.transport.subprocess_cli:SubprocessCLITransport", "_process", "instance",
             "the anyio process of the CLI it started (None when not connected)"),
    Reliance("claude_agent_sdk._internal.transport.subprocess_cli", "SubprocessCLITransport", "module",
             "the SDK's own transport, built here only to ask its command line"),
    Reliance("claude_agent_sdk._internal.transport.subprocess_cli:SubprocessCLITransport", "_build_command", "class",
             "the CLI command line for the transport's options"),
    Reliance("claude_agent_sdk.types", "_configure_can_use_tool", "module",
             "the options as connect() rewrites them when can_use_tool is set"),
    Reliance("anyio._backends._asyncio:Process", "_transport", "instance",
             "the asyncio subprocess transport under an anyio process"),
    Reliance("asyncio.base_subprocess:BaseSubprocessTransport", "_loop", "instance",
             "the event loop an asyncio subprocess transport belongs to"),
    Reliance("asyncio.base_subprocess:BaseSubprocessTransport", "_closed", "instance",
             "whether the transport was closed: set for one whose loop has closed (see mark_closed)"),
)

ControlSender = Callable[[dict[str, Any]], Awaitable[Any]]


class CliProcess(Protocol):
    """What Mnemara uses of a CLI's process: anyio's ``Process`` for the SDK's own transport, the
    process view of an adopted one (:mod:`mnemara.claude.adopted`)."""

    @property
    def pid(self) -> int: ...

    @property
    def returncode(self) -> int | None: ...

    def kill(self) -> None: ...


def control_sender(client: ClaudeSDKClient) -> ControlSender | None:
    """The coroutine function that sends ``client``'s CLI a control request and returns its answer
    (``client._query._send_control_request``); None before ``connect()`` or when the SDK renamed it."""
    sender: ControlSender | None = getattr(getattr(client, "_query", None), "_send_control_request", None)
    return sender


def cli_process(client: ClaudeSDKClient) -> CliProcess | None:
    """The CLI process of a connected ``client`` (``client._transport._process``: an anyio
    ``Process`` for the SDK's own transport, a process view for an adopted one), with
    ``pid``, ``returncode`` and ``kill()``; None when there is none."""
    process: CliProcess | None = getattr(getattr(client, "_transport", None), "_process", None)
    return process


def asyncio_transport(process: CliProcess | None) -> asyncio.SubprocessTransport | None:
    """The asyncio subprocess transport under a process from :func:`cli_process` (anyio's
    ``Process._transport``), the thing whose ``close()`` frees its pipes; None when there is none."""
    transport: asyncio.SubprocessTransport | None = getattr(process, "_transport", None)
    return transport


def transport_loop(transport: asyncio.BaseTransport) -> asyncio.AbstractEventLoop | None:
    """The event loop ``transport`` (from :func:`asyncio_transport`) must be closed on
    (asyncio's ``BaseSubprocessTransport._loop``); None when it does not say."""
    loop: asyncio.AbstractEventLoop | None = getattr(transport, "_loop", None)
    return loop


def mark_closed(transport: asyncio.BaseTransport) -> None:
    """Mark ``transport`` (from :func:`asyncio_transport`), whose event loop has closed, as closed
    (``BaseSubprocessTransport._closed``). Nothing can close it any more: ``close()`` schedules on
    its loop, and the garbage collector's call of it raised "Event loop is closed" into whatever
    the process was writing then (a session whose turns ran under an ``asyncio.run()`` that has
    returned). Its process is killed first (:func:`mnemara.claude.process.release_transport`), and
    its pipes' files are closed by their own finalizers, which need no loop."""
    if hasattr(transport, "_closed"):
        transport._closed = True


def sdk_command(options: ClaudeAgentOptions) -> list[str]:
    """The command line the SDK's subprocess transport would run for ``options``, exactly as
    ``ClaudeSDKClient.connect()`` prepares them (imports the SDK)."""
    from claude_agent_sdk._internal.transport.subprocess_cli import SubprocessCLITransport
    from claude_agent_sdk.types import _configure_can_use_tool

    transport = SubprocessCLITransport(prompt="", options=_configure_can_use_tool(options))
    return list(transport._build_command())
