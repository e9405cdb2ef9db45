"""The guided tour of ``mnemara demo``: its steps, and the scripted model that answers them.

:class:`Tour` is UI-neutral: the panel (or the REPL with ``--auto``) shows its
lines and puts each step's message in the input. :func:`respond` is the
scripted API's responder: it reads what the request carries (the user's words,
tool results, the system prompt, i.e. the role doc as it is on disk now) and
answers the step it recognises, so replies follow what you type.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from mnemara.testing.scripted_api import RecordedRequest, Reply, reply, text, tool_use

SIGN_OFF = re.compile(r"^Sign off as:\s*(.+?)\s*$", re.MULTILINE)
DEMO_NAME = "Demo Bot"

DEMO_ROLE = f"""# Demo role

You are Mnemara's demo agent. This file is the system prompt: it is re-read from
disk before every call to the model, so an edit counts from the next message on.

Sign off as: {DEMO_NAME}
"""

INTRO = ("Welcome to the Mnemara tour (5 steps, about 2 minutes). Everything here is real (the Claude Agent SDK, "
         "its CLI, the SQLite turn store, memory and search) except the model: a scripted stand-in on 127.0.0.1 "
         "answers. Each step puts a message in the input below: press Ctrl+S to send it (used to Enter from Claude "
         "Code? type /keys enter first). Typing a /command replaces the message; it comes back after.")

NEXT_STEPS = """Tour done. Next steps:
  1. export ANTHROPIC_API_KEY=sk-ant-...     (or see the README for signing in with the bundled CLI)
  2. mnemara init --instance mine
  3. mnemara role --instance mine --set examples/roles/sentinel.md
  4. mnemara run --instance mine
  Try your own role doc offline first: mnemara demo --serve (it prints the env to export).
  /quit leaves the demo; its throwaway instance is deleted."""


@dataclass(frozen=True)
class Step:
    intro: str
    message: str
    keyword: str  # what :func:`respond` recognises in the user's words


STEPS = (
    Step("Step 1/5 · permissions. The agent gets a real shell, so a Bash call asks you first. "
         "Send the message, then answer y (yes) in the prompt.", "Run date in the shell for me", "date"),
    Step("Step 2/5 · pinned slots: facts sent with every turn, whatever else the window holds.",
         "Pin my goal: finish the tour", "pin"),
    Step("Step 3/5 · memory: notes are Markdown files in memory/, indexed for search.",
         "Remember that my favourite editor is Helix", "remember"),
    Step("Step 4/5 · recall: rag_query finds the note again, by keywords and by meaning (vectors from the bundled "
         "local embedder: no server to run).",
         "Which editor do I like?", "which editor"),
    Step("Step 5/5 · the role doc is the system prompt, re-read before every call. Click 📄 Role (or type /role_doc), "
         f"change 'Sign off as: {DEMO_NAME}' to any name, Ctrl+S saves, Esc closes; then send the message.",
         "Sign off as the role doc says", "sign off"),
)


@dataclass
class Tour:
    """Where the user is in the tour; ``after_turn`` moves on when a step's message was sent."""

    steps: tuple[Step, ...] = STEPS
    index: int = 0
    log: list[str] = field(default_factory=list)

    @property
    def done(self) -> bool:
        return self.index >= len(self.steps)

    def start(self) -> tuple[list[str], str]:
        """Lines to show and the text to put in the input."""
        return [INTRO, self.steps[0].intro], self.steps[0].message

    def after_turn(self, sent: str) -> tuple[list[str], str]:
        """After a turn: the next step (or the same one again, or the end) as lines and input text."""
        if self.done:
            return [], ""
        if self.steps[self.index].keyword not in sent.lower():
            step = self.steps[self.index]
            return [f"(still at {step.intro.split(' · ')[0]}: its message is back in the input)"], step.message
        self.index += 1
        if self.done:
            return [NEXT_STEPS], ""
        step = self.steps[self.index]
        return [step.intro], step.message


# -- the scripted model ------------------------------------------------------------------


def _last_message(req: RecordedRequest) -> dict[str, Any]:
    messages = req.messages
    return messages[-1] if messages else {}


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [text(content)]
    return [b for b in content or [] if isinstance(b, dict)]


def _result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return str(content or "")


def _after_tool(req: RecordedRequest, result: dict[str, Any]) -> Reply:
    called = [b for m in req.messages[-2:-1] for b in _blocks(m) if b.get("type") == "tool_use"]
    name = str(called[-1].get("name", "")) if called else ""
    body = _result_text(result).split("<system-reminder>")[0].strip()  # the CLI appends its own reminders
    if name == "Bash":
        if result.get("is_error"):
            return reply("You said **no**: the model was told the call was denied, and nothing ran.")
        return reply(f"It printed `{body.splitlines()[0][:60] if body else ''}`. That was the permission prompt: Bash is set to *ask*, so you "
                     "decided. **a** allows such a command for good, **s** for this session, **n** refuses.")
    if name.endswith("upsert_slot"):
        return reply("Pinned as slot **goal**: it goes into every turn, before the rolling window. "
                     "💬 Context lists it under *pinned*.")
    if name.endswith("write_memory"):
        return reply("Saved in today's file under `memory/`: plain Markdown you can read, edit or grep.")
    if name.endswith("rag_query"):
        if "helix" in body.lower():
            return reply("Found it again with `rag_query`: you like **Helix** (from the note of step 3).")
        return reply("`rag_query` found nothing this time: " + body[:200])
    return reply(f"(the tool {name or '?'} answered)")


def respond(req: RecordedRequest) -> Reply:
    """The demo model: answers the tour's steps from the request itself."""
    last = _last_message(req)
    results = [b for b in _blocks(last) if b.get("type") == "tool_result"]
    if results:
        return _after_tool(req, results[-1])
    words = [b.get("text", "") for b in _blocks(last) if b.get("type") == "text"]
    said = (words[-1] if words else "").strip()
    low = said.lower()
    if "date" in low:
        return reply(text("Running `date` for you; Mnemara asks first."), tool_use("Bash", {"command": "date"}))
    if "pin" in low:
        return reply(tool_use("mcp__mnemara__upsert_slot",
                              {"label": "goal", "role": "user", "content": "Goal: finish the Mnemara tour"}))
    if "remember" in low:
        return reply(tool_use("mcp__mnemara__write_memory",
                              {"text": "The user's favourite editor is Helix.", "category": "preference"}))
    if "which editor" in low:
        return reply(tool_use("mcp__mnemara__rag_query", {"question": "favourite editor"}))
    if "sign off" in low:
        found = SIGN_OFF.search(req.system_text)
        name = found.group(1) if found else "(no 'Sign off as:' line in the role doc)"
        edited = "" if name != DEMO_NAME else "\n\n(It still says Demo Bot: edit it in 📄 Role and send again.)"
        return reply(f"I read the role doc fresh for this very call. It says:\n\n```text\nSign off as: {name}\n```\n\n"
                     f"So here I am, doing what it says.{edited}\n\n— **{name}**")
    quoted = json.dumps(said[:80], ensure_ascii=False)
    return reply(f"You said {quoted}. I'm a scripted stand-in, so I only know the tour's steps: the next one is in "
                 "the input (or /quit to leave).")
