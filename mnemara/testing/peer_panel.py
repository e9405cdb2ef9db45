"""A headless peer panel for tests and benchmarks: a real :class:`~mnemara.peer.PeerInbox` and a real
``turns.sqlite``, with a stand-in for the model's turn.

A turn stores the inbox's message as a user row, waits ``turn_seconds`` (the model
at work), then stores an answer row carrying ``peer_delivered`` (the keys of the
messages it handled) in its meta, as an :class:`~mnemara.session.AgentSession`
does through the inbox's turn part. So a message that comes again after a crash
is recognised the same way.

As a process (the kill -9 tests and the benchmark)::

    python -m mnemara.testing.peer_panel ROOT CONFIG_JSON ROLE [--turn-seconds S]

prints ``ready`` once the NATS consumer is set up, ``start <keys>`` when a turn
starts and ``done <keys>`` when its answer is stored, each line flushed.
"""
from __future__ import annotations

import argparse
import asyncio
import inspect
import json
import sys
from pathlib import Path
from typing import Any, Callable

from mnemara.core.config import Config
from mnemara.peer.inbox import PeerInbox
from mnemara.store.turns import TurnStore

DELIVERED = "peer_delivered"


class StorePanel:
    def __init__(self, root: Path, config: Config, role: str, *, turn_seconds: float = 0.0,
                 on_event: Callable[[str, list[str]], Any] | None = None, fail_after_answer: int = 0) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.store = TurnStore(self.root / "turns.sqlite")
        self.turn_seconds = turn_seconds
        self.fail_after_answer = fail_after_answer  # the next N turns store their answer, then fail
        self._on_event = on_event or (lambda kind, keys: None)
        self.inbox = PeerInbox.from_config(config, role, deliver=self.deliver, instance_root=self.root,
                                           debug_log=self.root / "debug.log", delivered_keys=self.delivered)

    async def deliver(self, text: str) -> None:
        flight = self.inbox.in_flight
        keys = list(flight.keys) if flight is not None else []
        user_id = self.store.append("user", text)
        await self._event("start", keys)
        if self.turn_seconds:
            await asyncio.sleep(self.turn_seconds)
        self.store.append("assistant", "handled", {"user_row_id": user_id, DELIVERED: keys})
        await self._event("done", keys)
        if self.fail_after_answer:
            self.fail_after_answer -= 1
            raise RuntimeError("the turn's answer is stored but the panel failed before the ack")

    async def _event(self, kind: str, keys: list[str]) -> None:
        if inspect.isawaitable(waited := self._on_event(kind, keys)):
            await waited  # a test acts inside the turn (drops the server, waits for the panel to notice)

    def delivered(self, keys: list[str]) -> set[str]:
        return self.store.meta_list_values(DELIVERED, keys)

    def answers(self) -> list[list[str]]:
        """The message keys of each stored answer, oldest first."""
        return [list(t.meta.get(DELIVERED, [])) for t in self.store.history() if t.role == "assistant"]

    async def aclose(self) -> None:
        await self.inbox.aclose()
        self.store.close()


async def _serve(root: Path, config: Config, role: str, turn_seconds: float) -> None:
    def emit(kind: str, keys: list[str]) -> None:
        print(kind, " ".join(keys), flush=True)

    panel = StorePanel(root, config, role, turn_seconds=turn_seconds, on_event=emit)
    panel.inbox.start()
    feed = panel.inbox.feed
    if feed is not None and await feed.wait_ready(30):
        print("ready", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await panel.aclose()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("root", type=Path)
    parser.add_argument("config_json")
    parser.add_argument("role")
    parser.add_argument("--turn-seconds", type=float, default=0.0)
    args = parser.parse_args(argv)
    config = Config.from_dict(json.loads(args.config_json))
    try:
        asyncio.run(_serve(args.root, config, args.role, args.turn_seconds))
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
