"""``mnemara demo``: a guided tour with no API key, on a throwaway instance.

The Claude Agent SDK, the bundled Claude Code CLI, the turn store, the tools and
the panel are all real; only the model is replaced by :mod:`mnemara.testing.scripted_api`'s
scripted Messages API on 127.0.0.1, answering through
:func:`mnemara.demo.script.respond` (the tour's steps are in that module too).
"""
from __future__ import annotations

import io
import os
import sys
import tempfile
from pathlib import Path
from typing import Callable, TextIO

from mnemara.core.config import update_config
from mnemara.demo.script import DEMO_NAME, DEMO_ROLE, STEPS, respond
from mnemara.store.instance import Instance
from mnemara.testing.scripted_api import ScriptedAPI

AUTO_NAME = "Auto Tourist"


def auto_lines() -> list[str]:
    """What ``--auto`` types: every step's message, ``y`` for the permission prompt, then ``/show``."""
    lines = [STEPS[0].message, "y"]
    lines += [step.message for step in STEPS[1:]]
    return [*lines, "/show"]


class EchoInput(io.StringIO):
    """The ``--auto`` input: every line read is printed as if typed; ``before`` runs hooks keyed by line."""

    def __init__(self, lines: list[str], out: TextIO, before: dict[str, Callable[[], str]] | None = None) -> None:
        super().__init__("\n".join(lines) + "\n")
        self.out = out
        self.before = before or {}

    def readline(self, size: int | None = -1) -> str:  # type: ignore[override]  # StringIO takes int; None is read as -1
        line = super().readline(-1 if size is None else size)
        if line:
            hook = self.before.get(line.rstrip("\n"))
            if hook is not None:
                self.out.write(hook() + "\n")
            self.out.write(f"you> {line.rstrip()}\n")
            self.out.flush()
        return line


class Demo:
    """A scripted API plus a throwaway instance; a context manager that cleans both up."""

    def __init__(self) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="mnemara-demo-")
        root = Path(self._tmp.name)
        self.instance = Instance.at(root / "demo", name="demo")
        self.role_path = root / "demo-role.md"
        self.role_path.write_text(DEMO_ROLE, encoding="utf-8")
        update_config(self.instance.config_path, role_doc_path=str(self.role_path))
        self.api = ScriptedAPI(responder=respond)
        self._saved_env: dict[str, str | None] = {}

    def edit_role_for_auto(self) -> str:
        """``--auto`` stands in for the user at step 5: the role doc file is edited on disk, as 📄 Role would."""
        text = self.role_path.read_text(encoding="utf-8").replace(f"Sign off as: {DEMO_NAME}", f"Sign off as: {AUTO_NAME}")
        self.role_path.write_text(text, encoding="utf-8")
        return f"(tour: the role doc now says 'Sign off as: {AUTO_NAME}'; in the panel you edit it in 📄 Role)"

    def auto_input(self, out: TextIO | None = None) -> EchoInput:
        return EchoInput(auto_lines(), out or sys.stdout, before={STEPS[-1].message: self.edit_role_for_auto})

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
