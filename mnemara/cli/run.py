"""``mnemara run`` (chat panel, or the REPL with --no-tui) and ``mnemara demo``."""
from __future__ import annotations

import io
import os
import sys

import click

from mnemara.cli import main
from mnemara.cli.common import instance_option, open_instance


def _want_tui(no_tui: bool) -> bool:
    if no_tui or os.environ.get("MNEMARA_NO_TUI", "").strip() not in ("", "0"):
        return False
    return sys.stdin.isatty() and sys.stdout.isatty()


def _open_panel(instance, session) -> bool:
    """Run the Textual panel; False when it is not available (then the REPL runs)."""
    try:
        from mnemara.ui.tui.app import MnemaraApp
    except ImportError:
        return False
    session.warn_to_stderr = False  # stderr would tear the panel; it shows Notice events instead
    MnemaraApp(instance, session=session).run()
    return True


def _chat(instance, no_tui: bool, banner: str, auto: list[str] | None = None) -> int:
    from mnemara.session import AgentSession
    from mnemara.ui.repl import run_repl

    session = AgentSession(instance)
    for problem in session.gate.new_problems():  # bad regexes / policies: say so before anything runs
        print(f"warning: {problem}", file=sys.stderr)
    try:
        if auto is not None:
            return run_repl(session, stdin=io.StringIO("\n".join(auto) + "\n"), banner=banner)
        if _want_tui(no_tui) and _open_panel(instance, session):
            return 0
        return run_repl(session, banner=banner)
    finally:
        session.close()


@main.command()
@instance_option
@click.option("--no-tui", is_flag=True, help="Use the bare REPL instead of the chat panel (also MNEMARA_NO_TUI=1).")
def run(instance_name: str, no_tui: bool) -> None:
    """Chat with an instance: the chat panel, or the REPL (--no-tui, or stdin not a terminal).

    The REPL reads one message per line when stdin is not a terminal, prints the
    assistant's text to stdout and exits at end of input, so it can be scripted.
    """
    from mnemara.instance import run_lock

    inst = open_instance(instance_name)
    with run_lock(inst):
        code = _chat(inst, no_tui, f"mnemara: {instance_name} (/help for commands, /quit to leave)")
    sys.exit(code)


@main.command()
@click.option("--no-tui", is_flag=True, help="Use the bare REPL instead of the chat panel.")
@click.option("--auto", is_flag=True, help="Type the demo's messages for you and exit.")
def demo(no_tui: bool, auto: bool) -> None:
    """See the whole loop with no API key: a throwaway instance and a scripted model on 127.0.0.1.

    Everything but the model is real (the Claude Agent SDK, its CLI, the turn
    store, the tools). Nothing under $MNEMARA_HOME is touched.
    """
    from mnemara.demo import AUTO_MESSAGES, Demo

    with Demo() as d:
        banner = ("mnemara demo: a scripted model answers from 127.0.0.1; type anything "
                  "(three replies are scripted), /show to see the window, /quit to leave")
        code = _chat(d.instance, no_tui, banner, AUTO_MESSAGES if auto else None)
    sys.exit(code)
