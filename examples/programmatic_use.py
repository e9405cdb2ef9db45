"""Embed Mnemara in your own Python: an instance, a role doc, one turn, the window.

    ANTHROPIC_API_KEY=sk-ant-... python examples/programmatic_use.py "What is a rolling window?"

The instance lives under $MNEMARA_HOME (default ~/.mnemara) as `embedded-example`;
run the script again and the new turn sees the earlier ones in its window.
To try it without a key, point ANTHROPIC_BASE_URL at a `mnemara.testing.ScriptedAPI`.
"""
from __future__ import annotations

import sys

from mnemara import AgentSession, Instance, InstanceNotFound, events, update_config

NAME = "embedded-example"
ROLE = """You are a concise assistant embedded in a Python program.
Answer in at most three sentences. When you learn something worth keeping,
call write_memory with a one-line note.
"""


def open_or_create(name: str) -> Instance:
    try:
        return Instance.open(name)
    except InstanceNotFound:
        return Instance.create(name)


def main(question: str) -> int:
    instance = open_or_create(NAME)
    role_path = instance.root / "role.md"
    role_path.write_text(ROLE, encoding="utf-8")  # re-read from disk before every turn
    update_config(instance.config_path, role_doc_path=str(role_path), max_window_turns=10)

    with AgentSession(instance) as session:
        def show(event: events.Event) -> None:
            if isinstance(event, events.TextDelta):
                print(event.text, end="", flush=True)
            elif isinstance(event, events.ToolUse):
                print(f"\n[tool] {event.name} {event.input}")
            elif isinstance(event, events.ErrorEvent):
                print(f"\n[error] {event.message}", file=sys.stderr)

        result = session.turn(question, on_event=show)
        done = result.done
        print(f"\n\n-- turn done: cost ${done.cost_usd or 0:.6f}, interrupted={done.interrupted}")

        print("-- rolling window (what the next turn will see):")
        window = session.window()
        for turn in [*window.pinned, *window.rows]:
            print(f"[{turn.id}] {turn.role}: {turn.text[:100]!r}")
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main(" ".join(sys.argv[1:]) or "Hello! Who are you?"))
