"""The peer inbox beside the REPL (``peer_poll_enabled: true``).

The inbox runs on the loop that runs the session's turns (``session.run_coroutine``).

* On a terminal it polls in the background and delivers when no turn runs and
  you are not in the middle of one: the injected turn is printed above the
  ``you>`` prompt. A message you send while an inbox turn runs waits for it
  (Ctrl+C or ``/stop`` stops the inbox turn).
* Without a terminal (a pipe, a file) the fixed points stay: the first one waits
  for the transport to be connected (at most ``CONNECT_WAIT_S``, 10 s, for NATS)
  and what is pending is delivered before each input line is read and once more at
  end of input (not after ``/quit``). Between them, while the REPL waits for its
  next line, messages that arrive are delivered too (in the background, never
  during a line's own turn), so a script can serve an inbox.

An inbox turn cannot ask you a permission question (you may be typing, or the
next input line is a message, not an answer): a tool on ``ask`` is refused in
that turn, with a line saying so. Pre-approve what inbox turns need in
``config.json``.

``/inbox`` (on, off, status) toggles delivery as in the panel.
"""
from __future__ import annotations

import asyncio
import sys
import threading
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Callable, Iterator, TextIO

from mnemara.core import events as ev
from mnemara.core.errors import MnemaraError
from mnemara.core.display import terminal_safe

if TYPE_CHECKING:
    from mnemara.guard.request import PermissionRequest
    from mnemara.commands.session_api import SessionAPI
    from mnemara.peer.inbox import PeerInbox

CLOSE_TIMEOUT_SECONDS = 15.0
WAIT_NOTICE = "(an inbox turn is running; your message goes next. Ctrl+C stops the inbox turn)"


class ReplInbox:
    """A :class:`mnemara.peer.PeerInbox` wired to a REPL: delivery, printing, idleness."""

    def __init__(self, session: SessionAPI, make_renderer: Callable[[], Callable[[ev.Event], None]],
                 info: Callable[[], TextIO]) -> None:
        from mnemara.peer import attach_inbox, session_deliverer

        self.session = session
        self._make_renderer = make_renderer
        self._info = info
        self._user_active = threading.Event()  # a user line is being handled: the inbox waits
        self._closing = False  # leaving: no inbox turn starts any more
        self.delivering = False
        base = session_deliverer(session, on_turn=self._on_turn)

        async def deliver(text: str) -> None:
            self.delivering = True
            try:
                await base(text)
            finally:
                self.delivering = False

        inbox = attach_inbox(session, deliver=deliver, is_idle=self._idle, on_notice=self._say)
        if inbox is None:
            raise MnemaraError("peer_poll_enabled is false in config.json: no inbox to run")
        self.inbox: PeerInbox = inbox

    @classmethod
    def attach(cls, session: SessionAPI, make_renderer: Callable[[], Callable[[ev.Event], None]],
               info: Callable[[], TextIO]) -> "ReplInbox | None":
        """The REPL's inbox, or None when ``peer_poll_enabled`` is off."""
        if not session.config.peer_poll_enabled:
            return None
        return cls(session, make_renderer, info)

    # -- state ---------------------------------------------------------------------
    def _idle(self) -> bool:
        return not self._closing and not self.session.busy and not self._user_active.is_set()

    def banner(self) -> str:
        inbox = self.inbox
        return f"{inbox.state_text} · role {inbox.role} · {inbox.source_text} · /inbox toggles delivery"

    def _say(self, text: str) -> None:
        out = self._info()
        out.write(terminal_safe(text) + "\n")  # a peer's message: its control characters are shown, not obeyed
        out.flush()

    def _on_turn(self, text: str) -> Callable[[ev.Event], None]:
        first = text.splitlines()[0] if text else ""
        self._say(f"⚡ inbox: {first}")
        return self._make_renderer()

    # -- permission questions ----------------------------------------------------------
    def guard_prompt(self, prompt: Callable[[Any], Any]) -> Callable[[Any], Any]:
        """Wrap the REPL's permission prompt: refuse (and say so) during an inbox turn."""

        def guarded(request: PermissionRequest) -> Any:
            if self.delivering:
                describe = getattr(request, "describe", None)
                what = describe() if callable(describe) else str(request)
                self._say(f"permission: {what} asked during an inbox turn: denied "
                          "(allow it in config.json to let inbox turns use it)")
                return "n"
            return prompt(request)

        return guarded

    # -- running -----------------------------------------------------------------------
    def start(self) -> None:
        """Poll in the background (the terminal REPL)."""
        async def begin() -> None:
            self.inbox.start()

        self.session.run_coroutine(begin()).result(timeout=CLOSE_TIMEOUT_SECONDS)

    def settle(self) -> bool:
        """The first fixed point of the piped REPL: wait until the transport is connected and has
        fetched what is waiting (NATS; at most ``CONNECT_WAIT_S``). False (and a line) when not."""
        from mnemara.peer.inbox import CONNECT_WAIT_S

        return bool(self.session.run_coroutine(self.inbox.settle(CONNECT_WAIT_S)).result())

    def step(self) -> None:
        """Poll once and deliver what is pending now (the piped REPL, between input lines)."""
        future = self.session.run_coroutine(self.inbox.step())
        try:
            future.result()
        except KeyboardInterrupt:
            self.session.request_stop()
            future.result()

    def close(self) -> None:
        """Stop polling; an inbox turn in flight is cancelled and its rows stay pending."""
        self._closing = True
        try:
            self.session.run_coroutine(self.inbox.aclose()).result(timeout=CLOSE_TIMEOUT_SECONDS)
        except Exception:  # leaving the REPL must not fail because the inbox did not stop cleanly
            pass

    @contextmanager
    def user_line(self) -> Iterator[None]:
        """Around one user input line: no inbox turn starts, and a running one is waited for."""
        self._user_active.set()
        try:
            # A barrier on the turn loop: an inbox delivery that checked idleness before the flag was
            # set has set session.busy by the time this runs (check and start happen without a pause).
            self.session.run_coroutine(asyncio.sleep(0)).result(timeout=CLOSE_TIMEOUT_SECONDS)
            if self.session.busy:
                self._say(WAIT_NOTICE)
                while self.session.busy:
                    time.sleep(0.05)
            yield
        finally:
            self._user_active.clear()
            self.inbox.wake()

    def stop_running_turn(self) -> bool:
        """Ctrl+C at the prompt: stop an inbox turn if one is running."""
        if self.delivering and self.session.request_stop():
            self._say("(stopping the inbox turn…)")
            return True
        return False


def stdout() -> TextIO:
    """The current ``sys.stdout`` (a prompt-toolkit proxy while the prompt is patched)."""
    return sys.stdout
