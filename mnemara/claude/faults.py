"""API faults end fast and cleanly: retry budget, rejected keys, silent streams.

* :func:`retry_env` gives the Claude CLI its retry budget for 5xx/529/429
  (``api_max_retries`` in config.json; the CLI's own default is 10 retries over
  about three minutes). ``CLAUDE_CODE_MAX_RETRIES`` set in the environment wins,
  so a test or a user can still override it for one run.
* A rejected key (HTTP 401/403) is not worth retrying: the CLI retries it like
  any error, so the turn ends on the first such answer (see
  ``TurnCollector.auth_rejected``) with :func:`auth_message`.
* :class:`StallWatch` ends a turn whose API call sends nothing for
  ``api_stall_seconds``. Its clock only runs while the API owes us something
  (from a request being sent until the answer's ``message_stop``), never while
  a tool runs or the user answers a permission prompt.

No SDK import here; :mod:`mnemara.claude.bridge` maps SDK messages onto the watch.
"""
from __future__ import annotations

import asyncio
import inspect
import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mnemara.claude.additions import RETRY_ENV as RETRY_ENV

if TYPE_CHECKING:
    from claude_agent_sdk import ClaudeSDKClient


def retry_env(max_retries: int, environ: dict[str, str] | None = None) -> dict[str, str]:
    """The env entry that caps the CLI's API retries (empty when the environment already sets it)."""
    env = os.environ if environ is None else environ
    if env.get(RETRY_ENV, "").strip():
        return {}
    return {RETRY_ENV: str(max_retries)}


def auth_message(status: int | None) -> str:
    """The one line a rejected key gets."""
    code = f" (HTTP {status})" if status else ""
    if status == 403:
        return (f"authentication failed{code}: the API refused this key permission; check ANTHROPIC_API_KEY "
                "and its workspace; your message is saved")
    return f"authentication failed{code}: the API rejected the key; check ANTHROPIC_API_KEY; your message is saved"


def stall_message(seconds: float) -> str:
    return (f"the API sent nothing for {seconds:g} s, so the turn was ended (api_stall_seconds in config.json); "
            "your message is saved, send again to retry")


class StallWatch:
    """Calls ``on_stall`` once when the API owes an answer and has been silent for ``seconds``.

    ``on_stall`` may be a coroutine function; it runs inside :meth:`run`, so cancelling
    the watch (the turn ended) also cancels what it is still doing.
    """

    def __init__(self, seconds: float, on_stall: Callable[[], Any], clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = float(seconds)
        self.on_stall = on_stall
        self.fired = False
        self._clock = clock
        self._waiting = False
        self._quiet_since = clock()

    def awaiting_api(self) -> None:
        """A request went out (the turn's first, or the one after tool results)."""
        self._waiting = True
        self._quiet_since = self._clock()

    def activity(self, grace: float = 0.0) -> None:
        """Something arrived; ``grace`` extra seconds for a retry the CLI announced it will wait for."""
        self._quiet_since = self._clock() + max(0.0, grace)

    def idle(self) -> None:
        """The answer is complete: tools or the user are working, the API owes nothing."""
        self._waiting = False

    def overdue(self) -> bool:
        return self._waiting and self._clock() - self._quiet_since >= self.seconds

    async def run(self, tick: float = 0.25) -> None:
        """Watch until cancelled or fired."""
        while not self.fired:
            await asyncio.sleep(min(tick, self.seconds))
            if self.overdue():
                self.fired = True
                result = self.on_stall()
                if inspect.isawaitable(result):
                    await result


async def stop_calling(client: ClaudeSDKClient, kill: Callable[[ClaudeSDKClient], None], grace: float = 3.0) -> None:
    """Make the CLI drop its API call and any retries now: interrupt it, or kill it if it cannot take that."""
    try:
        await asyncio.wait_for(client.interrupt(), grace)
    except Exception:  # noqa: BLE001 - a CLI that cannot take the interrupt is killed instead
        kill(client)


async def end_stalled_call(client: ClaudeSDKClient, kill: Callable[[ClaudeSDKClient], None], grace: float = 5.0) -> None:
    """Interrupt the CLI's silent API call (the turn then ends with a result); kill the CLI
    if it has not ended the turn ``grace`` seconds later."""
    await stop_calling(client, kill, grace)
    await asyncio.sleep(grace)
    kill(client)
