"""``mnemara demo``: the whole loop with no API key, on a throwaway instance.

The Claude Agent SDK, the bundled Claude Code CLI, the turn store, the tools and
the REPL are all real; only the model is replaced by :mod:`mnemara.testing`'s
scripted Messages API on 127.0.0.1, answering from :func:`demo_script`.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from mnemara.config import update_config
from mnemara.instance import Instance
from mnemara.testing import Reply, ScriptedAPI, reply, text, tool_use

DEMO_ROLE = """# Demo role

You are Mnemara's demo agent. This file is the system prompt: it is re-read from
disk before every turn, so edit it while the demo runs and the next turn uses it.
"""

AUTO_MESSAGES = [
    "hello, what is this?",
    "please remember that I tried the demo",
    "keep track of my progress",
    "/show",
]


def demo_script(slot_tool: bool) -> list[Reply]:
    """The scripted answers, in the order the CLI will ask for them."""
    steps = [
        reply(text(
            "Hi! I'm a scripted stand-in for Claude, answering from 127.0.0.1. Everything else is real: "
            "the Claude Agent SDK, the Claude Code CLI, the SQLite turn store and the tools. This text "
            "streamed to you in small pieces.")),
        reply(text("I'll write that to memory."),
              tool_use("mcp__mnemara__write_memory", {"text": "The user tried the Mnemara demo.", "category": "demo"})),
        reply(text("Saved: it is a note in memory/ (today's file), same format as `mnemara note`.")),
    ]
    if slot_tool:
        steps += [
            reply(tool_use("mcp__mnemara__upsert_slot",
                           {"label": "demo-progress", "role": "user", "content": "demo: 3 of 3 steps done"})),
            reply(text("Pinned a slot called demo-progress: it is sent with every turn. Try /show.")),
        ]
    return steps


class Demo:
    """A scripted API plus a throwaway instance; a context manager that cleans both up."""

    def __init__(self) -> None:
        from mnemara.tools import all_specs

        self._tmp = tempfile.TemporaryDirectory(prefix="mnemara-demo-")
        root = Path(self._tmp.name)
        self.instance = Instance.at(root / "demo", name="demo")
        role = root / "demo-role.md"
        role.write_text(DEMO_ROLE, encoding="utf-8")
        update_config(self.instance.config_path, role_doc_path=str(role))
        has_slot_tool = any(spec.name == "upsert_slot" for spec in all_specs())
        self.api = ScriptedAPI(demo_script(has_slot_tool), default=reply(
            "(The demo script is finished. /show prints the window, /quit leaves; run `mnemara init` for a real instance.)"))
        self._saved_env: dict[str, str | None] = {}

    def __enter__(self) -> "Demo":
        self.api.start()
        for key, value in self.api.env().items():
            self._saved_env[key] = os.environ.get(key)
            os.environ[key] = value
        return self

    def __exit__(self, *exc: object) -> None:
        for key, value in self._saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        self.api.stop()
        self._tmp.cleanup()
