"""Fixtures shared by the chat panel's tests (imported by those test modules)."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable

import pytest
from textual import events
from textual.keys import _character_to_key

from mnemara.store.instance import Instance
from mnemara.ui.tui.app import MnemaraApp


@pytest.fixture
def instance(mnemara_home: Path) -> Instance:
    return Instance.create("panel")


@pytest.fixture
def make_app(instance: Instance):
    """Panels on ``instance`` with a real AgentSession each; sessions are closed at teardown."""
    made: list[MnemaraApp] = []

    def make() -> MnemaraApp:
        app = MnemaraApp(instance)
        made.append(app)
        return app

    yield make
    for app in made:
        app.session.close()


async def wait_for(pilot: Any, condition: Callable[[], Any], timeout: float = 60.0, what: str = "") -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        await pilot.pause(0.05)
    raise AssertionError(f"timed out waiting for {what or condition}")


def _key(char: str) -> str:
    if char == " ":
        return "space"
    return char if char.isalnum() else _character_to_key(char)


async def type_text(pilot: Any, text: str) -> None:
    """Type ``text`` into the focused widget, one key event per character, queued together the way a
    terminal delivers fast typing; the last key goes through ``pilot.press``, which returns once the
    screen has handled every key. (Pressing them one by one waits and redraws after each key: most
    of a panel test's CPU when it types a sentence.)"""
    if not text:
        return
    for char in text[:-1]:
        pilot.app.post_message(events.Key(_key(char), char))
    await pilot.press(_key(text[-1]))


def burst(app: Any, text: str) -> None:
    """Queue every key and then Ctrl+S at once, as the terminal driver does (no pauses between them)."""
    for char in text:
        app.post_message(events.Key(_key(char), char))
    app.post_message(events.Key("ctrl+s", None))
