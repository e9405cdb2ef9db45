"""What one turn in flight has gathered so far; the session's steps hand it along."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from mnemara import events as ev
from mnemara.config import Config

if TYPE_CHECKING:
    from mnemara.api_faults import StallWatch
    from mnemara.cli_process import CliHandle
    from mnemara.sdk_bridge import TurnCollector
    from mnemara.sentinel import SentinelWatch


@dataclass
class RunningTurn:
    """One turn: its stored user row, the config and system prompt it runs with, what came back."""

    user_id: int
    cfg: Config
    system_prompt: str
    collector: TurnCollector
    watch: SentinelWatch | None = None  # the runtime sentinel, when runtime_sentinel is on
    handle: CliHandle | None = None  # the CLI process serving it
    failure: ev.ErrorEvent | None = None
    interrupted: bool = False
    stall: StallWatch | None = None  # ends the turn when the API goes silent (api_stall_seconds)

    @property
    def stderr(self) -> list[str]:
        return self.handle.stderr if self.handle is not None else []
